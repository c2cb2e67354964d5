"""One sweep run dir -> its judgement: the axis' table and a one-line reading, computed from
sweep_points.csv on disk (nothing from the GPU), for any registered axis.

The axis' declaration (ladder/sweep/axes/) says which table (analysis/sweep_table.py), which
judgement (analysis/sweep_judges.py) and which DRAM columns; nothing here knows an axis by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from l2attr.analysis import sweep_dram, sweep_table
from l2attr.analysis.sweep_check import RetentionCheck, read_check
from l2attr.analysis.sweep_judges import JUDGES
from l2attr.analysis.sweep_load import SweepRun
from l2attr.analysis.sweep_verdict import Mark
from l2attr.ladder.sweep.axes.declare import AxisSpec
from l2attr.ladder.sweep.spec import row_bytes
from l2attr.ladder.config import WorkloadConfig
from l2attr.vocab import SweepJudgement, Timer


@dataclass
class SweepAnalysis:
    run: SweepRun
    spec: AxisSpec
    table: pd.DataFrame                       # the axis' table (one row per measured x, per series)
    reading: str                              # one line
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)      # the judgement's rows per series
    marks: list[Mark] = field(default_factory=list)
    note: str = ""                            # what the judgement's words mean
    lag: str = ""                             # how many kernel-timer samples the spin did not cover
    check: RetentionCheck | None = None       # a recorded check beside the run (occupy: ncu retention)
    noisy: str = ""                           # --adaptive: the points that stopped at the limit (analysis/noisy.py)

    @property
    def axis(self) -> Any:
        return self.spec.axis

    @property
    def title(self) -> str:
        return self.spec.title

    @property
    def break_even(self) -> pd.DataFrame:
        """The break-even rows of a BREAK_EVEN axis (the ladder's verdict sets them beside its
        formula, analysis/study.py); empty for every other judgement."""
        return self.summary if self.spec.judgement.kind == SweepJudgement.BREAK_EVEN else pd.DataFrame()


def launch_lag(run: SweepRun) -> str:
    """One line: the share of kernel-timer samples launched after the spin's head start ran out
    (their event interval may hold host time, as the ladder's caveat says); '' without samples."""
    try:
        s = run.samples()
    except Exception:  # no samples file (a copied points table): nothing to say
        return ""
    spin = float((run.manifest.get("sweep") or {}).get("spin_us", 50.0))
    k = s[(s["timer"] == Timer.KERNEL) & s["launch_lag_us"].notna()]
    if k.empty or spin <= 0:
        return ""
    late = float((k["launch_lag_us"].astype(float) >= spin).mean())
    return (f"{late * 100:.1f} % of the {len(k):,} kernel-timer samples were launched after the {spin:g} µs "
            "spin had run out (their CUDA-event interval may hold host time).")


def _row_bytes(config: dict[str, Any]) -> int:
    try:
        return row_bytes(WorkloadConfig(**config))
    except (TypeError, ValueError):
        return int(config.get("dim", 128)) * 4


def analyse_sweep(run: SweepRun) -> SweepAnalysis:
    spec = run.spec
    t = sweep_table.build(run.points, spec.table, _row_bytes(run.config))
    verdict = JUDGES[spec.judgement.kind](t, run.points, spec)
    table = sweep_table.spread(verdict.table, run.points, spec.table)
    if spec.table.dram and run.dram is not None:
        table = sweep_dram.add_columns(table, sweep_dram.medians(run.dram),
                                       {c: (arm, role) for c, arm, role in spec.table.dram})
    if not table.empty:                     # the rule's word on each row's judged speedup
        table = table.assign(judgement=[w.value for w in t.judged(spec.judgement.on)])
    check = read_check(run.path / spec.check_file) if spec.check_file else None
    from l2attr.analysis.noisy import limit_note

    noisy = limit_note(run.points, ("family", "profile", "point"), (run.manifest.get("sweep") or {}).get("adaptive"))
    return SweepAnalysis(run, spec, table, verdict.reading, verdict.summary, verdict.marks, verdict.note,
                         launch_lag(run), check, noisy)
