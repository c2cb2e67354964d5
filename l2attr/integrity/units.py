"""units.csv of a distributed run: which GPU and worker measured each unit, read as a table of
the run like any other (typed, keys unique and resolving), not left beside it unread.

Why: the report takes each cell's GPU from cells.csv (gpu_uuid) and the GPUs' facts from the
manifest (gpus); units.csv is the record that ties the two to the units the scheduler ran. A unit
named twice, a GPU the manifest does not know, a unit whose cells are not in cells.csv or were
measured by another GPU than the one the unit names: each is a run whose record contradicts its
data, refused with one line like every other table's damage.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.errors import Damage
from l2attr.integrity import rules
from l2attr.integrity.columns import typed_columns
from l2attr.schema import CELLS, UNITS

TEXT = ("unit", "gpu_uuid", "gpu_name", "host", "worker", "started_utc")
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
    units = typed_columns(units, {"wall_s": (False, True)}, TEXT, source, damage).reset_index(drop=True)
    bad = rules.filled(units, ("unit", "gpu_uuid"), source, damage)
    bad |= rules.unique_keys(units, UNITS.key, source, damage)
    bad |= rules.flag(damage, source, ~units["started_utc"].map(_iso), "column started_utc must be an ISO 8601 time",
                      lambda row: repr(units["started_utc"].iloc[row]))
    gpus = manifest.get("gpus")
    if isinstance(gpus, dict):
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
