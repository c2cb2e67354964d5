"""Read an experiment run dir, refusing damaged data, and analyse it (one facade for CLI and report).

The integrity rules of this kind: keys unique, times finite and >= 0, p10 <= median <= p90 and
ci lo <= hi in the cells, every declared condition present, and every cell's median equal to the
one recomputed from exp_samples.csv (a cells table that no longer matches its samples was edited
or cut). A broken rule is one UserError naming the file, the row and the rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.errors import STRICT, UserError
from l2attr.integrity.engine import check_cells_complete
from l2attr.integrity.manifest import check_manifest
from l2attr.measure.summary import summarize_pairs
from l2attr.rundir import RunDir
from l2attr.schema import EXP_CELLS, EXP_METRICS, EXP_SAMPLES, Table
from l2attr.vocab import RunKind

KIND = RunKind.EXPERIMENT.value


def _unique(df: pd.DataFrame, table: Table, where: Path) -> None:
    dup = df.duplicated(list(table.key), keep=False)
    if dup.any():
        raise UserError(f"{where / table.filename}: row {int(dup.idxmax()) + 2}: key "
                        f"({', '.join(table.key)}) is not unique")


def _finite_nonneg(df: pd.DataFrame, cols: list[str], table: Table, where: Path) -> None:
    for c in cols:
        v = pd.to_numeric(df[c], errors="coerce")
        bad = v.notna() & ~(v.apply(lambda x: math.isfinite(x) and x >= 0))
        if bad.any():
            raise UserError(f"{where / table.filename}: row {int(bad.idxmax()) + 2}: {c} must be finite and >= 0")


def check_cells(cells: pd.DataFrame, where: Path) -> None:
    _unique(cells, EXP_CELLS, where)
    time_cols = ["median_us", "p10_us", "p90_us", "ci95_lo_us", "ci95_hi_us"]
    _finite_nonneg(cells, time_cols + ["n_samples", "n_discarded"], EXP_CELLS, where)
    order = (cells["p10_us"] <= cells["median_us"]) & (cells["median_us"] <= cells["p90_us"]) \
        & (cells["ci95_lo_us"] <= cells["ci95_hi_us"])
    if not order.all():
        raise UserError(f"{where / EXP_CELLS.filename}: row {int((~order).idxmax()) + 2}: "
                        "needs p10 <= median <= p90 and ci95_lo <= ci95_hi")


def check_consistent(samples: pd.DataFrame, cells: pd.DataFrame, where: Path) -> None:
    """Every cell's median as recomputed from the samples (to 1e-6 relative)."""
    recomputed = summarize_pairs(samples)
    check_cells_complete(cells, recomputed, where)     # a cut cells table keeps every condition
    again = recomputed.set_index(["experiment", "condition", "quantity", "timer"])["median_us"]
    have = cells.set_index(["experiment", "condition", "quantity", "timer"])["median_us"]
    for key, value in have.items():
        ref = again.get(key)
        if ref is None or not math.isclose(float(value), float(ref), rel_tol=1e-6, abs_tol=1e-9):
            raise UserError(f"{where / EXP_CELLS.filename}: cell {':'.join(map(str, key))}: median "
                            f"{value} does not match {ref} recomputed from {EXP_SAMPLES.filename}")


@dataclass
class ExperimentRun:
    path: Path
    manifest: dict[str, Any]
    samples: pd.DataFrame
    cells: pd.DataFrame
    metrics: pd.DataFrame = field(default_factory=pd.DataFrame)


def load_experiment(path: Path) -> ExperimentRun:
    run = RunDir.open(Path(path))
    m = run.manifest()
    if m.get("kind") != KIND:
        raise UserError(f"{path} is a {m.get('kind')!r} run, not an experiment run")
    check_manifest(m, run.path, STRICT)          # the fields every experiment writer records
    decl = m.get("experiment")
    if decl is not None and not (isinstance(decl, dict) and isinstance(decl.get("conditions"), list)):
        raise UserError(f"{run.path / 'manifest.json'}: 'experiment' must record the declaration")
    samples = run.read(EXP_SAMPLES) if run.has(EXP_SAMPLES) else pd.DataFrame(columns=list(EXP_SAMPLES.columns))
    cells = run.read(EXP_CELLS) if run.has(EXP_CELLS) else pd.DataFrame(columns=list(EXP_CELLS.columns))
    if run.has(EXP_CELLS) and not run.has(EXP_SAMPLES):
        raise UserError(f"{run.path}: {EXP_CELLS.filename} without {EXP_SAMPLES.filename}: the samples were removed")
    metrics = run.read(EXP_METRICS) if run.has(EXP_METRICS) else pd.DataFrame(columns=list(EXP_METRICS.columns))
    if samples.empty and metrics.empty:
        raise UserError(f"{run.path}: an experiment run with neither timings nor metrics")
    if not samples.empty:
        samples["discard"] = samples["discard"].map(lambda x: "" if pd.isna(x) else str(x))
        _unique(samples, EXP_SAMPLES, run.path)
        check_cells(cells, run.path)
        check_consistent(samples, cells, run.path)
        missing = [c for c in (decl or {}).get("conditions", []) if c not in set(cells["condition"])]
        if missing:
            raise UserError(f"{run.path / EXP_CELLS.filename}: declared conditions not measured: {', '.join(missing)}")
    if not metrics.empty:
        _unique(metrics, EXP_METRICS, run.path)
    return ExperimentRun(run.path, m, samples, cells, metrics)


@dataclass
class ExperimentAnalysis:
    run: ExperimentRun
    verdict: pd.DataFrame
    dram: pd.DataFrame
    control: dict[str, Any] | None
    discarded: dict[str, int]


def analyse_experiment(run: ExperimentRun) -> ExperimentAnalysis:
    from l2attr.analysis.experiment import verdict
    from l2attr.analysis.experiment_dram import control, dram_table

    decl = run.manifest.get("experiment") or {}
    baselines = {decl["name"]: decl["baseline"]} if decl.get("name") else {}
    v = verdict(run.cells, baselines) if not run.cells.empty else pd.DataFrame()
    d = dram_table(run.metrics) if not run.metrics.empty else pd.DataFrame()
    c = control(run.metrics) if not run.metrics.empty else None
    disc = run.samples["discard"].value_counts().to_dict() if not run.samples.empty else {}
    return ExperimentAnalysis(run, v, d, c, {str(k or "kept"): int(n) for k, n in disc.items()})
