"""Read a sweep run dir (manifest + sweep_points.csv + sweep_samples.csv) for the sweep analyses,
and a check recorded beside it (the occupy axis' Nsight Compute retention check, occupy_ncu.json).

The same integrity rules as the ladder's tables (csvfile, RunDir.read): a cut or damaged file is
one line, or with --allow-partial its intact rows are kept and the problem listed. Medians must
be present, finite and non-negative.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.sweep import axes
from l2attr.sweep.table import SWEEP_POINTS, SWEEP_SAMPLES
from l2attr.errors import STRICT, Damage, UserError
from l2attr.integrity.manifest import check_manifest
from l2attr.manifest_model import SweepManifest, SweepSection, recorded, typed
from l2attr.sweep.check.points import check_sweep_tables
from l2attr.rundir import MANIFEST, RunDir
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

    @cached_property
    def facts(self) -> SweepManifest:
        """The manifest through the sweep's model (what check_manifest said reads as absent)."""
        return typed(self.manifest, model=SweepManifest)

    @property
    def spec(self) -> axes.AxisSpec:
        """The axis' declaration (sweep/axes/): a former name reads as it was run."""
        return axes.axis_spec(self.facts.sweep.axis)

    @property
    def axis(self) -> Any:
        return self.spec.axis

    @property
    def config(self) -> dict[str, Any]:
        return dict(self.facts.config or {})

    def limit(self, key: str) -> float | None:
        """A device limit the run recorded (l2CacheSize, persistingL2CacheMaxSize, accessPolicyMaxWindowSize)."""
        v = (self.facts.limits or {}).get(key)
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
    return typed(m).kind if isinstance(m, dict) else None


def is_sweep_dir(path: Path) -> bool:
    return manifest_kind(path) == Command.SWEEP


def load_sweep(path: Path, damage: Damage = STRICT) -> SweepRun:
    run = RunDir.open(Path(path))
    m = run.manifest()
    kind = recorded(m, "kind")
    if kind != Command.SWEEP or not isinstance(recorded(m, "sweep"), dict):
        raise UserError(f"{path}: not a sweep run dir (manifest kind {kind!r})")
    check_manifest(m, run.path, damage)      # typed before the declaration is read
    axis = (typed(m, model=SweepManifest).sweep or SweepSection()).axis
    if axis not in axes.REGISTERED:
        raise UserError(f"{path}/{MANIFEST}: unknown sweep axis {axis!r}")
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


# -- a recorded check beside a sweep run ---------------------------------------------------------
# The Nsight Compute retention check of the occupy axis (tools/capacity_ncu_check.py --run RUN_DIR
# -> RUN_DIR/occupy_ncu.json). Why it is read here: the occupy sweep holds part of L2 with
# evict_last lines; it would emulate a smaller L2 only if those lines stayed through a cell's
# traffic. The check measured how many did (DRAM bytes of reading them again after the traffic,
# against a normal-priority control), and the report prints that beside the sweep rather than a
# label the sweep cannot back.

STAYS = 0.9      # retained share from which the held lines count as staying (a smaller L2)
EVICT_LAST, NORMAL = "evict_last", "normal"      # the probe's two arms (l2attr/sweep/measure/occupy_probe.py)


@dataclass
class RetentionCheck:
    source: Path
    traffic_mib: float = math.nan
    rows: list[dict[str, Any]] = field(default_factory=list)   # occupy_mib, arm, retained_share, ...
    problem: str = ""

    def retained(self, arm: str) -> dict[float, float]:
        return {float(r["occupy_mib"]): float(r["retained_share"]) for r in self.rows if r.get("arm") == arm}

    @property
    def stays(self) -> bool | None:
        held = self.retained(EVICT_LAST)
        return None if not held else min(held.values()) >= STAYS

    def lines(self) -> list[str]:
        """What the report prints beside the sweep."""
        head = f"Nsight Compute check of the held lines (tools/capacity_ncu_check.py, {self.source.name})"
        if self.problem:
            return [f"{head}: {self.problem}"]
        held, control = self.retained(EVICT_LAST), self.retained(NORMAL)
        if not held:
            return [f"{head}: no evict_last probe recorded"]
        parts = [f"{mib:g} MiB held: {share * 100:.1f} % still in L2 (normal-priority control "
                 f"{control.get(mib, math.nan) * 100:.1f} %)" for mib, share in sorted(held.items())]
        lines = [f"{head}, after {self.traffic_mib:g} MiB of other traffic: " + "; ".join(parts) + "."]
        lines.append("The held lines stay through the traffic: the points emulate a smaller L2." if self.stays else
                     f"The held lines do not stay through the traffic (below {STAYS * 100:.0f} % retained): the "
                     "points measure L2 partly held by evict_last lines, not a smaller L2.")
        return lines


def read_check(path: Path) -> RetentionCheck | None:
    """The check recorded at `path`, None when there is none; an unreadable one says why."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        d = json.loads(path.read_text())
        code = d.get("returncode")
        if code is not None and code != 0:       # ncu failed: its rows (if any) are not the check's
            return RetentionCheck(path, problem=f"not usable: Nsight Compute exited {code!r} (returncode), "
                                  "so its figures are not the check's; run tools/capacity_ncu_check.py again")
        rows = [r for r in d["results"] if isinstance(r, dict) and {"occupy_mib", "arm", "retained_share"} <= set(r)]
        for i, r in enumerate(rows):
            wrong = _row_problem(r)
            if wrong:
                return RetentionCheck(path, problem=f"unreadable (result {i}: {wrong})")
        return RetentionCheck(path, float(d.get("traffic_mib", math.nan)), rows)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
        return RetentionCheck(path, problem=f"unreadable ({type(e).__name__}: {str(e)[:120]})")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _row_problem(r: dict[str, Any]) -> str:
    """What is wrong with one probe result, or "": the report prints these figures as they stand."""
    if not (_number(r["occupy_mib"]) and r["occupy_mib"] > 0):
        return f"occupy_mib must be a finite number > 0 (found {r['occupy_mib']!r})"
    if r["arm"] not in (EVICT_LAST, NORMAL):
        return f"arm must be {EVICT_LAST} or {NORMAL} (found {r['arm']!r})"
    if not (_number(r["retained_share"]) and -1.0 <= r["retained_share"] <= 1.0):
        return f"retained_share must be a finite share in [-1, 1] (found {r['retained_share']!r})"
    return ""
