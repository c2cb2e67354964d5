"""Damaged copies of the committed runs (examples/), made in a test's tmp_path.

Why copies of real runs: the integrity contract must hold on what the tools really write (every
column, every writer's quirk), and a damage whose right answer is known by hand (a doubled
median, a cut at a row boundary) is made by one edit. Tables are written back through RunDir's
own writer; the committed data is never touched.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from l2attr.rundir import MANIFEST, RunDir
from l2attr.schema import TABLES
from l2attr.sweep.measure.dram import SWEEP_DRAM
from l2attr.sweep.table import SWEEP_TABLES

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# one committed run of each kind (the smallest where there are several)
RUNS = {
    "ladder": "20261130T232557Z-fast-pin-element",
    "profile": "20261130T231541Z-profile",
    "timeline": "20261130T231829Z-timeline",
    "amortisation": "20261130T220048Z-bench-amortisation",
    "capacity": "20261130T215521Z-bench-capacity",
    "window": "20261130T215547Z-bench-window",
    "pollution": "20261130T220358Z-pollution-dram",
    "hotset": "20261130T220503Z-hotset-dram",
}
SWEEP_KINDS = ("amortisation", "capacity", "window", "pollution", "hotset")
ALL_TABLES = {**TABLES, **{t.name: t for t in SWEEP_TABLES}, SWEEP_DRAM.name: SWEEP_DRAM}


def copy_run(kind: str, dest: Path) -> Path:
    """The committed run of `kind` copied to dest/<its name> (without its raw ncu reports)."""
    src = EXAMPLES / RUNS[kind]
    out = dest / src.name
    shutil.copytree(src, out, ignore=shutil.ignore_patterns("ncu", "child"))
    return out


def plain(run: Path, name: str) -> Path:
    """run/NAME as a plain file, for damage done to its text: a committed run may keep a large
    table gzipped (NAME.gz, read by l2attr like the plain file)."""
    path, packed = run / name, run / f"{name}.gz"
    if not path.exists() and packed.exists():
        with gzip.open(packed, "rb") as src:
            path.write_bytes(src.read())
        packed.unlink()
    return path


def edit_table(run: Path, name: str, edit: Callable[[pd.DataFrame], pd.DataFrame | None]) -> Path:
    """Rewrite table `name` of `run` as edit(table) through RunDir.write; None deletes the file.
    Returns the table's path."""
    table = ALL_TABLES[name]
    stored = RunDir(run).table_file(table)      # <table>.csv, or the committed <table>.csv.gz
    df = pd.read_csv(stored, keep_default_na=True)
    out = edit(df)
    stored.unlink()
    if out is not None:
        RunDir(run).write(table, out.reset_index(drop=True))
    return run / table.filename


def edit_manifest(run: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    path = run / MANIFEST
    manifest = json.loads(path.read_text())
    edit(manifest)
    path.write_text(json.dumps(manifest))   # json writes NaN as NaN, as a damaged file might hold it
    return path


def cut_rows(path: Path, rows: int) -> None:
    """`head -n -ROWS`: drop the last rows at a row boundary (a valid, shorter CSV)."""
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-rows]))
