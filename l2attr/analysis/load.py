"""Load run directories and combine them into one study.

A report usually combines a ladder run (layer A: samples.csv + cells.csv) with a profile run
(layer B: metrics.csv) of the same workload. Combining runs of different workloads would put
numbers side by side that do not belong together, so configs are compared key by key and a
difference is refused in one line (unless the caller allows it, and then it becomes a caveat).

A damaged table is refused, never analysed in part: rows cut short (RunDir.read), a ladder run
with no cells or a profile run with no metrics, a time that is negative or not finite, and
tables that disagree with what their own run wrote elsewhere (fewer samples than cells.csv
counted, fewer profiled kernels than the manifest's replayer_passes, a last kernel missing
metrics its report's other kernels have: the signs of a file cut at a row boundary).
"""

from __future__ import annotations

from datetime import datetime, timezone
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.errors import STRICT, Damage, UserError
from l2attr.integrity import check_table
from l2attr.integrity.counts import (PASSES_METRIC, SAMPLE_COLUMNS, check_declared_cells,  # noqa: F401
                                      check_profiled_kernels, check_sample_counts)
from l2attr.integrity.manifest import check_manifest
from l2attr.manifest_model import recorded, typed
from l2attr.integrity.rules import typed_columns
from l2attr.integrity.runs import check_run, check_units, combine
from l2attr.rundir import MANIFEST, RunDir
from l2attr.schema import CELLS, METRICS, PHASES, SAMPLES, TIMELINE, UNITS, Table, empty
from l2attr.vocab import Quantity, Command

RUN_KINDS = (Command.LADDER.value, Command.PROFILE.value, Command.TIMELINE.value)
KNOWN_QUANTITIES = (Quantity.PIN.value, Quantity.CONSUMER.value, Quantity.KERNELS.value, Quantity.CALL.value)

