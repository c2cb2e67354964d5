"""Runs as a whole: the contract of a ladder, profile or timeline run (its tables row by row are
tables.py's): a typed manifest, every table its kind needs, and tables that agree, units.csv of a
distributed run included; and the runs one report combines, which measure one workload on one kind
of GPU or are a comparison.

Why one function: analysis/load.py reads the tables; what a whole run of each kind holds is
decided here, the same way for every reader. Why one module: each rule here reads a run (or
several) whole, beyond any one table's rows.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.errors import Damage, UserError
from l2attr.integrity import rules
from l2attr.manifest_model import Gpu, LadderManifest, Measure, ProfileManifest, TimelineManifest, typed
from l2attr.integrity.rules import typed_columns
from l2attr.integrity.summaries import (check_cells_against_samples, check_derived_metrics, check_profile_manifest,
                                        check_timeline)
from l2attr.schema import CELLS, METRICS, SAMPLES, UNITS
from l2attr.vocab import Command

SAMPLE_TIMES = ("pin_time_us", "consumer_time_us", "consumer_artifact_time_us", "call_wall_time_us")

Tables = dict[str, "pd.DataFrame | None"]


def check_run(kind: str, tables: Tables, manifest: dict[str, Any], path: Path, damage: Damage) -> Tables:
    """The run's tables after the whole-run rules (rows that break them dropped in the partial mode)."""
    tables = dict(tables)      # (the manifest was checked first: analysis/load.py read_run)
    if kind == Command.LADDER and tables.get("cells") is not None:
        measure = typed(manifest, model=LadderManifest).measure or Measure()
        if not measure.trace and measure.profiles:
            for name, table in (("cells", CELLS), ("samples", SAMPLES)):   # the more telling line first
                if tables.get(name) is not None:
                    tables[name] = check_declared_profiles(tables[name], manifest, path, damage, table,
                                                           measure.profiles)
        if tables.get("samples") is None:
            damage.found(f"{path / SAMPLES.filename}: missing; a ladder run keeps the samples its "
                         f"{CELLS.filename} summarises (the spread tables and this check need them)")
        else:
            tables["cells"] = check_cells_against_samples(tables["samples"], tables["cells"], path, damage)
            samples = tables["samples"]
            odd = rules.one_pattern(samples, ("family", "rung", "pin", "profile", "l2_state", "repeat"), SAMPLE_TIMES,
                                    str(path / SAMPLES.filename), damage, "a repeat is timed by one timer")
            odd |= check_repeats_declared(samples, manifest, str(path / SAMPLES.filename), damage)
            check_timer_named(samples, measure, path, damage)
            tables["samples"] = samples[~odd].reset_index(drop=True) if odd.any() else samples
    if kind == Command.PROFILE and tables.get("metrics") is not None:
        check_profile_manifest(tables["metrics"], manifest, path, damage)
        tables["metrics"] = check_declared_profiles(tables["metrics"], manifest, path, damage)
        tables["metrics"] = check_derived_metrics(tables["metrics"], path, damage)
    if kind == Command.TIMELINE and typed(manifest, model=TimelineManifest).method != "nsys":
        check_timeline(tables.get("timeline"), tables.get("phases"), manifest, path, damage)
    return tables


def check_timer_named(samples: pd.DataFrame, measure: Measure, path: Path, damage: Damage) -> None:
    """A ladder run whose samples carry the kernel timer's flag (timer_discard) names its timer: the
    writer that records the flag records measure.timer too, and a run without it is read as a spin
    run of before the blocking timer (the report would name the wrong timer and judge launch lag by
    the spin's rule)."""
    if "timer_discard" in samples.columns and not measure.timer:
        damage.found(f"{path}/manifest.json: measure.timer must be present in a ladder run whose "
                     f"{SAMPLES.filename} has timer_discard (found {measure.timer!r}): every writer of "
                     "that column records its kernel timer")


