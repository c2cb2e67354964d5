"""Load run directories and combine them into one study.

A report usually combines a ladder run (layer A: samples.csv + cells.csv) with a profile run
(layer B: metrics.csv) of the same workload. Combining runs of different workloads would put
numbers side by side that do not belong together, so configs are compared key by key and a
difference is refused in one line (unless the caller allows it, and then it becomes a caveat).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.errors import UserError
from l2attr.rundir import MANIFEST, RunDir
from l2attr.schema import CELLS, METRICS, PHASES, SAMPLES, TIMELINE, Table, empty

RUN_KINDS = ("ladder", "profile", "timeline")
KNOWN_QUANTITIES = ("pin", "consumer", "kernels", "call")

# Columns that must hold numbers; a stray word there is a broken table, not a missing value.
NUMERIC_COLUMNS: dict[str, tuple[str, ...]] = {
    SAMPLES.name: ("repeat", "batch", "table", "pin_time_us", "consumer_time_us",
                   "consumer_artifact_time_us", "call_wall_time_us"),
    CELLS.name: ("n_samples", "median_us", "p10_us", "p90_us", "ci95_lo_us", "ci95_hi_us",
                 "bytes_per_call", "achieved_GBps"),
    METRICS.name: ("table", "batch", "value"),
    TIMELINE.name: ("t_us", "value"),
    PHASES.name: ("start_us", "end_us", "duration_us", "samples"),
}
# Columns used as keys or labels: read as text so "0" and 0 never disagree between runs.
TEXT_COLUMNS: dict[str, tuple[str, ...]] = {
    SAMPLES.name: ("family", "rung", "pin", "profile", "l2_state"),
    CELLS.name: ("family", "rung", "pin", "profile", "l2_state", "quantity", "timer"),
    METRICS.name: ("cell", "condition", "role", "family", "rung", "pin", "profile", "kernel",
                   "nvtx_range", "metric", "unit"),
    TIMELINE.name: ("range", "quantity", "unit", "metric"),
    PHASES.name: ("range", "phase"),
}


@dataclass(frozen=True)
class Run:
    """One run directory as read from disk: its manifest and whichever tables it has."""

    name: str
    path: Path
    manifest: dict[str, Any]
    samples: pd.DataFrame | None
    cells: pd.DataFrame | None
    metrics: pd.DataFrame | None
    timeline: pd.DataFrame | None = None
    phases: pd.DataFrame | None = None

    @property
    def kind(self) -> str:
        return str(self.manifest["kind"])


@dataclass
class Study:
    """Several runs of one workload, their tables concatenated with a `run` column naming the source."""

    runs: list[Run]
    config: dict[str, Any]
    samples: pd.DataFrame
    cells: pd.DataFrame
    metrics: pd.DataFrame
    notes: list[str] = field(default_factory=list)   # load-time caveats (duplicates dropped, mixed configs)
    timeline: pd.DataFrame = field(default_factory=pd.DataFrame)   # PM samples (timeline runs)
    phases: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def has_layer_a(self) -> bool:
        return not self.cells.empty

    @property
    def has_layer_b(self) -> bool:
        return not self.metrics.empty

    def runs_of_kind(self, kind: str) -> list[Run]:
        return [r for r in self.runs if r.kind == kind]

    def hbm_copy_GBps(self) -> tuple[float | None, str]:
        """The measured HBM copy bandwidth and the run it came from (ladder runs measure it)."""
        return self.measured("hbm_copy_GBps")

    def measured(self, key: str) -> tuple[float | None, str]:
        """A bandwidth a ladder run measured (hbm_copy_GBps, hbm_read_GBps, l2_read_GBps) and
        where it came from; None with the reason when no run recorded it."""
        ordered = self.runs_of_kind("ladder") + [r for r in self.runs if r.kind != "ladder"]
        for run in ordered:
            value = run.manifest.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                return float(value), f"{run.name}/{MANIFEST}[{key}]"
        return None, f"no run's manifest records {key}"


def load_runs(paths: list[Path] | list[str], allow_mixed: bool = False) -> Study:
    """Read the run dirs, check they describe one workload, and concatenate their tables."""
    if not paths:
        raise UserError("give at least one run dir")
    runs = [read_run(Path(p)) for p in paths]
    names = [r.name for r in runs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UserError(f"run dir given twice: {', '.join(dupes)}")
    notes: list[str] = []
    first = runs[0]
    for other in runs[1:]:
        diff = config_differences(first.manifest["config"], other.manifest["config"])
        if diff:
            message = (f"runs {first.name} and {other.name} have different workload configs "
                       f"({'; '.join(diff)})")
            if not allow_mixed:
                raise UserError(message + "; combine runs of one config, or pass --allow-mixed")
            notes.append(message + "; combined anyway (--allow-mixed): compare with care")
    # Ladder runs first, so that where two runs measured the same cell the ladder run's row wins.
    ordered = sorted(runs, key=lambda r: 0 if r.kind == "ladder" else 1)
    tables = {}
    for table in (SAMPLES, CELLS, METRICS, TIMELINE, PHASES):
        frames = [getattr(r, table.name).assign(run=r.name) for r in ordered
                  if getattr(r, table.name) is not None]
        tables[table.name] = _combine(table, frames, notes)
    return Study(runs=runs, config=dict(first.manifest["config"]), samples=tables["samples"],
                 cells=tables["cells"], metrics=tables["metrics"], notes=notes,
                 timeline=tables["timeline"], phases=tables["phases"])


def read_run(path: Path) -> Run:
    """Open one run dir: manifest checks, then each table it has, with numbers checked."""
    manifest_path = path / MANIFEST
    if path.is_dir() and manifest_path.is_file():
        # RunDir.open assumes a JSON object; say so plainly when it is something else.
        try:
            raw = json.loads(manifest_path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise UserError(f"{manifest_path}: not valid JSON ({getattr(exc, 'msg', exc)})") from None
        if not isinstance(raw, dict):
            raise UserError(f"{manifest_path}: expected a JSON object, found {type(raw).__name__}")
    run_dir = RunDir.open(path)
    manifest = run_dir.manifest()
    kind = manifest.get("kind")
    if kind not in RUN_KINDS:
        raise UserError(f"{manifest_path}: kind {kind!r}, expected one of {', '.join(RUN_KINDS)}")
    if not isinstance(manifest.get("config"), dict):
        raise UserError(f"{manifest_path}: no workload 'config' object")
    tables = {t.name: (_read_table(run_dir, t) if run_dir.has(t) else None)
              for t in (SAMPLES, CELLS, METRICS, TIMELINE, PHASES)}
    if kind == "ladder" and tables["cells"] is None:
        raise UserError(f"{path}: a ladder run without {CELLS.filename} (was the run interrupted?)")
    if kind == "profile" and tables["metrics"] is None:
        raise UserError(f"{path}: a profile run without {METRICS.filename} (was the run interrupted?)")
    if kind == "timeline" and tables["timeline"] is None and manifest.get("method") != "nsys":
        raise UserError(f"{path}: a timeline run without {TIMELINE.filename} (was the run interrupted?)")
    return Run(name=path.resolve().name, path=path, manifest=manifest, **tables)


def config_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """'key: a vs b' for every workload key whose value differs (or that only one side has)."""
    out = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, "<absent>"), b.get(key, "<absent>")
        if va != vb:
            out.append(f"{key}: {va!r} vs {vb!r}")
    return out


def manifest_value(manifest: dict[str, Any], dotted: str, default: str = "unknown") -> Any:
    """A manifest field by dotted path ('gpu.name'); every field but kind/config is optional."""
    node: Any = manifest
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node or node[part] in (None, ""):
            return default
        node = node[part]
    return node


def manifest_first(manifest: dict[str, Any], *dotted: str, default: str = "unknown") -> Any:
    """The first of several places a field may live (the ladder and profile writers nest differently)."""
    for path in dotted:
        value = manifest_value(manifest, path, default=default)
        if value != default:
            return value
    return default


def _read_table(run_dir: RunDir, table: Table) -> pd.DataFrame:
    df = run_dir.read(table)
    source = str(run_dir.path / table.filename)
    for column in TEXT_COLUMNS[table.name]:
        df[column] = df[column].astype(object).where(df[column].notna(), None)
        df[column] = df[column].map(lambda v: None if v is None else str(v))
    for column in NUMERIC_COLUMNS[table.name]:
        try:
            df[column] = pd.to_numeric(df[column], errors="raise").astype(float)
        except (ValueError, TypeError):
            bad = df[column][pd.to_numeric(df[column], errors="coerce").isna() & df[column].notna()]
            raise UserError(f"{source}: column {column} must be numeric (found {str(bad.iloc[0])!r})") from None
    return df


def _combine(table: Table, frames: list[pd.DataFrame], notes: list[str]) -> pd.DataFrame:
    if not frames:
        return empty(table).assign(run=pd.Series(dtype="object"))
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].copy()
    dup = df.duplicated(subset=list(table.key), keep="first")
    if dup.any():
        dropped = df[dup].groupby("run").size()
        for run, count in dropped.items():
            notes.append(f"{table.filename}: {count} row(s) of run {run} repeat rows already read from "
                         f"another run (same {', '.join(table.key)}); the first run's rows are used")
        df = df[~dup].reset_index(drop=True)
    return df
