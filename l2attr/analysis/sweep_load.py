"""Read a sweep run dir (manifest + sweep_points.csv + sweep_samples.csv) for the sweep analyses.

The same integrity rules as the ladder's tables (csvfile, RunDir.read): a cut or damaged file is
one line, or with --allow-partial its intact rows are kept and the problem listed. Medians must
be present, finite and non-negative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.errors import STRICT, Damage, UserError
from l2attr.integrity.manifest import check_manifest
from l2attr.integrity.sweep import check_sweep_tables
from l2attr.rundir import MANIFEST, RunDir
from l2attr.dlrm.sweep import axes
from l2attr.dlrm.sweep.tables import SWEEP_POINTS, SWEEP_SAMPLES
from l2attr.vocab import Command, Timer

NUMERIC = ("x", "k", "hot_rows", "hit_ratio", "occupy_bytes", "pollute_bytes", "n_samples", "median_us",
           "p10_us", "p90_us", "ci95_lo_us", "ci95_hi_us")
TEXT = ("axis", "family", "pin", "profile", "point", "order", "arm", "quantity", "timer")


@dataclass
class SweepRun:
    name: str
    path: Path
    manifest: dict[str, Any]
    points: pd.DataFrame
    damage: list[str] = field(default_factory=list)
    dram: pd.DataFrame | None = None      # sweep_dram.csv (`l2attr sweep --profile`), when present

    @property
    def spec(self) -> axes.AxisSpec:
        """The axis' declaration (dlrm/sweep/axes/): a former name reads as it was run."""
        return axes.axis_spec(self.manifest["sweep"]["axis"])

    @property
    def axis(self) -> Any:
        return self.spec.axis

    @property
    def config(self) -> dict[str, Any]:
        return dict(self.manifest.get("config") or {})

    def limit(self, key: str) -> float | None:
        """A device limit the run recorded (l2CacheSize, persistingL2CacheMaxSize, accessPolicyMaxWindowSize)."""
        v = (self.manifest.get("limits") or {}).get(key)
        return float(v) if isinstance(v, (int, float)) and v > 0 else None

    def samples(self) -> pd.DataFrame:
        """The raw samples (read on demand: they are large)."""
        return RunDir(self.path).read(SWEEP_SAMPLES)


def manifest_kind(path: Path) -> str | None:
    """The `kind` of a run dir's manifest, or None when it has none readable."""
    from l2attr.rundir import read_manifest

    if not (Path(path) / MANIFEST).is_file():
        return None
    try:
        m = read_manifest(Path(path) / MANIFEST)
    except UserError:
        return None
    return m.get("kind") if isinstance(m, dict) else None


def is_sweep_dir(path: Path) -> bool:
    return manifest_kind(path) == Command.SWEEP


def load_sweep(path: Path, damage: Damage = STRICT) -> SweepRun:
    run = RunDir.open(Path(path))
    m = run.manifest()
    if m.get("kind") != Command.SWEEP or not isinstance(m.get("sweep"), dict):
        raise UserError(f"{path}: not a sweep run dir (manifest kind {m.get('kind')!r})")
    check_manifest(m, run.path, damage)      # typed before the declaration is read
    if m["sweep"].get("axis") not in axes.REGISTERED:
        raise UserError(f"{path}/{MANIFEST}: unknown sweep axis {m['sweep'].get('axis')!r}")
    if not run.has(SWEEP_POINTS):
        damage.found(f"{path}: a sweep run without {SWEEP_POINTS.filename} (interrupted before its first "
                     "point finished? `l2attr sweep --resume` completes it)")
        return SweepRun(Path(path).resolve().name, Path(path), m, pd.DataFrame(columns=list(SWEEP_POINTS.columns)),
                        list(damage.messages))
    points = run.read(SWEEP_POINTS, damage)
    source = f"{path}/{SWEEP_POINTS.filename}"
    for c in TEXT:
        points[c] = points[c].astype(str)
    for c in NUMERIC:
        values = pd.to_numeric(points[c], errors="coerce")
        bad = values.isna() | values.isin([math.inf, -math.inf]) | (values < 0)
        if c in ("ci95_lo_us", "ci95_hi_us"):
            bad = values.isin([math.inf, -math.inf]) | (values < 0)
        if bad.any():
            row = int(bad.to_numpy().argmax())
            damage.found(f"{source}:{row + 2}: column {c} has a value that is missing, not finite or negative "
                         f"({points[c].iloc[row]!r})")
            points, values = points[~bad].copy(), values[~bad]
        points[c] = values.astype(float)
    if points.empty:
        damage.found(f"{source}: no points (interrupted?)")
    # the sweep's integrity contract: row rules, declared points and units, sweep_dram.csv
    points, dram = check_sweep_tables(run, m, points, Path(path), damage)
    return SweepRun(Path(path).resolve().name, Path(path), m, points.reset_index(drop=True), list(damage.messages),
                    dram)


def median(points: pd.DataFrame, quantity: str, timer: str = Timer.KERNEL.value, **where: Any) -> pd.Series:
    """Median per (family, pin, profile, point) of one quantity, filtered by `where` columns."""
    sel = points[(points["quantity"] == quantity) & (points["timer"] == timer)]
    for column, value in where.items():
        sel = sel[sel[column] == value]
    return sel.set_index(["family", "profile", "point"])["median_us"]
