"""Repeats as rounds over cells, fixed or adaptive: the one loop the ladder, experiments and
sweeps share (a ladder cell, an experiment's condition, a sweep point with its arms).

Why one place: the order is the measurement's defence against drift. In a round every cell still
running gets one device repeat, then (with host repeats) every one of them one host repeat, in
the declared cell order, so a slow change of the GPU touches every cell alike. A fixed run does
`repeats` rounds; an adaptive one (measure/adaptive.py) runs rounds until each cell's interval
has closed or it reached a limit, dropping finished cells from the later rounds. Repeat indices
are those of the callers' repeat plans (device 2r, host 2r + 1), so a resume skips what is on
disk either way. What a cell's kernel-timed values are is the caller's (`values`).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Hashable

import pandas as pd

from l2attr.measure.adaptive import AdaptiveRounds, AdaptiveRule
from l2attr.vocab import RepeatStop

# the ladder's kernel-timed columns whose 95 % interval the adaptive rule waits for
KERNEL_COLUMNS = ("consumer_time_us", "pin_time_us")
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
                   values: Values = column_values()) -> dict[Hashable, RepeatStop | None]:
    """Run the rounds; `run_one(cell, repeat, device_timed)` measures one repeat (None when it is
    on disk already: `on_disk(cell, repeat)` then gives its rows for the adaptive rule);
    `write_round` gets each half-round's frames; `values` reads a device repeat's kernel-timed
    values (quantity -> values) from its frame. Returns each cell's stop (None: a fixed run)."""
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
                t0 = time.perf_counter()
                frame = _one(run_one, c, repeat, device_timed, advance)
                took = time.perf_counter() - t0
                planned[c] -= 1
                if frame is None:
                    frame = on_disk(c, repeat)
                else:
                    frames.append(frame)
                kept = values(frame) if device_timed and frame is not None else {}
                rounds.add(c, kept, took, counts_as_repeat=device_timed)
            write_round(frames)
        rounds.end_round()
    advance(sum(planned.values()))     # the repeats a finished cell did not need
    return {c: rounds.stop_of(c) for c in cells}


def _one(run_one: Callable[[Hashable, int, bool], pd.DataFrame | None], cell: Hashable, repeat: int,
         device_timed: bool, advance: Callable[[int], Any]) -> pd.DataFrame | None:
    frame = run_one(cell, repeat, device_timed)
    advance(1)
    return frame