# Columns that must hold numbers: column -> (may be empty, must be >= 0). A stray word there is a
# broken table, not a missing value; every value present must also be finite.
NUMERIC_COLUMNS: dict[str, dict[str, tuple[bool, bool]]] = {
    SAMPLES.name: {"repeat": (False, True), "batch": (False, True), "table": (False, True),
                   # empty: a rung without a pin; consumer and wall times of the other timer
                   "pin_time_us": (True, True), "consumer_time_us": (True, True),
                   "consumer_artifact_time_us": (True, True), "call_wall_time_us": (True, True)},
    CELLS.name: {"n_samples": (False, True), "median_us": (False, True), "p10_us": (False, True),
                 "p90_us": (False, True), "ci95_lo_us": (False, True), "ci95_hi_us": (False, True),
                 "bytes_per_call": (False, True), "achieved_GBps": (True, True)},
    # table/batch are empty for kernels outside l2attr's NVTX ranges; a metric may be negative
    METRICS.name: {"table": (True, True), "batch": (True, True), "value": (False, False)},
    TIMELINE.name: {"t_us": (False, False), "value": (False, False)},
    PHASES.name: {"start_us": (False, False), "end_us": (False, False), "duration_us": (False, True),
                  "samples": (False, True)},
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

    @cached_property
    def model(self) -> Any:
        """The manifest through its kind's model (manifest_model.typed), validated once per run."""
        return typed(self.manifest)

    @property
    def kind(self) -> str:
        return str(self.model.kind)


@dataclass
class Study:
    """Several runs of one workload, their tables concatenated with a `run` column naming the source."""

    runs: list[Run]
    config: dict[str, Any]
    samples: pd.DataFrame
    cells: pd.DataFrame
    metrics: pd.DataFrame
    notes: list[str] = field(default_factory=list)   # load-time caveats (duplicates dropped, mixed configs)
    # table name -> every run's rows of the keys measured by more than one run (analysis.compare)
    overlaps: dict[str, pd.DataFrame] = field(default_factory=dict)
    # what `--allow-partial` found wrong and read past (empty when every run was whole)
    damage: list[str] = field(default_factory=list)
    timeline: pd.DataFrame = field(default_factory=pd.DataFrame)   # PM samples (timeline runs)
    phases: pd.DataFrame = field(default_factory=pd.DataFrame)
    # runs of another workload or GPU combined with --allow-mixed: said at the top of the report
    mixed: list[str] = field(default_factory=list)
    # --allow-mixed: cells of two GPUs may be compared (ratios across GPUs are formed; analysis.gpus)
    allow_mixed: bool = False

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

    def measured(self, key: str, near: datetime | None = None) -> tuple[float | None, str]:
        """A bandwidth a ladder run measured (hbm_copy_GBps, hbm_read_GBps, l2_read_GBps) and
        where it came from; None with the reason when no run recorded it.

        Machines of one kind differ by a few per cent (H200 read-only HBM: 4,477-4,569 GB/s across
        the committed runs), so which run's figure is used matters. By default the newest run
        that recorded it (`preference_order`, as for cells); with `near` (when the profile whose
        bytes it divides was made), the ladder run made closest to that time, the likeliest to
        share its machine."""
        ordered = preference_order(self.runs)
        if near is not None:
            ladders = sorted((r for r in ordered if r.kind == Command.LADDER), key=lambda r: _distance(r, near))
            ordered = ladders + [r for r in ordered if r.kind != Command.LADDER]
        for run in ordered:
            value = getattr(run.model, key, None)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                return float(value), f"{run.name}/{MANIFEST}[{key}]"
        return None, f"no run's manifest records {key}"

    def newest_time(self, kind: str) -> datetime | None:
        """When the newest run of a kind was made (its manifest's created_utc), if any says."""
        times = [t for t in (created_at(r) for r in self.runs_of_kind(kind)) if t is not None]
        return max(times) if times else None


def run_uuid(run: Run) -> str:
    """The GPU UUID a run's manifest records ('' where it records none)."""
    gpu = run.model.gpu
    return str((gpu.uuid if gpu is not None else None) or "")


def gpu_name(run: Run) -> str:
    """The GPU name a run's manifest records ('' where it records none)."""
    gpu = run.model.gpu
    return str((gpu.name if gpu is not None else None) or "")


def created_at(run: Run) -> datetime | None:
    """A run's manifest created_utc as an aware datetime; None when absent or unreadable."""
    raw = run.model.created_utc
    try:
        t = datetime.fromisoformat(str(raw))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def _distance(run: Run, near: datetime) -> float:
    t = created_at(run)
    return abs((t - near).total_seconds()) if t is not None else float("inf")


def load_runs(paths: list[Path] | list[str], allow_mixed: bool = False, allow_partial: bool = False) -> Study:
    """Read the run dirs, check they describe one workload, and concatenate their tables.

    `allow_partial`: a damaged run's intact rows are kept and what is wrong goes to
    `Study.damage` (the report leads with it) instead of stopping at the first problem."""
    if not paths:
        raise UserError("give at least one run dir")
    damage = Damage(allow_partial)
    runs = [r for r in (read_run(Path(p), damage) for p in paths) if r is not None]
    if not runs:
        raise UserError("no run dir has data left to analyse: " + "; ".join(damage.messages))
    names = [r.name for r in runs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UserError(f"run dir given twice: {', '.join(dupes)}")
    first = runs[0]
    # one workload on one GPU, or a comparison said at the top (integrity/runs.py, every kind)
    mixed, _ = combine([(r.name, r.manifest) for r in runs], allow_mixed)
    notes: list[str] = []
    ordered = preference_order(runs)
    tables, overlaps = {}, {}
    for table in (SAMPLES, CELLS, METRICS, TIMELINE, PHASES):
        frames = [getattr(r, table.name).assign(run=r.name) for r in ordered
                  if getattr(r, table.name) is not None]
        tables[table.name], overlaps[table.name] = _combine(table, frames, notes)
    if first.model.config is None:
        raise UserError(f"{first.name}: its manifest records no workload config")
    return Study(runs=runs, config=dict(first.model.config), samples=tables["samples"],
                 cells=tables["cells"], metrics=tables["metrics"], notes=notes,
                 timeline=tables["timeline"], phases=tables["phases"],
                 overlaps={k: v for k, v in overlaps.items() if not v.empty}, damage=damage.messages,
                 mixed=mixed, allow_mixed=allow_mixed)


def preference_order(runs: list[Run]) -> list[Run]:
    """Whose rows the analysis uses where runs measured the same key: ladder runs before the
    others (a profile's child ladder is a side product), then the newest run first (its
    manifest's created_utc), so re-measuring a cell updates the report and the older
    measurement is compared with it instead of hiding it."""
    oldest = datetime.min.replace(tzinfo=timezone.utc)          # undated or unreadable: oldest
    newest_first = sorted(runs, key=lambda r: created_at(r) or oldest, reverse=True)
    return sorted(newest_first, key=lambda r: 0 if r.kind == Command.LADDER else 1)   # stable


def read_run(path: Path, damage: Damage = STRICT) -> Run | None:
    """Open one run dir: manifest checks, then each table it has, with numbers checked.

    A damaged table goes through `damage`: strict, it is the one-line error; partial, its intact
    rows are kept, and a run with nothing left is None."""
    manifest_path = path / MANIFEST
    run_dir = RunDir.open(path)
    manifest = run_dir.manifest()
    facts = typed(manifest)                      # its damage said by check_manifest, below
    kind = facts.kind
    if kind not in RUN_KINDS:
        raise UserError(f"{manifest_path}: kind {kind!r}, expected one of {', '.join(RUN_KINDS)}")
    if facts.config is None:
        raise UserError(f"{manifest_path}: no workload 'config' object")
    check_manifest(manifest, path, damage)       # typed before any table rule reads a declaration
    tables = {t.name: (_read_table(run_dir, t, damage) if run_dir.has(t) else None)
              for t in (SAMPLES, CELLS, METRICS, TIMELINE, PHASES)}
    main = {Command.LADDER: (CELLS, "cells"), Command.PROFILE: (METRICS, "metrics"),
            Command.TIMELINE: (TIMELINE, "PM samples")}
    table, what = main[kind]
    if tables[table.name] is None and not (kind == Command.TIMELINE and facts.method == "nsys"):
        damage.found(f"{path}: a {kind} run without {table.filename} (was the run interrupted?)")
        return None
    if tables[table.name] is not None and tables[table.name].empty:
        damage.found(f"{path / table.filename}: {kind} run has no {what} (interrupted?)")
        return None
    if tables["cells"] is not None:
        check_declared_cells(tables["cells"], manifest, path, damage)
    if tables["samples"] is not None and tables["cells"] is not None:
        check_sample_counts(tables["samples"], tables["cells"], path, damage)
    if tables["metrics"] is not None:
        tables["metrics"] = check_profiled_kernels(tables["metrics"], manifest, path, damage)
    tables = check_run(kind, tables, manifest, path, damage)
    if run_dir.has(UNITS):          # a distributed run's record of who measured what
        check_units(run_dir.read(UNITS, damage), tables["cells"], manifest, str(run_dir.table_file(UNITS)),
                    path, damage)
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
    value = recorded(manifest, dotted)
    return default if value in (None, "") else value


def manifest_first(manifest: dict[str, Any], *dotted: str, default: str = "unknown") -> Any:
    """The first of several places a field may live (the ladder and profile writers nest differently)."""
    for path in dotted:
        value = manifest_value(manifest, path, default=default)
        if value != default:
            return value
    return default


def _read_table(run_dir: RunDir, table: Table, damage: Damage = STRICT) -> pd.DataFrame:
    df = run_dir.read(table, damage)
    source = str(run_dir.table_file(table))
    df = typed_columns(df, NUMERIC_COLUMNS[table.name], TEXT_COLUMNS[table.name], source, damage)
    return check_table(df, table.name, source, damage)


# tables whose overlapping rows analysis.compare sets side by side (the others get a note)
COMPARED = ("cells", "samples")


def _combine(table: Table, frames: list[pd.DataFrame], notes: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows the analysis uses: the first run's of each key, every run's rows of the keys more than
    one run measured). Frames come in preference order."""
    if not frames:
        return empty(table).assign(run=pd.Series(dtype="object")), pd.DataFrame()
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].copy()
    key = list(table.key)
    dup = df.duplicated(subset=key, keep="first")
    if not dup.any():
        return df, pd.DataFrame()
    shared = df[df.duplicated(subset=key, keep=False)].reset_index(drop=True)
    winners = df[~dup].set_index(key)["run"]
    dropped = df[dup]
    if table.name in COMPARED:
        return df[~dup].reset_index(drop=True), shared
    for (run, used), count in dropped.assign(
            used=winners.reindex(pd.MultiIndex.from_frame(dropped[key])).to_numpy()
    ).groupby(["run", "used"]).size().items():
        notes.append(f"{table.filename}: {count} row(s) of run {run} measure keys run {used} also measured; "
                     f"the analysis uses {used}'s (preferred: ladder runs, then the newest)")
    return df[~dup].reset_index(drop=True), shared