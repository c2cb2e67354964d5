"""One sweep run dir -> its judgement: the axis' table and a one-line reading, computed from
sweep_points.csv on disk (nothing from the GPU), for any registered axis.

The axis' declaration (sweep/axes/) says which table (sweep/analyse/table.py), which
judgement (JUDGES below) and which DRAM columns; nothing here knows an axis by name.

The judgements, one function per kind (vocab.SweepJudgement; the break-even's in
sweep/analyse/break_even.py, the others in sweep/analyse/verdict.py): an axis names its kind in
its declaration (JudgementSpec), so a new axis that uses an existing kind needs nothing here. Every word a judgement writes
("pays", "peaks", "below half", "faster") comes from analysis/significance.py's one rule on the
intervals behind the table's speedups, and "within noise" where the rule says so. Both arms of a
sweep are measured in one process, their repeats interleaved, so the rule's cross-process spread
is 0 here.

DRAM bytes per point (sweep_dram.csv, written by `l2attr sweep --profile`) are added to a
sweep's table as medians per (family, profile, point, arm, role), in MiB per kernel call. DRAM
bytes, not hit rates, are the comparison that holds across profiles on the H200 (an L2 miss is
not a DRAM read: docs/facts.md#miss-is-not-dram): the pin's own DRAM read belongs beside the
consumer's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from l2attr.sweep.analyse import break_even as sweep_break_even, table as sweep_table
from l2attr.sweep.load import RetentionCheck, SweepRun, read_check
from l2attr.sweep.analyse.verdict import (Judge, Mark, judge_best_vs_reference, judge_peak, judge_per_point,
                                           judge_share_left)
from l2attr.sweep.axes.declare import AxisSpec
from l2attr.sweep.declare import row_bytes
from l2attr.dlrm.config import WorkloadConfig
from l2attr.manifest_model import recorded
from l2attr.vocab import SweepJudgement, Timer


JUDGES: dict[SweepJudgement, Judge] = {
    SweepJudgement.BREAK_EVEN: sweep_break_even.judge,
    SweepJudgement.PEAK: judge_peak,
    SweepJudgement.SHARE_LEFT: judge_share_left,
    SweepJudgement.BEST_VS_REFERENCE: judge_best_vs_reference,
    SweepJudgement.PER_POINT: judge_per_point,
}
MiB = 1 << 20


def dram_medians(dram: pd.DataFrame | None) -> dict[tuple[str, str, str, str, str], float]:
    if dram is None or dram.empty:
        return {}
    g = dram.groupby(["family", "profile", "point", "arm", "role"])["dram_read_bytes"].median() / MiB
    return {tuple(str(x) for x in k): float(v) for k, v in g.items()}


def add_dram_columns(table: pd.DataFrame, med: dict, columns: dict[str, tuple[str | None, str]]) -> pd.DataFrame:
    """columns: new column -> (arm, role); arm None = the row's own `arm`. Rows need family,
    profile, point (and arm when it is None). Nothing is added without DRAM data."""
    if not med or table.empty:
        return table
    table = table.copy()
    for column, (arm, role) in columns.items():
        table[column] = [med.get((r["family"], r["profile"], r["point"], arm or r["arm"], role), float("nan"))
                         for r in table.to_dict("records")]
    return table


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
    noisy: str = ""                           # --adaptive: the points that stopped at the limit (analysis/caveats.py)

    @property
    def axis(self) -> Any:
        return self.spec.axis

    @property
    def title(self) -> str:
        return self.spec.title

    @property
    def break_even(self) -> pd.DataFrame:
        """The break-even rows of a BREAK_EVEN axis (the ladder's verdict sets them beside its
        formula, study/study.py); empty for every other judgement."""
        return self.summary if self.spec.judgement.kind == SweepJudgement.BREAK_EVEN else pd.DataFrame()


def launch_lag(run: SweepRun) -> str:
    """One line: the share of kernel-timer samples launched after the spin's head start ran out
    (their event interval may hold host time, as the ladder's caveat says); '' without samples."""
    try:
        s = run.samples()
    except Exception:  # no samples file (a copied points table): nothing to say
        return ""
    spin = float(recorded(run.manifest, "sweep.spin_us", 50.0))
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
        table = add_dram_columns(table, dram_medians(run.dram), {c: (arm, role) for c, arm, role in spec.table.dram})
    if not table.empty:                     # the rule's word on each row's judged speedup
        table = table.assign(judgement=[w.value for w in t.judged(spec.judgement.on)])
    check = read_check(run.path / spec.check_file) if spec.check_file else None
    from l2attr.analysis.caveats import limit_note

    noisy = limit_note(run.points, ("family", "profile", "point"), recorded(run.manifest, "sweep.adaptive"))
    return SweepAnalysis(run, spec, table, verdict.reading, verdict.summary, verdict.marks, verdict.note,
                         launch_lag(run), check, noisy)
