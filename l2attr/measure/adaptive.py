"""Repeats as rounds over cells, fixed or adaptive, and the adaptive rule: a cell stops when its
median is known well enough, the same rule for every caller (ladder cells, sweep points,
experiment conditions). Why one module: the rounds are the only caller of the rule, and the rule
decides what each round runs.

Why: a fixed repeat count spends most of a run's time on cells whose interval closed after the
first repeats. The rule, as nvbench's (a relative-noise target with minimum and maximum of
samples and time): after each round a cell stops once its 95 % interval of the median (the
bootstrap interval cells.csv reports, measure/stats.py) has a half-width ≤ `target_rel` × its
median, for every kernel-timed quantity it measures (the consumer, and the producer when there
is one: the host-clock quantities ride along in the alternating host repeats and are not
waited for, their spread is the host's, not the kernel's). It never stops before `min_repeats`
and stops at `max_repeats` or once it has used `max_seconds`, then marked `limit` (noisy:
stopped at the limit). Interleaving stays: every round runs one repeat of each unfinished cell
in the usual order, so drift touches every cell alike. Repeats go only where an interval is still
wide: a cell kept running by its kernel interval takes the round's host repeat too only while a
host-clock quantity's interval is wider than the target (the ladder: `host_values`), so a pin cell
whose pin interval needs six device repeats does not take six host repeats its wall-charged
figures no longer need.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable

import numpy as np
import pandas as pd

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
    host: dict[str, list[float]] = field(default_factory=dict)      # host-clock values, host repeats
    host_repeats: int = 0


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
        into = s.values if counts_as_repeat else s.host
        for quantity, vals in values.items():
            into.setdefault(quantity, []).extend(float(x) for x in vals)
        s.seconds += seconds
        s.repeats += int(counts_as_repeat)
        s.host_repeats += int(not counts_as_repeat)

    def host_wide(self, cell: Hashable) -> bool:
        """Whether a cell's next host repeat is worth its time: none yet, or a host-clock quantity
        whose interval is still wider than the target (none recorded: always, as before)."""
        s = self.cells[cell]
        widths = [half_width_rel(v) for v in s.host.values() if any(x == x for x in v)]
        return s.host_repeats == 0 or not widths or max(widths) > self.rule.target_rel

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
        return {str(c): {"repeats": s.repeats, "host_repeats": s.host_repeats, "seconds": round(s.seconds, 3),
                         "half_width_rel": s.half_width if math.isfinite(s.half_width) else None,
                         "stop": s.stop.value if s.stop else ""} for c, s in self.cells.items()}


# -- the rounds ----------------------------------------------------------------------------------
# The one loop the ladder, experiments and sweeps share (a ladder cell, an experiment's condition,
# a sweep point with its arms). Why one place: the order is the measurement's defence against
# drift. In a round every cell still running gets one device repeat, then (with host repeats) every
# one of them one host repeat, in the declared cell order, so a slow change of the GPU touches every
# cell alike. A fixed run does `repeats` rounds; an adaptive one runs rounds until each cell's
# interval has closed or it reached a limit, dropping finished cells from the later rounds. Repeat
# indices are those of the callers' repeat plans (device 2r, host 2r + 1), so a resume skips what is
# on disk either way. What a cell's kernel-timed values are is the caller's (`values`).

# the ladder's kernel-timed columns whose 95 % interval the adaptive rule waits for, and the
# host-clock ones a host repeat measures (a cell still running takes another host repeat only while
# one of these is wider than the target: the kernel interval alone keeps a cell running)
KERNEL_COLUMNS = ("consumer_time_us", "pin_time_us")
HOST_COLUMNS = ("call_wall_time_us", "consumer_artifact_time_us")
Values = Callable[[pd.DataFrame], dict[str, list[float]]]


def column_values(columns: tuple[str, ...] = KERNEL_COLUMNS) -> Values:
    """The kernel-timed values of a repeat's frame: these columns, NaN left out."""
    def values(frame: pd.DataFrame) -> dict[str, list[float]]:
        return {c: frame[c].astype(float).dropna().tolist() for c in columns if c in frame}
    return values


def measure_rounds(cells: list[Hashable], plan: list[tuple[int, bool]],
                   run_one: Callable[[Hashable, int, bool], pd.DataFrame | None],
                   write_round: Callable[[list[pd.DataFrame]], None],
                   rule: AdaptiveRule | None = None,
                   on_disk: Callable[[Hashable, int], pd.DataFrame | None] = lambda c, r: None,
                   advance: Callable[[int], Any] = lambda n: None,
                   values: Values = column_values(),
                   host_values: Values | None = None) -> dict[Hashable, RepeatStop | None]:
    """Run the rounds; `run_one(cell, repeat, device_timed)` measures one repeat (None when it is
    on disk already: `on_disk(cell, repeat)` then gives its rows for the adaptive rule);
    `write_round` gets each half-round's frames; `values` reads a device repeat's kernel-timed
    values (quantity -> values) from its frame. With `host_values` (its host-clock values from a
    host repeat's frame), an adaptive cell takes its host repeat of a later round only while those
    are still wide (AdaptiveRounds.host_wide); without, every round. Returns each cell's stop
    (None: a fixed run)."""
    if rule is None:
        for repeat, device_timed in plan:
            write_round([f for c in cells if (f := _one(run_one, c, repeat, device_timed, advance)) is not None])
        return {c: None for c in cells}
    per_round = 2 if any(not d for _, d in plan[:2]) else 1
    rounds = AdaptiveRounds(rule, cells)
    planned = {c: rule.max_repeats * per_round for c in cells}
    for r in range(rule.max_repeats):
        todo = rounds.unfinished()
        if not todo:
            break
        for k in range(per_round):
            repeat, device_timed = r * per_round + k, k == 0
            frames = []
            for c in todo:
                if not device_timed and host_values is not None and not rounds.host_wide(c):
                    continue          # its host interval is closed: the repeat is left to the cells that need it
                t0 = time.perf_counter()
                frame = _one(run_one, c, repeat, device_timed, advance)
                took = time.perf_counter() - t0
                planned[c] -= 1
                if frame is None:
                    frame = on_disk(c, repeat)
                else:
                    frames.append(frame)
                read = values if device_timed else (host_values or (lambda f: {}))
                rounds.add(c, read(frame) if frame is not None else {}, took, counts_as_repeat=device_timed)
            write_round(frames)
        rounds.end_round()
    advance(sum(planned.values()))     # the repeats a finished cell did not need
    return {c: rounds.stop_of(c) for c in cells}


def _one(run_one: Callable[[Hashable, int, bool], pd.DataFrame | None], cell: Hashable, repeat: int,
         device_timed: bool, advance: Callable[[int], Any]) -> pd.DataFrame | None:
    frame = run_one(cell, repeat, device_timed)
    advance(1)
    return frame
