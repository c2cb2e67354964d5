"""samples.csv as the run writes it, and cells.csv made from it once the timing is over.

Why its own module: the run used to append every repeat on its own (one fsync'd write each,
312 for the default ladder), re-read the whole growing samples.csv after each profile and
rewrite cells.csv once per cell, all between profiles while the GPU sat idle. Now a round
(one repeat of every variant of a profile and L2 state) is one append; the rows stay in
memory too, so the summaries need no re-read; and every cell is summarised once, after the
last timed kernel, on a few threads (numpy's bootstrap releases the GIL). The numbers are the
ones `summarize_cell` always gave: the same samples in, the same function.

A crash loses at most the round it was in; `--resume` re-measures it (complete repeats on disk
are skipped, as before).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable

import pandas as pd

from l2attr.measure.stats import CELL_KEYS, summarize_cell
from l2attr.rundir import RunDir
from l2attr.schema import CELLS, SAMPLES

CellKey = tuple[str, str, str, str, str]


def summary_workers() -> int:
    """Threads for the summaries: a few, never more than the machine has."""
    return max(1, min(8, os.cpu_count() or 1))


class SampleJournal:
    """The run's samples: those on disk when it started (a resume) and each round appended since."""

    def __init__(self, run: RunDir) -> None:
        self.run = run
        self.frames: list[pd.DataFrame] = [run.read(SAMPLES)] if run.has(SAMPLES) else []

    def append(self, frames: Iterable[pd.DataFrame]) -> None:
        """One round's repeats: one write to samples.csv, kept in memory for the summaries."""
        frames = [f for f in frames if len(f)]
        if not frames:
            return
        rows = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        self.run.append(SAMPLES, rows)
        self.frames.append(rows)

    def samples(self) -> pd.DataFrame:
        return pd.concat(self.frames, ignore_index=True) if self.frames else pd.DataFrame(columns=list(SAMPLES.columns))

    def repeat_rows(self, cell: tuple[str, ...], repeat: int) -> pd.DataFrame:
        """The rows of one repeat of one cell (CELL_KEYS order): a resumed adaptive run's rule
        counts the repeats already on disk."""
        s = self.samples()
        mask = s["repeat"] == repeat
        for k, v in zip(CELL_KEYS, cell):
            mask &= s[k].astype(str) == str(v)
        return s[mask]


def cell_key(samples: pd.DataFrame) -> CellKey:
    return tuple(str(samples[k].iloc[0]) for k in CELL_KEYS)  # type: ignore[return-value]


def summarize_cells(samples: pd.DataFrame, order: list[CellKey], bytes_per_call: int,
                    workers: int | None = None) -> pd.DataFrame:
    """CELLS rows of every cell in `order` that has samples, in that order."""
    if samples.empty:
        return pd.DataFrame(columns=list(CELLS.columns))
    groups = {tuple(str(x) for x in k): g for k, g in samples.groupby(list(CELL_KEYS), sort=False, dropna=False)}
    todo = [groups[k] for k in order if k in groups]
    if not todo:
        return pd.DataFrame(columns=list(CELLS.columns))
    with ThreadPoolExecutor(max_workers=workers or summary_workers()) as pool:
        parts = list(pool.map(lambda g: summarize_cell(g, bytes_per_call), todo))
    return pd.concat(parts, ignore_index=True)


def with_stops(summary: pd.DataFrame, stops: dict[tuple[str, ...], object]) -> pd.DataFrame:
    """cells.csv's `stopped` column of an adaptive run (measure/adaptive.py: `target` or `limit`
    per cell); a fixed run's cells (every stop None) have no such column."""
    if summary.empty or all(v is None for v in stops.values()):
        return summary
    keys = summary[list(CELL_KEYS)].astype(str).apply(tuple, axis=1)
    return summary.assign(stopped=[str(getattr(stops.get(k), "value", "") or "") for k in keys])


def write_cells(run: RunDir, summary: pd.DataFrame) -> None:
    """cells.csv: the cells summarised now replace theirs; cells of earlier runs into this dir stay first."""
    keys = list(CELL_KEYS)
    if run.has(CELLS) and len(summary):
        old = run.read(CELLS)
        fresh = set(summary[keys].astype(str).apply(tuple, axis=1))
        keep = ~old[keys].astype(str).apply(tuple, axis=1).isin(fresh)
        summary = pd.concat([old[keep], summary], ignore_index=True)
    run.write(CELLS, summary)


__all__ = ["SampleJournal", "summarize_cells", "with_stops", "write_cells"]