def check_declared_profiles(metrics: pd.DataFrame, manifest: dict[str, Any], path: Path,
                            damage: Damage, table: Any = METRICS, declared: Any = None) -> pd.DataFrame:
    """A run's rows name the reuse profiles its manifest lists (a profile run's `profiles`, a
    ladder's `measure.profiles`): a row of another profile is a key that resolves to nothing the
    run measured."""
    declared = typed(manifest, model=ProfileManifest).profiles if declared is None else declared
    if not isinstance(declared, list) or "profile" not in metrics.columns:
        return metrics
    named = metrics["profile"].notna() & ~metrics["profile"].astype(str).isin(("", "None"))
    bad = rules.flag(damage, str(path / table.filename), named & ~metrics["profile"].astype(str).isin(
        list(map(str, declared))), f"column profile must be one the manifest lists ({', '.join(map(str, declared))})",
        lambda row: repr(metrics["profile"].iloc[row]))
    return metrics[~bad].reset_index(drop=True) if bad.any() else metrics


def check_repeats_declared(samples: pd.DataFrame, manifest: dict[str, Any], source: str, damage: Damage) -> pd.Series:
    """A sample's repeat index is one the run made: below measure.repeats device repeats plus as many
    host repeats (ladders/measure/run.py alternates them); a larger index names a repeat that never ran. An
    adaptive run (measure.target_rel set) may run up to measure.max_repeats rounds."""
    measure = typed(manifest, model=LadderManifest).measure or Measure()
    adaptive = measure.target_rel is not None
    key = "max_repeats" if adaptive else "repeats"
    declared = measure.max_repeats if adaptive else measure.repeats
    if declared is None or "repeat" not in samples or samples.empty:
        return pd.Series(False, index=samples.index)
    repeat = pd.to_numeric(samples["repeat"], errors="coerce")
    return rules.flag(damage, source, (repeat < 0) | (repeat >= 2 * declared), f"a repeat index beyond the "
                      f"{2 * declared} repeats (device and host) the manifest declares (measure.{key} {declared})",
                      lambda row: f"{repeat.iloc[row]:g}")


# -- units.csv of a distributed run --------------------------------------------------------------
# Which GPU and worker measured each unit, read as a table of the run like any other (typed, keys
# unique and resolving), not left beside it unread. Why: the report takes each cell's GPU from
# cells.csv (gpu_uuid) and the GPUs' facts from the manifest (gpus); units.csv is the record that
# ties the two to the units the scheduler ran. A unit named twice, a GPU the manifest does not know,
# a unit whose cells are not in cells.csv or were measured by another GPU than the one the unit
# names: each is a run whose record contradicts its data, refused with one line like every other
# table's damage.

UNITS_TEXT = ("unit", "gpu_uuid", "gpu_name", "host", "worker", "started_utc")
LADDER_UNIT = "ladder"


def _iso(value: Any) -> bool:
    try:
        datetime.fromisoformat(str(value))
    except ValueError:
        return False
    return True


def check_units(units: pd.DataFrame, cells: pd.DataFrame | None, manifest: dict[str, Any], source: str,
                path: Path, damage: Damage) -> pd.DataFrame:
    """The units that obey the contract (the others through `damage`)."""
    units = typed_columns(units, {"wall_s": (False, True)}, UNITS_TEXT, source, damage).reset_index(drop=True)
    bad = rules.filled(units, ("unit", "gpu_uuid"), source, damage)
    bad |= rules.unique_keys(units, UNITS.key, source, damage)
    bad |= rules.flag(damage, source, ~units["started_utc"].map(_iso), "column started_utc must be an ISO 8601 time",
                      lambda row: repr(units["started_utc"].iloc[row]))
    gpus = typed(manifest).gpus
    if gpus is not None:
        bad |= rules.flag(damage, source, units["gpu_uuid"].notna() & ~units["gpu_uuid"].isin(list(gpus)),
                          "column gpu_uuid must be a GPU the manifest lists (gpus)",
                          lambda row: repr(units["gpu_uuid"].iloc[row]))
    units = units[~bad].reset_index(drop=True)
    if cells is not None and not cells.empty and {"gpu_uuid", "family", "profile"} <= set(cells.columns):
        _check_ladder_units(units, cells, source, path, damage)
    return units


