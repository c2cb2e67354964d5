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

from l2attr.analysis.spread import launch_lag_effect, repeat_spread
from l2attr.errors import UserError
from l2attr.report.markdown import md_table
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


def read_run(path: Path) -> TimerRun:
    run = RunDir.open(path)
    m = run.manifest()
    measure = m.get("measure") or {}
    uuid = str((m.get("gpu") or {}).get("uuid") or "")
    return TimerRun(run.path, str(measure.get("timer") or TimerKind.SPIN.value), float(measure.get("spin_us", 0)),
                    uuid, run.read(CELLS), run.read(SAMPLES))


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


def _timer_name(r: TimerRun) -> str:
    return r.timer if r.timer == TimerKind.BLOCKING.value else f"{r.timer} {r.spin_us:g} µs"


def timer_table(compared: tuple[list[TimerRun], pd.DataFrame], root: Path | None = None) -> str:
    """Markdown: the runs (timer, late share, spread) and the per-cell differences."""
    runs, m = compared
    head = []
    for r in runs:
        lag = launch_lag_effect(r.samples, r.spin_us, r.timer) or {"lagged_pct": float("nan")}
        sp = repeat_spread(r.samples)
        where = r.path.relative_to(root) if root is not None else r.path
        head.append([f"`{where}`", _timer_name(r), f"{float(lag['lagged_pct']):.1f} %",
                     f"{sp['spread_pct'].median():.2f} %", f"{sp['spread_pct'].max():.2f} %", f"`{r.uuid}`"])
    out = [md_table(["run", "kernel timer", "late / timed-out samples", "consumer spread, median",
                     "consumer spread, worst", "GPU"], head, [False, False, True, True, True, False]), ""]
    rows = [[r.family, r.rung, r.profile, f"{r.median_us_a:.2f}", f"{r.median_us_b:.2f}", f"{r.diff_pct:+.2f} %"]
            for r in m.itertuples()]
    out.append(md_table(["family", "rung", "profile", f"{_timer_name(runs[0])}, µs", f"{_timer_name(runs[1])}, µs",
                         "difference"], rows, [False, False, False, True, True, True]))
    out.append("")
    out.append(f"Largest difference: {m['diff_pct'].abs().max():.2f} % over {len(m)} consumer cells.")
    out.append("")
    return "\n".join(out)
