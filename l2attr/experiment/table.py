"""Read an experiment run dir, refusing damaged data, and analyse it (one facade for CLI and report).

The integrity rules of this kind are experiment/check.py's (typed columns, keys unique, times
finite, >= 0 and below 10 s, known words, cells recomputed from exp_samples.csv, every kernel
holding every measured metric) and the manifest's (integrity/manifest_fields.py); every declared
condition is measured. A broken rule is one UserError naming the file, the row and the rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.errors import STRICT, Damage, UserError
from l2attr.experiment.check import check_cells_recomputed, check_declared, check_metric_sets, read_table
from l2attr.integrity.manifest import check_manifest
from l2attr.manifest_model import ExperimentManifest, recorded, typed
from l2attr.measure.stats import summarize_pairs
from l2attr.rundir import RunDir
from l2attr.schema import EXP_CELLS, EXP_METRICS, EXP_SAMPLES, empty
from l2attr.vocab import Command

KIND = Command.EXPERIMENT.value


def check_consistent(samples: pd.DataFrame, cells: pd.DataFrame, where: Path) -> None:
    """exp_cells.csv as recomputed from the samples (experiment/check.py's rule)."""
    check_cells_recomputed(samples, cells, summarize_pairs(samples), where)


@dataclass
class ExperimentRun:
    path: Path
    manifest: dict[str, Any]
    samples: pd.DataFrame
    cells: pd.DataFrame
    metrics: pd.DataFrame = field(default_factory=pd.DataFrame)
    partial: list[str] = field(default_factory=list)     # what --allow-partial read past


def load_experiment(path: Path, damage: Damage = STRICT) -> ExperimentRun:
    """The run's tables, held to its manifest (experiment/check.py check_declared); `damage`
    (report --allow-partial) reads past repeats the run lacks and keeps what it said."""
    before = len(damage.messages)
    run = RunDir.open(Path(path))
    m = run.manifest()
    if typed(m).kind != KIND:
        raise UserError(f"{path} is a {recorded(m, 'kind')!r} run, not an experiment run")
    check_manifest(m, run.path, STRICT)          # the fields every experiment writer records
    decl = typed(m, model=ExperimentManifest).experiment
    if decl is None and recorded(m, "experiment") is not None:     # recorded, but not as a declaration
        raise UserError(f"{run.path / 'manifest.json'}: 'experiment' must record the declaration")
    if run.has(EXP_CELLS) and not run.has(EXP_SAMPLES):
        raise UserError(f"{run.path}: {EXP_CELLS.filename} without {EXP_SAMPLES.filename}: the samples were removed")
    samples = read_table(run, EXP_SAMPLES) if run.has(EXP_SAMPLES) else empty(EXP_SAMPLES)
    cells = read_table(run, EXP_CELLS) if run.has(EXP_CELLS) else empty(EXP_CELLS)
    metrics = read_table(run, EXP_METRICS) if run.has(EXP_METRICS) else empty(EXP_METRICS)
    check_declared(m, samples, len(metrics) if run.has(EXP_METRICS) else None, run.path, damage)
    if samples.empty and metrics.empty:
        raise UserError(f"{run.path}: an experiment run with neither timings nor metrics")
    if not samples.empty:
        check_consistent(samples, cells, run.path)
        missing = [c for c in (decl.conditions if decl else []) if c not in set(cells["condition"])]
        if missing:
            raise UserError(f"{run.path / EXP_CELLS.filename}: declared conditions not measured: {', '.join(missing)}")
    if not metrics.empty:
        check_metric_sets(metrics, run.path)
    return ExperimentRun(run.path, m, samples, cells, metrics, damage.messages[before:])


@dataclass
class ExperimentAnalysis:
    run: ExperimentRun
    verdict: pd.DataFrame
    dram: pd.DataFrame
    control: dict[str, Any] | None
    discarded: dict[str, int]
    noisy: str = ""              # adaptive repeats: the conditions that stopped at the limit (analysis/caveats.py)


def analyse_experiment(run: ExperimentRun) -> ExperimentAnalysis:
    from l2attr.experiment.analyse.cells import verdict
    from l2attr.experiment.analyse.dram import control, dram_table

    decl = typed(run.manifest, model=ExperimentManifest).experiment
    baselines = {decl.name: decl.baseline} if decl is not None and decl.name else {}
    v = verdict(run.cells, baselines) if not run.cells.empty else pd.DataFrame()
    d = dram_table(run.metrics) if not run.metrics.empty else pd.DataFrame()
    c = control(run.metrics) if not run.metrics.empty else None
    disc = run.samples["discard"].value_counts().to_dict() if not run.samples.empty else {}
    from l2attr.analysis.caveats import limit_note

    noisy = "; ".join([*(f"partial data: {p}" for p in run.partial),
                       *[limit_note(run.cells, ("condition",), recorded(run.manifest, "adaptive"))]]).strip("; ")
    return ExperimentAnalysis(run, v, d, c, {str(k or "kept"): int(n) for k, n in disc.items()}, noisy)
