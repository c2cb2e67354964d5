"""The timer comparison as Markdown (analysis/timer_compare.py judges; this lays it out)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from l2attr.analysis.spread import launch_lag_effect, repeat_spread
from l2attr.analysis.timer_compare import TimerRun
from l2attr.report.markdown import md_table
from l2attr.vocab import TimerKind


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
