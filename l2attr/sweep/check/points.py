"""Every point and unit a sweep's manifest declares is in its tables, and nothing else is.

Why: sweep_points.csv is rewritten whole after each point, so a copy cut at a row boundary is
still a valid CSV; the amortisation sweep cut by 40 rows moved the interleaved break-even from
"> 32" to "> 4" without a word. The manifest says which families, profiles, points and arms the
sweep measured (sweep/declare.py makes the points from it), and sweep_units.csv records each
finished (point, arm, repeat, mode): both are checked against it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.integrity import rules
from l2attr.errors import Damage
from l2attr.integrity.tables import check_table
from l2attr.manifest_model import SweepManifest, SweepSection, typed
from l2attr.sweep.check.tables import CONTRACTS
from l2attr.sweep.declare import recorded
from l2attr.sweep.table import SWEEP_POINTS, SWEEP_SAMPLES, SWEEP_UNITS
from l2attr.vocab import SweepAxis, RepeatMode, Quantity, Timer

ARM_KEY = ("family", "profile", "point", "arm")


def declared_arms(manifest: dict[str, Any]) -> list[tuple[str, str, str, str]] | None:
    """(family, profile, point, arm) of every arm the manifest's settings measure; None when the
    settings cannot be read back (the manifest check names what is wrong with them)."""
    got = recorded(manifest)
    if got is None:
        return None
    opts, _, pts = got
    return [(f.value, p, pt.point, a.value) for f in opts.families for p in opts.profiles
            for pt in pts for a in pt.arms]


def declared_units(manifest: dict[str, Any]) -> list[tuple[str, ...]] | None:
    arms = declared_arms(manifest)
    if arms is None:
        return None
    s = typed(manifest, model=SweepManifest).sweep or SweepSection()
    host = s.host_repeat if "host_repeat" in s.model_fields_set else True
    modes = [RepeatMode.DEVICE.value] + ([RepeatMode.HOST.value] if host else [])
    # an adaptive sweep (sweep/measure/adaptive.py) declares only its minimum: a point may stop there
    rule = s.adaptive.model_dump(exclude_unset=True) if s.adaptive is not None else {}
    repeats = rule.get("min_repeats") if rule else s.repeats
    if repeats is None:
        return None                  # not a count: the typed manifest check names the field
    return [(*a, str(r), m) for a in arms for r in range(int(repeats)) for m in modes]


def _keys(df: pd.DataFrame, columns: tuple[str, ...]) -> set[tuple[str, ...]]:
    return set(map(tuple, df[list(columns)].astype(str).to_numpy().tolist()))


def check_points(points_df: pd.DataFrame, manifest: dict[str, Any], path: Path, damage: Damage) -> pd.DataFrame:
    """Every declared arm has its consumer median; rows of arms the manifest does not declare are
    refused (and dropped in the partial mode)."""
    arms = declared_arms(manifest)
    if arms is None or points_df.empty:
        return points_df
    source = f"{path}/{SWEEP_POINTS.filename}"
    declared = set(arms)
    ident = points_df[list(ARM_KEY)].astype(str).apply(tuple, axis=1)
    stray = ~ident.isin(declared)
    if stray.any():
        row = int(stray.to_numpy().argmax())
        damage.found(f"{source}:{row + 2}: {'/'.join(map(str, ident.iloc[row]))} is not a point arm manifest.json "
                     "declares (family, profile, point and arm must be the sweep's)")
        points_df = points_df[~stray].reset_index(drop=True)
    consumer = points_df[(points_df["quantity"] == Quantity.CONSUMER) & (points_df["timer"] == Timer.KERNEL)]
    have = _keys(consumer, ARM_KEY)
    missing = [a for a in arms if a not in have]
    if missing:
        damage.found(f"{source}: {len(missing)} of the {len(arms)} point arms manifest.json declares have "
                     f"no consumer median, first {'/'.join(map(str, missing[0]))} (the file was cut, or the sweep "
                     "stopped early: `l2attr sweep --resume` completes it)")
    return points_df


def check_units(units: pd.DataFrame | None, manifest: dict[str, Any], path: Path, damage: Damage) -> None:
    """sweep_units.csv holds one row per finished unit: all the manifest declares."""
    declared = declared_units(manifest)
    if declared is None:
        return
    source = f"{path}/{SWEEP_UNITS.filename}"
    if units is None:
        damage.found(f"{source}: missing; a sweep records every finished unit there (deleted, or the "
                     "sweep stopped before its first unit?)")
        return
    have = _keys(units, (*ARM_KEY, "repeat", "mode"))
    missing = [u for u in declared if u not in have]
    if missing:
        damage.found(f"{source}: {len(missing)} of the {len(declared)} units manifest.json declares are "
                     f"missing, first {'/'.join(map(str, missing[0]))} (cut, or the sweep stopped early)")


def _numbers(df: pd.DataFrame, columns: tuple[str, ...], source: str, damage: Damage) -> pd.DataFrame:
    """Numeric columns parsed; a missing, unreadable or infinite value is refused (row dropped)."""
    from l2attr.integrity.rules import flag

    for c in columns:
        values = pd.to_numeric(df[c], errors="coerce")
        bad = flag(damage, source, values.isna() | values.isin([float("inf"), float("-inf")]),
                   f"column {c} must be a finite number",
                   lambda row, c=c, df=df: repr(df[c].iloc[row]))
        df, values = df[~bad].copy(), values[~bad]
        df[c] = values
    return df.reset_index(drop=True)


def _one_x_per_point(points_df: pd.DataFrame, path: Path, damage: Damage) -> None:
    """A point is one value of its axis: every row of it (each family, arm, quantity) holds the same
    x. One row's x edited moved that row to another place on the chart and in the tables, silently."""
    if points_df.empty or not {"axis", "point", "x"} <= set(points_df.columns):
        return
    many = points_df.groupby(["axis", "point"])["x"].nunique(dropna=False)
    if (many > 1).any():
        axis, point = many.index[many > 1][0]
        damage.found(f"{path}/{SWEEP_POINTS.filename}: point {point} of axis {axis} holds more than one x "
                     "(a point is one value of its axis)")


