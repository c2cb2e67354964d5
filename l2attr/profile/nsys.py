"""Nsight Systems timelines: per-call pin, gap and consumer durations, where nsys works.

A timeline shows what CUDA events cannot: the idle gap between the pin kernel's end and the
consumer's start on the GPU. nsys is not on PyPI and often missing or broken (on the H200 here
only a copy inside Nsight Compute exists, which writes a .qdstrm but cannot make a report), so
detection actually tries to make a report, and the fallback message points at `l2attr ladder`'s
CUDA-event figures.

Extraction reads `nsys export --type sqlite` output, following NVIDIA's documented schema:
kernels in CUPTI_ACTIVITY_KIND_KERNEL (GPU start/end, correlationId, name ids into StringIds),
their launching API calls in CUPTI_ACTIVITY_KIND_RUNTIME (CPU time, thread, correlationId),
and NVTX push/pop ranges in NVTX_EVENTS (eventType 59, CPU time, thread, text or textId).
A kernel belongs to the innermost l2attr range open on its launching thread at launch time.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from l2attr.errors import UserError
from l2attr.vocab import Pin, Role
from l2attr.names import parse_range_name

NVTX_PUSH_POP = 59
Runner = Callable[[Sequence[str], float], subprocess.CompletedProcess]

CALL_COLUMNS = ("family", "rung", "pin", "profile", "l2_state", "table", "batch", "pin_us", "gap_us",
                "consumer_us")


def default_runner(argv: Sequence[str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)


@dataclass(frozen=True)
class NsysStatus:
    usable: bool
    path: str | None
    version: str | None
    detail: str


def find_nsys(which: Callable[[str], str | None] = shutil.which) -> str | None:
    return which("nsys")


def probe_nsys(nsys: str | None = None, runner: Runner = default_runner,
               which: Callable[[str], str | None] = shutil.which, workdir: Path | None = None) -> NsysStatus:
    """Is there an nsys that can turn a (trivial) recording into a report?"""
    nsys = nsys or find_nsys(which)
    if not nsys:
        return NsysStatus(False, None, None, "nsys is not on PATH")
    try:
        ver = runner([nsys, "--version"], 30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return NsysStatus(False, nsys, None, f"`nsys --version` failed ({exc})")
    version = (ver.stdout or ver.stderr or "").strip().splitlines()[0] if (ver.stdout or ver.stderr) else None
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        out = Path(tmp) / "probe"
        try:
            res = runner([nsys, "profile", "-t", "cuda,nvtx", "-o", str(out), "--force-overwrite", "true",
                          sys.executable, "-c", "pass"], 120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return NsysStatus(False, nsys, version, f"`nsys profile` failed ({exc})")
        if (out.with_suffix(".nsys-rep")).is_file() or (out.with_suffix(".qdrep")).is_file():
            return NsysStatus(True, nsys, version, "made a report")
        tail = ((res.stderr or "") + (res.stdout or "")).strip().splitlines()[-1:] or [""]
        qdstrm = " (left only a .qdstrm)" if out.with_suffix(".qdstrm").is_file() else ""
        return NsysStatus(False, nsys, version, f"`nsys profile` made no report{qdstrm}: {tail[0][:160]}")


def timeline_unavailable(status: NsysStatus) -> str:
    """The one-line refusal for `profile --timeline` when nsys cannot make a report."""
    return (f"no timeline: {status.detail}. Per-call pin, consumer and whole-call times come from "
            "`l2attr ladder` (CUDA events; samples.csv columns pin_time_us, consumer_time_us, "
            "call_wall_time_us); the pin-to-consumer gap is call_wall_time_us minus the two. "
            "With a working nsys, `nsys export --type sqlite` a recording and run "
            "`l2attr profile --import FILE.sqlite`")


def profile_argv(nsys: str, child: Sequence[str], output: Path | str) -> list[str]:
    return [nsys, "profile", "-t", "cuda,nvtx", "-o", str(output), "--force-overwrite", "true", *child]


def export_argv(nsys: str, report: Path | str, sqlite_path: Path | str) -> list[str]:
    return [nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "-o", str(sqlite_path), str(report)]


# -- extraction from an exported sqlite ----------------------------------------------------------

def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in con.execute(f"PRAGMA table_info({table})")}


def _kernel_name_sql(cols: set[str]) -> tuple[str, str]:
    """SQL for the kernel name: demangled id, short id, or a plain text column (older exports)."""
    joins, names = [], []
    for col, alias in (("demangledName", "sd"), ("shortName", "ss")):
        if col in cols:
            joins.append(f"LEFT JOIN StringIds {alias} ON {alias}.id = k.{col}")
            names.append(f"{alias}.value")
    if "name" in cols:
        names.append("k.name")
    return (f"COALESCE({', '.join(names)}, '')" if names else "''"), " ".join(joins)


def read_kernels(sqlite_path: Path | str) -> pd.DataFrame:
    """Kernels with GPU start/end (ns) and their innermost l2attr NVTX range."""
    path = Path(sqlite_path)
    if not path.is_file():
        raise UserError(f"sqlite export not found: {path}")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as exc:
        raise UserError(f"{path}: not an SQLite database ({exc})") from None
    try:
        need = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"}
        missing = sorted(need - tables)
        if missing:
            raise UserError(f"{path}: not an nsys export with kernels and NVTX (missing tables: "
                            f"{', '.join(missing)}; record with `nsys profile -t cuda,nvtx`)")
        name_sql, joins = _kernel_name_sql(_columns(con, "CUPTI_ACTIVITY_KIND_KERNEL"))
        kernels = pd.read_sql_query(
            f'SELECT k.start AS start, k."end" AS "end", {name_sql} AS kernel, r.globalTid AS tid, '
            f"r.start AS launch FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            f"JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId {joins} "
            f"ORDER BY k.start", con)
        nvtx_cols = _columns(con, "NVTX_EVENTS")
        text = "COALESCE(n.text, s.value)" if "textId" in nvtx_cols and "StringIds" in tables else "n.text"
        join = "LEFT JOIN StringIds s ON s.id = n.textId" if "textId" in nvtx_cols and "StringIds" in tables else ""
        where = f"WHERE n.eventType = {NVTX_PUSH_POP}" if "eventType" in nvtx_cols else ""
        ranges = pd.read_sql_query(
            f'SELECT n.start AS start, n."end" AS "end", n.globalTid AS tid, {text} AS text '
            f"FROM NVTX_EVENTS n {join} {where}", con)
    finally:
        con.close()
    ranges = ranges[ranges["text"].fillna("").str.startswith("l2attr:")]
    kernels["nvtx_range"] = [_innermost(ranges, tid, t) for tid, t in zip(kernels["tid"], kernels["launch"])]
    return kernels


def _innermost(ranges: pd.DataFrame, tid: int, t: int) -> str:
    open_ = ranges[(ranges["tid"] == tid) & (ranges["start"] <= t) & (ranges["end"] >= t)]
    if open_.empty:
        return ""
    return str(open_.sort_values("start").iloc[-1]["text"])


def per_call(kernels: pd.DataFrame) -> pd.DataFrame:
    """One row per (cell, table, batch): pin and consumer GPU time and the idle gap between them (µs)."""
    rows = []
    ident = [parse_range_name(r) for r in kernels["nvtx_range"]]
    k = kernels.assign(role=[i["role"] for i in ident], family=[i["family"] for i in ident],
                       rung=[i["rung"] for i in ident], pin=[i["pin"] for i in ident],
                       profile=[i["profile"] for i in ident], l2_state=[i["l2_state"] for i in ident],
                       table=[i["table"] for i in ident], batch=[i["batch"] for i in ident])
    k = k[k["rung"] != ""]
    for key, g in k.groupby(["family", "rung", "profile", "l2_state", "table", "batch"], sort=False):
        pins = [p for p in g["pin"] if p and p != Pin.NONE]
        pin, cons = g[g["role"] == Role.PIN], g[g["role"] == Role.CONSUMER]
        pin_us = (pin["end"] - pin["start"]).sum() / 1e3 if not pin.empty else None
        cons_us = (cons["end"] - cons["start"]).sum() / 1e3 if not cons.empty else None
        gap_us = (cons["start"].min() - pin["end"].max()) / 1e3 if not pin.empty and not cons.empty else None
        family, rung, profile, l2_state, table, batch = key
        rows.append(dict(zip(CALL_COLUMNS, (family, rung, pins[0] if pins else Pin.NONE.value, profile, l2_state,
                                            table, batch, pin_us, gap_us, cons_us))))
    return pd.DataFrame(rows, columns=list(CALL_COLUMNS))


def read_timeline(sqlite_path: Path | str) -> pd.DataFrame:
    """Per-call pin / gap / consumer durations from an nsys sqlite export."""
    return per_call(read_kernels(sqlite_path))


__all__ = ["NsysStatus", "find_nsys", "probe_nsys", "timeline_unavailable", "profile_argv",
           "export_argv", "read_kernels", "per_call", "read_timeline", "CALL_COLUMNS"]
