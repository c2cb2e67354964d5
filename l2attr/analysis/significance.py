"""The one significance rule behind every judgement word ("pays", "saves", "breaks even").

Two medians differ only when their 95 % bootstrap intervals do not overlap and, when the two
come from different processes, their gap also exceeds the cross-process spread (the spread
between repeats inside one process understates what a second run would show). Everything else
is "within noise". The ratio's interval is the quotient of the two intervals' ends (a
conservative bound: it excludes 1 exactly when the intervals are disjoint).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from l2attr.measure.stats import bootstrap_median_ci
from l2attr.vocab import Judgement


@dataclass(frozen=True)
class Interval:
    """A median with its 95 % interval."""

    median: float
    lo: float
    hi: float

    @property
    def valid(self) -> bool:
        return all(math.isfinite(x) for x in (self.median, self.lo, self.hi)) and self.median > 0

    @classmethod
    def of(cls, values: Any) -> "Interval":
        """The median of some samples and the one summariser's interval of it (measure/stats.py);
        all NaN for no samples."""
        x = np.asarray(values, dtype=float)
        if not len(x):
            return cls(math.nan, math.nan, math.nan)
        return cls(float(np.median(x)), *bootstrap_median_ci(x))


@dataclass(frozen=True)
class Judged:
    """base / new as a speedup (> 1: new is faster), its interval, and the rule's word."""

    speedup: float
    lo: float
    hi: float
    judgement: Judgement

    @property
    def significant(self) -> bool:
        return self.judgement in (Judgement.FASTER, Judgement.SLOWER)


NAN = float("nan")


def compare(base: Interval, new: Interval, cross_process_spread: float = 0.0) -> Judged:
    """Is `new` faster than `base`? `cross_process_spread`: relative spread between processes
    (0 when both arms were measured in one process, interleaved)."""
    if not (base.valid and new.valid):
        return Judged(NAN, NAN, NAN, Judgement.NOT_MEASURED)
    speedup = base.median / new.median
    lo, hi = base.lo / new.hi, base.hi / new.lo
    disjoint = base.lo > new.hi or base.hi < new.lo
    beyond_spread = abs(base.median - new.median) > cross_process_spread * base.median
    if not (disjoint and beyond_spread):
        return Judged(speedup, lo, hi, Judgement.WITHIN_NOISE)
    return Judged(speedup, lo, hi, Judgement.FASTER if speedup > 1 else Judgement.SLOWER)
