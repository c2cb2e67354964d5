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

    def widened(self, by: float) -> "Interval":
        """The same median with `by` more on each side (a clock's tick: clock_tick_us)."""
        return Interval(self.median, self.lo - by, self.hi + by) if by > 0 else self

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
TICKS_NS = (64, 32, 16, 8)     # candidate clock ticks; below 8 ns a tick is lost in 1 ns rounding
ON_TICK = 0.9                  # the share of durations within 2 ns of a multiple that names the tick


def clock_tick_us(durations_us: Any) -> float:
    """The tick of the clock that timed these durations (µs), 0 when none shows.

    Kernel durations from a GPU's timestamps step by its timer's tick (32 ns in the H100 and H200
    runs here; stored to 1 ns, and a long kernel's may be rescaled off the grid). A median of such
    durations lies within one tick of the true one, while a bootstrap interval over identical ticks
    has no width at all: an interval is widened by one tick each side before the rule judges it, so
    a one-tick difference on a 1 µs kernel is within noise, not a finding."""
    ns = np.round(np.asarray(durations_us, dtype=float) * 1000.0)
    ns = ns[np.isfinite(ns) & (ns > 0)]
    if len(ns) < 20:
        return 0.0
    for tick in TICKS_NS:
        off = np.mod(ns, tick)
        if float(np.mean(np.minimum(off, tick - off) <= 2)) >= ON_TICK:
            return tick / 1000.0
    return 0.0


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
