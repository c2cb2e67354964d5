"""Kernels of a kineto (torch.profiler) trace, matched to the step and the op that launched them.

A GPU kernel event carries the correlation id of the runtime call that launched it; that call
happened on a CPU thread inside l2attr's ranges `l2attr:step:<condition>:<i>` and
`l2attr:op:<index>` (step/record.py). Matching by the launch's CPU time inside those ranges
works for any launch API (cudaLaunchKernel, cuLaunchKernelEx, cuBLAS, Triton) and needs no
knowledge of how kineto links ops. Kernels of l2attr's own flush are dropped by name.
"""

from __future__ import annotations

import bisect
import json
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.errors import UserError
from l2attr.steps.record import OP_RANGE, STEP_RANGE
from l2attr.names import LEGACY_PREFIX, STEP_OP, STEP_TRACE

OWN_KERNELS = ("flush_l2", "block_on_flag", "spin_ns")
KINETO_KERNEL = "kernel"      # kineto's event category of a GPU kernel (its word, not l2attr's)
KERNEL_COLUMNS = ["condition", "step", "op_index", "kernel_index", "kernel", "duration_us", "start_us", "stream"]


def load_trace(path: Path) -> dict[str, Any]:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a readable kineto trace ({exc})") from None


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


def kernels(trace: dict[str, Any]) -> pd.DataFrame:
    """One row per kernel launched inside a step range: condition, step, op, order within the op."""
    events = trace.get("traceEvents", trace if isinstance(trace, list) else [])
    if not isinstance(events, list) or not events:
        raise UserError("kineto trace without traceEvents")
    steps, ops = _Ranges(events, STEP_RANGE), _Ranges(events, OP_RANGE)
    launches: dict[Any, tuple[Any, float]] = {}
    for e in events:
        cat = str(e.get("cat", ""))
        if cat in ("cuda_runtime", "cuda_driver") and "correlation" in (e.get("args") or {}):
            launches[e["args"]["correlation"]] = (e.get("tid"), float(e["ts"]))
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
        tid, ts = launch
        step = steps.innermost(tid, ts)
        if step is None:
            continue
        op = ops.innermost(tid, ts)
        s = STEP_TRACE.parse(step[len(LEGACY_PREFIX):])
        o = STEP_OP.parse(op[len(LEGACY_PREFIX):]) if op else None
        if s is None:
            continue
        rows.append({"condition": s["condition"], "step": s["step"], "op_index": o["op_index"] if o else -1,
                     "kernel": name, "duration_us": float(e.get("dur", 0.0)), "start_us": float(e["ts"]),
                     "stream": (e.get("args") or {}).get("stream", e.get("tid"))})
    df = pd.DataFrame(rows, columns=[c for c in KERNEL_COLUMNS if c != "kernel_index"])
    if df.empty:
        return pd.DataFrame(columns=KERNEL_COLUMNS)
    df = df.sort_values(["condition", "step", "start_us"]).reset_index(drop=True)
    df["kernel_index"] = df.groupby(["condition", "step", "op_index"]).cumcount()
    return df[KERNEL_COLUMNS]
