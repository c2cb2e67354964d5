"""Which noise a comparison of two cells is judged against: within one process or across two.

The spread between repeats inside one process (analysis/spread.py) understates what a second
process shows (the H200 runs: 10 of 44 consumer cells moved further between two processes than
between repeats). So a comparison of two cells that different runs measured is judged by the
one significance rule with the *cross-process* spread as its noise: the largest relative
difference between two runs' medians of the same cell, per quantity and timer, over every pair
of runs in the study that measured common cells (analysis/compare.py). Where the study holds no
such pair the cross-process spread is unknown, and a cross-process comparison is within noise
("cross-process spread not measured"): it is never judged by the within-process spread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from l2attr.analysis.significance import Interval, Judged, compare
from l2attr.vocab import Judgement

NAN = float("nan")
NOT_MEASURED = "cross-process spread not measured (no two runs of these cells measured a cell in common)"


@dataclass(frozen=True)
class CrossProcess:
    """Per (quantity, timer): the largest |difference| (fraction) between two runs' medians of one
    cell, with the pairs of runs it was taken over; empty when no runs overlap."""

    spread: dict[tuple[str, str], float]
    pairs: tuple[tuple[str, str], ...] = ()

    def of(self, quantity: str, timer: str) -> float:
        """The fraction, NaN when no pair of runs measured this quantity on this timer."""
        return self.spread.get((str(quantity), str(timer)), NAN)

    def text(self, quantity: str, timer: str) -> str:
        value = self.of(quantity, timer)
        if math.isnan(value):
            return NOT_MEASURED
        return f"the cross-process spread, {100 * value:.2f} %"


NONE = CrossProcess({})


def cross_process(summary: pd.DataFrame) -> CrossProcess:
    """From analysis.compare.compare_summary: the worst |difference| per (quantity, timer)."""
    if summary is None or summary.empty:
        return NONE
    spread: dict[tuple[str, str], float] = {}
    for (quantity, timer), g in summary.groupby(["quantity", "timer"], sort=False):
        spread[(str(quantity), str(timer))] = float(g["max_abs_diff_pct"].max()) / 100.0
    pairs = tuple(dict.fromkeys(zip(summary["used_run"].astype(str), summary["run"].astype(str))))
    return CrossProcess(spread, pairs)


@dataclass(frozen=True)
class Verdict:
    """A judged comparison and the noise it was judged against (said in words)."""

    judged: Judged
    noise: str           # "within-process repeats" or the cross-process wording
    cross: bool          # the two cells come from different runs

    @property
    def word(self) -> str:
        return self.judged.judgement.value


def judge(base: Interval, new: Interval, base_run: Any, new_run: Any, quantity: str, timer: str,
          xp: CrossProcess = NONE) -> Verdict:
    """The one rule (significance.compare); when the two cells are of different runs, the noise is
    the cross-process spread of that quantity and timer, and unknown means within noise."""
    cross = bool(base_run) and bool(new_run) and str(base_run) != str(new_run)
    if not cross:
        return Verdict(compare(base, new), "between repeats within one process (95 % intervals)", False)
    spread = xp.of(quantity, timer)
    if math.isnan(spread):
        j = compare(base, new)
        if j.judgement in (Judgement.FASTER, Judgement.SLOWER):
            j = Judged(j.speedup, j.lo, j.hi, Judgement.WITHIN_NOISE)
        return Verdict(j, NOT_MEASURED, True)
    return Verdict(compare(base, new, spread), xp.text(quantity, timer), True)
