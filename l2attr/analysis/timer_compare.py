"""Ladder runs with different kernel timers, cell by cell: does the timer change the answer?

Used for the blocking timer against a long spin (issue: launch lag inside the kernel timer).
Runs are compared only when they name the same GPU (manifest `gpu.uuid`); each run's own
repeat spread and late/timeout share are reported beside the differences, since a difference
between two processes is judged against more than one process's spread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from l2attr.errors import UserError
from l2attr.rundir import RunDir
from l2attr.schema import CELLS, SAMPLES
from l2attr.vocab import Quantity, Timer, TimerKind

KEYS = ["family", "rung", "pin", "profile", "l2_state"]


@dataclass
class TimerRun:
    path: Path
    timer: str
    spin_us: float
    uuid: str
    cells: pd.DataFrame
    samples: pd.DataFrame


def kernel_timer(manifest: dict) -> tuple[str, float]:
    """A ladder run's kernel timer and its spin length: a run that names no timer was made before
    the blocking timer existed, with the spin."""
    measure = manifest.get("measure") or {}
    spin = measure.get("spin_us", 0)
    return str(measure.get("timer") or TimerKind.SPIN.value), float(spin) if isinstance(spin, (int, float)) else 0.0


def read_run(path: Path) -> TimerRun:
    run = RunDir.open(path)
    m = run.manifest()
    uuid = str((m.get("gpu") or {}).get("uuid") or "")
    return TimerRun(run.path, *kernel_timer(m), uuid, run.read(CELLS), run.read(SAMPLES))


def compare_timers(paths: list[Path], allow_other_gpu: bool = False) -> tuple[list[TimerRun], pd.DataFrame]:
    """(the runs, one row per shared consumer cell: median per run and the relative difference)."""
    runs = [read_run(p) for p in paths]
    if len(runs) != 2:
        raise UserError(f"compare two ladder runs, not {len(runs)}")
    a, b = runs
    if not allow_other_gpu and (not a.uuid or a.uuid != b.uuid):
        raise UserError(f"{a.path.name} and {b.path.name} were not measured on one recorded GPU "
                        f"({a.uuid or 'no uuid'} vs {b.uuid or 'no uuid'})")
    pick = lambda c: c[(c["quantity"] == Quantity.CONSUMER.value) & (c["timer"] == Timer.KERNEL.value)]  # noqa: E731
    m = pick(a.cells).merge(pick(b.cells), on=KEYS, suffixes=("_a", "_b"))
    m["diff_pct"] = (m["median_us_a"] / m["median_us_b"] - 1.0) * 100.0
    return runs, m[[*KEYS, "median_us_a", "median_us_b", "diff_pct"]]
