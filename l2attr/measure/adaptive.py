"""Adaptive repeats: a cell stops when its median is known well enough, the same rule for every
caller (ladder cells, sweep points, experiment conditions).

Why: a fixed repeat count spends most of a run's time on cells whose interval closed after the
first repeats. The rule, as nvbench's (a relative-noise target with minimum and maximum of
samples and time): after each round a cell stops once its 95 % interval of the median (the
bootstrap interval cells.csv reports, measure/stats.py) has a half-width ≤ `target_rel` × its
median, for every kernel-timed quantity it measures (the consumer, and the producer when there
is one: the host-clock quantities ride along in the alternating host repeats and are not
waited for, their spread is the host's, not the kernel's). It never stops before `min_repeats`
and stops at `max_repeats` or once it has used `max_seconds`, then marked `limit` (noisy:
stopped at the limit). Interleaving stays: every round runs one repeat of each unfinished cell
in the usual order, so drift touches every cell alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Hashable, Iterable

import numpy as np

from l2attr.measure.stats import bootstrap_median_ci
from l2attr.vocab import RepeatStop


@dataclass(frozen=True)
class AdaptiveRule:
    target_rel: float = 0.005      # half-width of the 95 % interval / median
    min_repeats: int = 2
    max_repeats: int = 12
    max_seconds: float = 10.0      # per cell: the time its repeats took

    def __post_init__(self) -> None:
        if not (0 < self.target_rel < 1):
            raise ValueError("target_rel must be in (0, 1)")
        if not (1 <= self.min_repeats <= self.max_repeats):
            raise ValueError("need 1 <= min_repeats <= max_repeats")
        if not self.max_seconds > 0:
            raise ValueError("max_seconds must be > 0")

    def manifest(self) -> dict[str, float | int]:
        return {"target_rel": self.target_rel, "min_repeats": self.min_repeats,
                "max_repeats": self.max_repeats, "max_seconds": self.max_seconds}


# the ladder's defaults (`l2attr ladder` without --repeats). One repeat may be enough: a ladder
# repeat holds every call of the run's batches for each table (over a hundred kernel-timed samples
# per cell), so a quiet cell's interval is often closed after it; a cell whose interval is not
# keeps running, and a fixed run (--repeats N) stays the reproduction's call.
LADDER_DEFAULT = AdaptiveRule(target_rel=0.005, min_repeats=1, max_repeats=12, max_seconds=3.0)


def half_width_rel(values: Iterable[float]) -> float:
    """Half-width of the bootstrap 95 % interval of the median over its median (inf when unknown)."""
    v = np.asarray(list(values), dtype=float)
    v = v[~np.isnan(v)]
    if v.size < 2:
        return math.inf
    med = float(np.median(v))
    if not med > 0:
        return math.inf
    lo, hi = bootstrap_median_ci(v)
    return (hi - lo) / 2 / med


@dataclass
class _Cell:
    repeats: int = 0
    seconds: float = 0.0
    values: dict[str, list[float]] = field(default_factory=dict)
    stop: RepeatStop | None = None
    half_width: float = math.inf


class AdaptiveRounds:
    """Which cells still run, round after round. `add` after each repeat of a cell with the
    kernel-timed values it kept (quantity -> values) and the seconds it took; `end_round` decides
    who stops; `unfinished` keeps the callers' order."""

    def __init__(self, rule: AdaptiveRule, cells: Iterable[Hashable]) -> None:
        self.rule = rule
        self.cells: dict[Hashable, _Cell] = {c: _Cell() for c in cells}

    def unfinished(self) -> list[Hashable]:
        return [c for c, s in self.cells.items() if s.stop is None]

    def done(self) -> bool:
        return not self.unfinished()

    def add(self, cell: Hashable, values: dict[str, Iterable[float]], seconds: float,
            counts_as_repeat: bool = True) -> None:
        s = self.cells[cell]
        for quantity, vals in values.items():
            s.values.setdefault(quantity, []).extend(float(x) for x in vals)
        s.seconds += seconds
        s.repeats += int(counts_as_repeat)

    def end_round(self) -> None:
        rule = self.rule
        for s in self.cells.values():
            if s.stop is not None:
                continue
            widths = [half_width_rel(v) for v in s.values.values() if any(x == x for x in v)]
            s.half_width = max(widths) if widths else math.inf
            if s.repeats >= rule.min_repeats and s.half_width <= rule.target_rel:
                s.stop = RepeatStop.TARGET
            elif s.repeats >= rule.max_repeats or s.seconds >= rule.max_seconds:
                s.stop = RepeatStop.LIMIT

    def stop_of(self, cell: Hashable) -> RepeatStop | None:
        return self.cells[cell].stop

    def record(self) -> dict[str, dict[str, float | int | str]]:
        """Per cell (its str key): repeats, seconds, the last half-width and why it stopped."""
        return {str(c): {"repeats": s.repeats, "seconds": round(s.seconds, 3),
                         "half_width_rel": s.half_width if math.isfinite(s.half_width) else None,
                         "stop": s.stop.value if s.stop else ""} for c, s in self.cells.items()}