def _check_ladder_units(units: pd.DataFrame, cells: pd.DataFrame, source: str, path: Path, damage: Damage) -> None:
    """`ladder:<family>:<profile>` units: their cells are in cells.csv, measured by the unit's GPU."""
    parts = units["unit"].astype(str).str.split(":")
    ladder = parts.map(lambda p: len(p) == 3 and p[0] == LADDER_UNIT)
    if not ladder.any():
        return
    by_unit = {(p[1], p[2]): str(g) for p, g, is_l in zip(parts, units["gpu_uuid"], ladder) if is_l}
    measured = cells.groupby([cells["family"].astype(str), cells["profile"].astype(str)])["gpu_uuid"].agg(
        lambda s: set(s.dropna().astype(str)))
    unknown = [i for i, (p, is_l) in enumerate(zip(parts, ladder)) if is_l and (p[1], p[2]) not in measured.index]
    if unknown:
        damage.found(f"{source}:{unknown[0] + 2}: unit {units['unit'].iloc[unknown[0]]} has no cells in "
                     f"{CELLS.filename} (a unit key that resolves to nothing)")
    for (family, profile), seen in measured.items():
        gpu = by_unit.get((family, profile))
        if gpu is None:
            continue        # measured inside another unit (the reference family rides with one)
        if seen and seen != {gpu}:
            damage.found(f"{path / CELLS.filename}: cells of {family}/{profile} name GPU {', '.join(sorted(seen))}, "
                         f"but {UNITS.filename} says unit ladder:{family}:{profile} ran on {gpu}")
            return


# -- runs combined in one report: one workload on one kind of GPU, or a comparison ---------------
# Why one rule for every kind: ladder and profile runs of different configs were refused, but a
# sweep of 500K rows was quietly reported beside a ladder of 100K rows (its break-even quoted in the
# verdict), and an "A100" ladder beside an H200 profile. The identity of a run is its workload
# config (the shape the kernels read) and its GPU (name, L2 size, UUID where both runs record one);
# any difference is refused in one line, or with `--allow-mixed` written at the top of the report
# as a comparison.

# The GPU: its kind (name, L2 size) and, where both runs record it, the physical device (uuid):
# two GPUs of one kind differ by a percent or two in HBM bandwidth, so their cells are two
# measurements, not one.
GPU_FIELDS = ("name", "l2_bytes", "uuid")


def identity(manifest: dict[str, Any]) -> dict[str, Any]:
    """The facts two runs must share to be read as one study: config keys and gpu.<field>."""
    facts = typed(manifest)
    out = {f"config.{k}": v for k, v in (facts.config or {}).items()}
    gpu = facts.gpu or Gpu()
    out.update({f"gpu.{k}": v for k, v in zip(GPU_FIELDS, (gpu.name, gpu.l2_bytes, gpu.uuid)) if v is not None})
    return out


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """'key: a vs b' for each identity fact that differs (or that only one manifest records);
    config keys are named as before (`rows: ...`), GPU facts as `gpu.name: ...`."""
    ia, ib = identity(a), identity(b)
    out = []
    for key in sorted(set(ia) | set(ib), key=lambda k: (k.startswith("gpu."), k)):
        if key.startswith("gpu.") and key != "gpu.name" and not (key in ia and key in ib):
            continue    # a GPU fact only one writer records (older runs) is no difference
        va, vb = ia.get(key, "<absent>"), ib.get(key, "<absent>")
        if va != vb:
            out.append(f"{key.removeprefix('config.')}: {va!r} vs {vb!r}")
    return out


def combine(named: list[tuple[str, dict[str, Any]]], allow_mixed: bool) -> tuple[list[str], set[str]]:
    """Compare every run with the first: (the caveats to put at the top, the names of runs that
    differ). Refused in one line unless `allow_mixed`."""
    notes: list[str] = []
    differing: set[str] = set()
    if not named:
        return notes, differing
    first_name, first = named[0]
    for name, manifest in named[1:]:
        diff = differences(first, manifest)
        if not diff:
            continue
        message = f"runs {first_name} and {name} differ in workload or GPU ({'; '.join(diff)})"
        if not allow_mixed:
            raise UserError(message + "; combine runs of one workload on one GPU, or pass --allow-mixed "
                                      "to show them as a comparison")
        notes.append(message + "; shown side by side as a comparison (--allow-mixed), not as one "
                               "measurement: compare with care")
        differing.add(name)
    return notes, differing