def check_sweep_tables(run: Any, manifest: dict[str, Any], points_df: pd.DataFrame, path: Path,
                       damage: Damage) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The sweep's points after their row contract and the manifest's declaration, and its DRAM
    table (or None) after its own; sweep_units.csv is checked on the way. `run`: its RunDir."""
    from l2attr.sweep.check.declared import check_dram_rows, check_quantities
    from l2attr.sweep.measure.dram import SWEEP_DRAM

    points_df = check_table(points_df, SWEEP_POINTS.name, f"{path}/{SWEEP_POINTS.filename}", damage, CONTRACTS)
    points_df = check_point_ranges(points_df, manifest, path, damage)
    points_df = check_points(points_df, manifest, path, damage)
    _one_x_per_point(points_df, path, damage)
    check_quantities(points_df, manifest, path, damage)
    units = None
    if run.has(SWEEP_UNITS):
        source = f"{path}/{SWEEP_UNITS.filename}"
        units = _numbers(run.read(SWEEP_UNITS, damage), ("repeat", "rows"), source, damage)
        units = check_table(units, SWEEP_UNITS.name, source, damage, CONTRACTS)
        units["repeat"] = units["repeat"].astype(int)
    check_units(units, manifest, path, damage)
    if run.has(SWEEP_SAMPLES):   # not in every copy of a run (sweep/check/samples.py says why)
        points_df = _check_samples(run, units, points_df, path, damage)
    dram = None
    if run.has(SWEEP_DRAM):
        source = f"{path}/{SWEEP_DRAM.filename}"
        dram = run.read(SWEEP_DRAM, damage)
        for c in ("family", "profile", "point", "arm", "role"):
            dram[c] = dram[c].astype(str)
        dram = _numbers(dram, ("table", "group", "position", "dram_read_bytes"), source, damage)
        dram = check_table(dram, SWEEP_DRAM.name, source, damage, CONTRACTS)
        check_dram_rows(dram, manifest, path, damage)
    return points_df, dram


SAMPLE_NUMBERS = ("k", "repeat", "group", "table", "batch", "position", "time_us")


def _check_samples(run: Any, units: pd.DataFrame | None, points_df: pd.DataFrame, path: Path,
                   damage: Damage) -> pd.DataFrame:
    """sweep_samples.csv after its row contract, against the units that appended it and the
    points made from it; returns the points that agree with their samples."""
    from l2attr.sweep.check.samples import check_points_against_samples, check_samples_against_units

    source = f"{path}/{SWEEP_SAMPLES.filename}"
    samples = _numbers(run.read(SWEEP_SAMPLES, damage), SAMPLE_NUMBERS, source, damage)
    samples = check_table(samples, SWEEP_SAMPLES.name, source, damage, CONTRACTS)
    for c in ("repeat", "group", "table", "position"):
        samples[c] = samples[c].astype(int)
    check_samples_against_units(samples, units, path, damage)
    return check_points_against_samples(points_df, samples, path, damage)


def check_point_ranges(points: pd.DataFrame, manifest: dict[str, Any], path: Path, damage: Damage) -> pd.DataFrame:
    """Values a point can take: a hit ratio is a share (0..1); a hotset point's hot set is one of
    the sizes the manifest declares (a size edited to another, e.g. more hot rows than the table
    has, names a point that was never measured)."""
    source = f"{path}/{SWEEP_POINTS.filename}"
    bad = pd.Series(False, index=points.index)
    if "hit_ratio" in points.columns:
        ratio = pd.to_numeric(points["hit_ratio"], errors="coerce")
        bad |= rules.flag(damage, source, (ratio < 0) | (ratio > 1), "column hit_ratio must lie in [0, 1]",
                          lambda row: f"{ratio.iloc[row]:g}")
    t = typed(manifest, model=SweepManifest)
    declared = t.sweep.hot_rows if t.sweep is not None else None
    default = (t.config or {}).get("hot_rows")
    on_axis = points["axis"].astype(str) == SweepAxis.HOTSET.value if "axis" in points.columns else None
    if "hot_rows" in points.columns and isinstance(declared, list) and on_axis is not None and on_axis.any():
        allowed = {float(v) for v in [*declared, default] if isinstance(v, (int, float)) and not isinstance(v, bool)}
        hot = pd.to_numeric(points["hot_rows"], errors="coerce")
        bad |= rules.flag(damage, source, on_axis & ~hot.isin(allowed), "column hot_rows must be a hot-set size the "
                          "manifest declares (sweep.hot_rows, or config.hot_rows)", lambda row: f"{hot.iloc[row]:g}")
    return points[~bad].reset_index(drop=True) if bad.any() else points
