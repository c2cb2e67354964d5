"""How many table calls per cell a profile run needs, from the per-call spread of fixed runs.

Why: under Nsight Compute every profiled kernel costs tens of milliseconds per replay pass, so
the calls profiled per cell are most of a profile's time. A layer-B cell is the median over its
calls (analysis.calls), one call per table, and tables differ (each its own hot set and L2
state), so fewer calls move the median; how far is read from runs that profiled every call.

The rule (docs/layer-b.md#calls-per-cell): a count c is enough when, in every fixed run given,
the median of each cell's last c calls (the calls `ladder --nvtx-last c` profiles) lies inside
that cell's 95 % interval of the median over all its calls (measure.stats.bootstrap_median_ci,
the interval layer A reports) for at least `coverage` of the (cell, quantity) pairs: a 95 %
interval leaves out about one value in twenty by its own definition. The answer is the
smallest such c; with none below the calls the runs hold, it is all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from l2attr.measure.stats import bootstrap_median_ci

COVERAGE = 0.95


@dataclass(frozen=True)
class CallsVerdict:
    """The smallest count that holds, and per count and run the share of pairs outside."""

    calls: int
    outside: dict[int, list[float]] = field(default_factory=dict)   # count -> share per run
    pairs: list[int] = field(default_factory=list)                  # (cell, quantity) pairs per run

    def describe(self) -> str:
        rows = [f"{c} calls: outside {', '.join(f'{100 * s:.1f} %' for s in shares)}"
                for c, shares in sorted(self.outside.items())]
        return f"{self.calls} calls per cell ({'; '.join(rows)}; pairs per run {self.pairs})"


def _outside(calls: pd.DataFrame, keys: Sequence[str], quantities: Sequence[str],
             counts: Sequence[int]) -> tuple[dict[int, float], int]:
    """Per count: the share of (cell, quantity) pairs whose last-c median leaves the full interval."""
    misses = {c: 0 for c in counts}
    pairs = 0
    for _, cell in calls.groupby(list(keys), dropna=False, sort=False):
        cell = cell.sort_values("table")
        for q in quantities:
            if q not in cell:
                continue
            values = cell[q].astype(float).dropna().to_numpy()
            if values.size < max(counts):
                continue
            lo, hi = bootstrap_median_ci(values)
            pairs += 1
            for c in counts:
                sub = float(np.median(values[-c:]))
                misses[c] += not (lo <= sub <= hi)
    return {c: (misses[c] / pairs if pairs else 0.0) for c in counts}, pairs


def calls_needed(runs: Sequence[pd.DataFrame], keys: Sequence[str], quantities: Sequence[str],
                 coverage: float = COVERAGE) -> CallsVerdict:
    """The fewest calls per cell that every run's per-call spread allows (see the module text).

    `runs`: one call table per fixed run (a row per call with `keys`, `table` and the
    quantities); cells with fewer calls than the runs' smallest full count are left out."""
    if not runs:
        raise ValueError("no runs to derive a call count from")
    full = min(int(r.groupby(list(keys), dropna=False).size().max()) for r in runs)
    counts = list(range(1, full + 1))
    outside: dict[int, list[float]] = {c: [] for c in counts}
    pairs: list[int] = []
    for run in runs:
        shares, n = _outside(run, keys, quantities, counts)
        pairs.append(n)
        for c in counts:
            outside[c].append(shares[c])
    limit = 1.0 - coverage
    chosen = next((c for c in counts if all(s <= limit for s in outside[c])), full)
    return CallsVerdict(chosen, outside, pairs)
