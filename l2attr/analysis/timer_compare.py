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
from l2attr.manifest_model import LadderManifest, Measure, typed
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


def kernel_timer(manifest: dict, source: str | None = None) -> tuple[str, float]:
    """A ladder run's kernel timer and its spin length: a run that names no timer was made before
    the blocking timer existed, with the spin."""
    measure = typed(manifest, source, model=LadderManifest).measure or Measure()
    return str(measure.timer or TimerKind.SPIN.value), float(measure.spin_us or 0.0)


def read_run(path: Path) -> TimerRun:
    run = RunDir.open(path)
    source = f"{run.path}/manifest.json"        # nothing has checked it: a damaged field is one line
    manifest = run.manifest()
    gpu = typed(manifest, source, model=LadderManifest).gpu
    uuid = str((gpu and gpu.uuid) or "")
    return TimerRun(run.path, *kernel_timer(manifest, source), uuid, run.read(CELLS), run.read(SAMPLES))


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
    both = pick(a.cells).merge(pick(b.cells), on=KEYS, suffixes=("_a", "_b"))
    both["diff_pct"] = (both["median_us_a"] / both["median_us_b"] - 1.0) * 100.0
    return runs, both[[*KEYS, "median_us_a", "median_us_b", "diff_pct"]]
