"""Kernels of a kineto (torch.profiler) trace, matched to the step and the op that launched them.

A GPU kernel event carries the correlation id of the runtime call that launched it; that call
happened on a CPU thread inside l2attr's ranges `l2attr:step:<condition>:<i>` and
`l2attr:op:<index>` (step/record.py). Matching by the launch's CPU time inside those ranges
works for any launch API (cudaLaunchKernel, cuLaunchKernelEx, cuBLAS, Triton) and needs no
knowledge of how kineto links ops. Kernels of l2attr's own flush and re-warm are dropped by name.
A CUDA graph's replay launches its kernels with one cudaGraphLaunch: they carry its correlation
id and no op range (steps/graph.py gives them their ops); an edge measurement's steps lie in
ranges `l2attr:edge:<edge>:<arm>:<repeat>` (steps/edges.py).
"""

from __future__ import annotations

import bisect
import json
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.errors import UserError
from l2attr.steps.record import EDGE_RANGE, OP_RANGE, STEP_RANGE
from l2attr.names import LEGACY_PREFIX, STEP_EDGE, STEP_OP, STEP_TRACE
from l2attr.vocab import L2Condition

OWN_KERNELS = ("flush_l2", "block_on_flag", "spin_ns", "warm_l2")
KINETO_KERNEL = "kernel"      # kineto's event category of a GPU kernel (its word, not l2attr's)
KERNEL_COLUMNS = ["condition", "step", "op_index", "kernel_index", "kernel", "duration_us", "start_us", "stream"]


def load_trace(path: Path) -> dict[str, Any]:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a readable kineto trace ({exc})") from None


def profiled(torch: Any, body: Any) -> dict[str, Any]:
    """Run `body()` inside one torch.profiler session (CPU and CUDA activity) and return the kineto
    trace as a dict: the one place a step's profiler session is started, exported and read."""
    import os
    import tempfile

    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        body()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        return json.loads(Path(path).read_text())


class _Ranges:
    """Ranges of one name prefix on each CPU thread, searchable by time."""

    def __init__(self, events: list[dict[str, Any]], prefix: str) -> None:
        self.by_tid: dict[Any, list[tuple[float, float, str]]] = {}
        for e in events:
            name = str(e.get("name", ""))
            if e.get("ph") == "X" and name.startswith(prefix):
                self.by_tid.setdefault(e.get("tid"), []).append((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)), name))
        self.starts = {}
        for tid, rs in self.by_tid.items():
            rs.sort()
            self.starts[tid] = [r[0] for r in rs]

    def innermost(self, tid: Any, ts: float) -> str | None:
        """The range holding `ts` (ranges of one prefix do not nest: the dispatch mode is off while
        an op runs, and steps follow each other)."""
        rs = self.by_tid.get(tid)
        if not rs:
            return None
        i = bisect.bisect_right(self.starts[tid], ts) - 1
        if i >= 0 and rs[i][0] <= ts <= rs[i][1]:
            return rs[i][2]
        return None


GRAPH_LAUNCHES = ("cudaGraphLaunch", "cuGraphLaunch")   # the runtime / driver calls of a graph replay


def _events(trace: dict[str, Any]) -> list[dict[str, Any]]:
    events = trace.get("traceEvents", trace if isinstance(trace, list) else [])
    if not isinstance(events, list) or not events:
        raise UserError("kineto trace without traceEvents")
    return events


def _launched(events: list[dict[str, Any]], prefix: str, parse: Any) -> list[dict[str, Any]]:
    """Every kernel (l2attr's own dropped) whose launch lies inside a range of `prefix`: the
    range's parsed fields, the op (-1: outside any op range), the launching call's name."""
    outer, ops = _Ranges(events, prefix), _Ranges(events, OP_RANGE)
    launches: dict[Any, tuple[Any, float, str]] = {}
    for e in events:
        cat = str(e.get("cat", ""))
        if cat in ("cuda_runtime", "cuda_driver") and "correlation" in (e.get("args") or {}):
            launches[e["args"]["correlation"]] = (e.get("tid"), float(e["ts"]), str(e.get("name", "")))
    rows = []
    for e in events:
        if str(e.get("cat", "")) != KINETO_KERNEL:
            continue
        name = str(e.get("name", ""))
        if any(own in name for own in OWN_KERNELS):
            continue
        launch = launches.get((e.get("args") or {}).get("correlation"))
        if launch is None:
            continue
        tid, ts, api = launch
        got = outer.innermost(tid, ts)
        fields = parse(got[len(LEGACY_PREFIX):]) if got else None
        if fields is None:
            continue
        op = ops.innermost(tid, ts)
        o = STEP_OP.parse(op[len(LEGACY_PREFIX):]) if op else None
        rows.append({**fields, "op_index": o["op_index"] if o else -1, "kernel": name,
                     "duration_us": float(e.get("dur", 0.0)), "start_us": float(e["ts"]),
                     "stream": (e.get("args") or {}).get("stream", e.get("tid")),
                     "graph": api.startswith(GRAPH_LAUNCHES)})
    return rows


def kernels(trace: dict[str, Any], graph: bool = False) -> pd.DataFrame:
    """One row per kernel launched inside a step range: condition, step, op, order within the op.
    `graph`: the natural steps replay a CUDA graph; only the graph's kernels count there (a
    replay may launch others of its own first, e.g. torch's RNG-offset fills)."""
    rows = _launched(_events(trace), STEP_RANGE, STEP_TRACE.parse)
    if graph:
        rows = [r for r in rows if r["graph"] or r["condition"] != L2Condition.NATURAL.value]
    df = pd.DataFrame(rows, columns=[c for c in KERNEL_COLUMNS if c != "kernel_index"])
    if df.empty:
        return pd.DataFrame(columns=KERNEL_COLUMNS)
    df = df.sort_values(["condition", "step", "start_us"]).reset_index(drop=True)
    df["kernel_index"] = df.groupby(["condition", "step", "op_index"]).cumcount()
    return df[KERNEL_COLUMNS]


EDGE_KERNEL_COLUMNS = ["edge", "arm", "repeat", "op_index", "kernel", "duration_us", "start_us"]


def edge_kernels(trace: dict[str, Any]) -> pd.DataFrame:
    """One row per kernel launched inside an edge measurement's step range (steps/edges.py)."""
    rows = _launched(_events(trace), EDGE_RANGE, STEP_EDGE.parse)
    return pd.DataFrame(rows, columns=EDGE_KERNEL_COLUMNS)[EDGE_KERNEL_COLUMNS]
