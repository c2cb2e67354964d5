"""Declared units all present: cells the manifest declares, samples cells.csv counted, kernels
the profile writer counted, the last kernel of metrics.csv whole.

Why: a table cut exactly at a row boundary is still a valid CSV, so only what the run said
elsewhere (its manifest, its other table) shows that rows are missing. Moved here from
analysis/load.py, which calls them for every ladder and profile run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.errors import STRICT, Damage
from l2attr.catalog.sets import DERIVED_PREFIX, derived_specs
from l2attr.manifest_model import LadderManifest, Measure, Passes, ProfileManifest, typed
from l2attr.rundir import MANIFEST
from l2attr.schema import CELLS, METRICS, SAMPLES
from l2attr.vocab import Quantity, Timer

# cells.csv (quantity, timer) -> the samples.csv column its n_samples counts
SAMPLE_COLUMNS = {(Quantity.PIN.value, Timer.KERNEL.value): "pin_time_us",
                  (Quantity.CONSUMER.value, Timer.KERNEL.value): "consumer_time_us",
                  (Quantity.CONSUMER.value, Timer.ARTIFACT.value): "consumer_artifact_time_us",
                  (Quantity.CALL.value, Timer.WALL.value): "call_wall_time_us"}

def check_declared_cells(cells: pd.DataFrame, manifest: dict[str, Any], path: Path, damage: Damage = STRICT) -> None:
    """Every cell the manifest declares (measure.variants x profiles x L2 states) has its consumer
    median in cells.csv: a file cut exactly at a row boundary, or a run stopped before its last
    cells, shows here. Runs whose manifest does not list its variants are not checked."""
    measure = typed(manifest, model=LadderManifest).measure or Measure()
    variants, profiles, states = measure.variants, measure.profiles, measure.l2_state
    if variants is None or profiles is None or states is None:
        return
    keys = ["family", "rung", "pin", "profile", "l2_state"]
    have = set(map(tuple, cells[(cells["quantity"] == Quantity.CONSUMER) & (cells["timer"] == Timer.KERNEL)][keys]
                   .astype(str).to_numpy().tolist()))
    declared = [(*map(str, v), p, s.strip()) for v in variants for p in profiles for s in states.split(",") if s.strip()]
    missing = [k for k in declared if k not in have]
    if missing:
        damage.found(f"{path / CELLS.filename}: {len(missing)} of the {len(declared)} cells {MANIFEST} declares "
                      f"are missing, first {'/'.join(map(str, missing[0]))} (run stopped early, or the file was cut; "
                      "`l2attr ladder --resume` completes a stopped run)")


def check_sample_counts(samples: pd.DataFrame, cells: pd.DataFrame, path: Path, damage: Damage = STRICT) -> None:
    """cells.csv counts the samples each median came from; samples.csv must still hold them.

    More samples than counted is normal (a cell whose summary was not yet rewritten when the
    run stopped); fewer means samples.csv lost rows after cells.csv was written.
    """
    keys = ["family", "rung", "pin", "profile", "l2_state"]
    # one grouping for every timer's column (a count of its filled samples per cell), looked up in
    # a dict; the cells of each quantity and timer found on the columns' arrays (a grouping and a
    # filtered frame per timer were a tenth of reading a small ladder run)
    columns = list(SAMPLE_COLUMNS.values())
    counts = samples.groupby(keys)[columns].count()
    quantities, timers = cells["quantity"].to_numpy(dtype=object), cells["timer"].to_numpy(dtype=object)
    for (quantity, timer), column in SAMPLE_COLUMNS.items():
        held = counts[column].to_dict()
        mine = (quantities == quantity) & (timers == timer)
        counted = zip(zip(*(cells[k].to_numpy(dtype=object)[mine] for k in keys)), cells["n_samples"].to_numpy()[mine])
        for key, n in counted:
            have = int(held.get(key, 0))
            if have < n:
                damage.found(f"{path / SAMPLES.filename}: {have} {column} samples for "
                                f"{'/'.join(map(str, key))}, but {CELLS.filename} counted {int(n)} "
                                "(samples.csv lost rows: truncated?)")


PASSES_METRIC = "profiler__replayer_passes"   # one row per profiled kernel (the profile writer's count)


def check_profiled_kernels(metrics: pd.DataFrame, manifest: dict[str, Any], path: Path,
                           damage: Damage = STRICT) -> pd.DataFrame:
    """metrics.csv must hold every kernel the profile run counted, the last one whole.

    A file cut at a row boundary loses rows at its end only. The profile writer records per
    report how many kernels carried profiler__replayer_passes (manifest `replayer_passes`), so
    lost kernels show as a smaller count. The file's last kernel is checked on its own: it must
    have as many raw metrics as the other kernels of its report, and every hit rate its counts
    give (the writer appends those after the raw metrics). Returns the metrics, without a last
    kernel found incomplete (partial mode).
    """
    source = path / METRICS.filename
    if "report" not in metrics.columns:
        return metrics
    declared = typed(manifest, model=ProfileManifest).replayer_passes
    if declared is not None:
        passes = metrics[metrics["metric"] == PASSES_METRIC]
        # a kernel's rows may stand under two conditions (the folded control's after-pin arm)
        found = passes.groupby("report")["launch"].nunique() if "launch" in passes else passes.groupby("report").size()
        for report, facts in declared.items():
            want = facts.kernels if isinstance(facts, Passes) else None
            have = int(found.get(report, 0))
            if isinstance(want, int) and have < want:
                damage.found(f"{source}: {have} of the {want} kernels of {report} that "
                                f"{MANIFEST}[replayer_passes] lists (truncated?)")
    if "launch" not in metrics.columns or metrics.empty:
        return metrics
    report, launch = metrics["report"].iloc[-1], metrics["launch"].iloc[-1]
    of_report = metrics[metrics["report"] == report]
    if "condition" in of_report.columns:      # one kernel's rows under each of its labels
        of_report = of_report[of_report["condition"] == metrics["condition"].iloc[-1]]
    derived = of_report["metric"].str.startswith(DERIVED_PREFIX, na=False)
    raw_counts = of_report[~derived].groupby("launch").size()
    last = of_report[of_report["launch"] == launch]
    what = f"the last kernel of {report} (launch {launch:g})"
    if raw_counts.get(launch, 0) < raw_counts.max():
        damage.found(f"{source}: {what} has {int(raw_counts.get(launch, 0))} metrics, the others "
                     f"up to {int(raw_counts.max())} (truncated?)")
        return metrics.drop(last.index)
    values = dict(zip(last["metric"], last["value"]))
    for spec in derived_specs(values):
        if spec.compute(values[spec.hits], values[spec.misses]) is not None and spec.name not in values:
            damage.found(f"{source}: {what} lacks {spec.name}, which its {spec.hits} and "
                         f"{spec.misses} give (truncated?)")
            return metrics.drop(last.index)
    return metrics
