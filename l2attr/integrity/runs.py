"""The contract of a ladder, profile or timeline run as a whole (its tables row by row are
tables.py's): a typed manifest, every table its kind needs, and tables that agree.

Why one function: analysis/load.py reads the tables; what a whole run of each kind holds is
decided here, the same way for every reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd


from l2attr.errors import Damage
from l2attr.integrity import rules
from l2attr.integrity.summaries import (check_cells_against_samples, check_derived_metrics,
                                        check_profile_manifest, check_timeline)
from l2attr.schema import CELLS, METRICS, SAMPLES

SAMPLE_TIMES = ("pin_time_us", "consumer_time_us", "consumer_artifact_time_us", "call_wall_time_us")
from l2attr.vocab import Command

Tables = dict[str, "pd.DataFrame | None"]


def check_run(kind: str, tables: Tables, manifest: dict[str, Any], path: Path, damage: Damage) -> Tables:
    """The run's tables after the whole-run rules (rows that break them dropped in the partial mode)."""
    tables = dict(tables)      # (the manifest was checked first: analysis/load.py read_run)
    if kind == Command.LADDER and tables.get("cells") is not None:
        measure = manifest.get("measure") or {}
        if isinstance(measure, dict) and not measure.get("trace") and measure.get("profiles"):
            for name, table in (("cells", CELLS), ("samples", SAMPLES)):   # the more telling line first
                if tables.get(name) is not None:
                    tables[name] = check_declared_profiles(tables[name], manifest, path, damage, table,
                                                           measure["profiles"])
        if tables.get("samples") is None:
            damage.found(f"{path / SAMPLES.filename}: missing; a ladder run keeps the samples its "
                         f"{CELLS.filename} summarises (the spread tables and this check need them)")
        else:
            tables["cells"] = check_cells_against_samples(tables["samples"], tables["cells"], path, damage)
            samples = tables["samples"]
            odd = rules.one_pattern(samples, ("family", "rung", "pin", "profile", "l2_state", "repeat"), SAMPLE_TIMES,
                                    str(path / SAMPLES.filename), damage, "a repeat is timed by one timer")
            odd |= check_repeats_declared(samples, manifest, str(path / SAMPLES.filename), damage)
            tables["samples"] = samples[~odd].reset_index(drop=True) if odd.any() else samples
    if kind == Command.PROFILE and tables.get("metrics") is not None:
        check_profile_manifest(tables["metrics"], manifest, path, damage)
        tables["metrics"] = check_declared_profiles(tables["metrics"], manifest, path, damage)
        tables["metrics"] = check_derived_metrics(tables["metrics"], path, damage)
    if kind == Command.TIMELINE and manifest.get("method") != "nsys":
        check_timeline(tables.get("timeline"), tables.get("phases"), manifest, path, damage)
    return tables


def check_declared_profiles(metrics: pd.DataFrame, manifest: dict[str, Any], path: Path,
                            damage: Damage, table: Any = METRICS, declared: Any = None) -> pd.DataFrame:
    """A run's rows name the reuse profiles its manifest lists (a profile run's `profiles`, a
    ladder's `measure.profiles`): a row of another profile is a key that resolves to nothing the
    run measured."""
    declared = manifest.get("profiles") if declared is None else declared
    if not isinstance(declared, list) or "profile" not in metrics.columns:
        return metrics
    named = metrics["profile"].notna() & ~metrics["profile"].astype(str).isin(("", "None"))
    bad = rules.flag(damage, str(path / table.filename), named & ~metrics["profile"].astype(str).isin(
        list(map(str, declared))), f"column profile must be one the manifest lists ({', '.join(map(str, declared))})",
        lambda row: repr(metrics["profile"].iloc[row]))
    return metrics[~bad].reset_index(drop=True) if bad.any() else metrics


def check_repeats_declared(samples: pd.DataFrame, manifest: dict[str, Any], source: str, damage: Damage) -> pd.Series:
    """A sample's repeat index is one the run made: below measure.repeats device repeats plus as many
    host repeats (measure/run.py alternates them); a larger index names a repeat that never ran. An
    adaptive run (measure.target_rel set) may run up to measure.max_repeats rounds."""
    measure = manifest.get("measure") or {}
    adaptive = measure.get("target_rel") is not None
    key = "max_repeats" if adaptive else "repeats"
    declared = measure.get(key)
    if not isinstance(declared, int) or isinstance(declared, bool) or "repeat" not in samples or samples.empty:
        return pd.Series(False, index=samples.index)
    repeat = pd.to_numeric(samples["repeat"], errors="coerce")
    return rules.flag(damage, source, (repeat < 0) | (repeat >= 2 * declared), f"a repeat index beyond the "
                      f"{2 * declared} repeats (device and host) the manifest declares (measure.{key} {declared})",
                      lambda row: f"{repeat.iloc[row]:g}")
