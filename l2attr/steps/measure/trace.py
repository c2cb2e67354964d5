"""Kernels of a kineto (torch.profiler) trace, matched to the traced replay and the op that launched them.

A GPU kernel event carries the correlation id of the runtime call that launched it; that call
happened on a CPU thread inside l2attr's ranges `l2attr:slot:<k>` (one traced replay or call,
numbered by a `Slots`) and `l2attr:op:<index>` (steps/measure/record.py). Matching by the launch's CPU
time inside those ranges works for any launch API (cudaLaunchKernel, cuLaunchKernelEx, cuBLAS,
Triton) and needs no knowledge of how kineto links ops. Kernels of l2attr's own flush and re-warm
are dropped by name. A CUDA graph's replay launches its kernels with one cudaGraphLaunch: they
carry its correlation id and no op range (steps/measure/attribute.py gives them their ops).

A range's name holds its number only. What the replay measured (its arm, an `L2Condition`; its
repeat; its edge) is kept by the `Slots` that numbered it, as typed values, and joins the kernel
rows from there: a condition is never written into a name and parsed back.
"""

from __future__ import annotations

import bisect
import json
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from l2attr.errors import UserError
from l2attr.steps.measure.record import OP_RANGE, SLOT_RANGE
from l2attr.names import LEGACY_PREFIX, STEP_OP, STEP_SLOT
from l2attr.vocab import L2Condition, Vocab

OWN_KERNELS = ("flush_l2", "block_on_flag", "spin_ns", "warm_l2")
KINETO_KERNEL = "kernel"      # kineto's event category of a GPU kernel (its word, not l2attr's)
NATURAL = L2Condition.NATURAL.value   # a kernel row's condition is the word (Slots.table, _words)
SLOTS_KEY = "l2attrSlots"      # a kept trace's top-level key: the fields of each numbered replay
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


def _words(fields: dict[str, Any]) -> dict[str, Any]:
    """A replay's fields as a table row holds them: each vocabulary member as its word."""
    return {k: v.value if isinstance(v, Vocab) else v for k, v in fields.items()}


class Slots:
    """The numbered traced replays of one profiler session, and what each measured.

    `name(**fields)` numbers the next replay and keeps its fields (members of l2attr's vocabularies,
    ints); `range(torch, **fields)` opens its profiler range. The trace readers below join every
    kernel to its replay's fields through this object, giving each member's word only where the
    row is made."""

    def __init__(self) -> None:
        self.fields: list[dict[str, Any]] = []

    def name(self, **fields: Any) -> str:
        self.fields.append(fields)
        return LEGACY_PREFIX + STEP_SLOT.build(slot=len(self.fields) - 1)

    def range(self, torch: Any, **fields: Any) -> Any:
        return torch.profiler.record_function(self.name(**fields))

    @classmethod
    def kept(cls, trace: dict[str, Any]) -> "Slots":
        """The numbered replays a kept trace carries (`trace.json.gz` of `keep_trace`, SLOTS_KEY)."""
        table = trace.get(SLOTS_KEY) if isinstance(trace, dict) else None
        if not isinstance(table, list) or not all(isinstance(f, dict) for f in table):
            raise UserError(f"kineto trace without l2attr's table of traced replays ({SLOTS_KEY})")
        slots = cls()
        slots.fields = [dict(f) for f in table]
        return slots

    def table(self) -> list[dict[str, Any]]:
        """Every replay's fields as words, by number: what a kept trace carries (SLOTS_KEY) so that
        its `l2attr:slot:<k>` ranges can be read without this object."""
        return [_words(f) for f in self.fields]

    def parse(self, name: str) -> dict[str, Any] | None:
        """The fields of the replay named `name` (without LEGACY_PREFIX); None for another's range."""
        got = STEP_SLOT.parse(name)
        if got is None or not 0 <= got["slot"] < len(self.fields):
            return None
        return _words(self.fields[got["slot"]])


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


def _launched(events: list[dict[str, Any]], slots: Slots) -> list[dict[str, Any]]:
    """Every kernel (l2attr's own dropped) whose launch lies inside a range numbered by `slots`: the
    replay's fields, the op (-1: outside any op range), whether a graph launch ran it."""
    outer, ops = _Ranges(events, SLOT_RANGE), _Ranges(events, OP_RANGE)
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
        fields = slots.parse(got[len(LEGACY_PREFIX):]) if got else None
        if fields is None:
            continue
        op = ops.innermost(tid, ts)
        o = STEP_OP.parse(op[len(LEGACY_PREFIX):]) if op else None
        rows.append({**fields, "op_index": o["op_index"] if o else -1, "kernel": name,
                     "duration_us": float(e.get("dur", 0.0)), "start_us": float(e["ts"]),
                     "stream": (e.get("args") or {}).get("stream", e.get("tid")),
                     "graph": api.startswith(GRAPH_LAUNCHES)})
    return rows


def launched(trace: dict[str, Any], slots: Slots) -> list[dict[str, Any]]:
    """Every kernel of a traced replay numbered by `slots`, as a row (steps/measure/timing.py, tools)."""
    return _launched(_events(trace), slots)


def kernels(trace: dict[str, Any], slots: Slots, graph: bool = False) -> pd.DataFrame:
    """One row per kernel launched inside a traced step (fields `condition`, `step`): condition,
    step, op, order within the op. `graph`: the natural steps replay a CUDA graph; only the graph's
    kernels count there (a replay may launch others of its own first, e.g. torch's RNG-offset fills)."""
    rows = _launched(_events(trace), slots)
    if graph:
        rows = [r for r in rows if r["graph"] or r["condition"] != NATURAL]
    df = pd.DataFrame(rows, columns=[c for c in KERNEL_COLUMNS if c != "kernel_index"])
    if df.empty:
        return pd.DataFrame(columns=KERNEL_COLUMNS)
    df = df.sort_values(["condition", "step", "start_us"]).reset_index(drop=True)
    df["kernel_index"] = df.groupby(["condition", "step", "op_index"]).cumcount()
    return df[KERNEL_COLUMNS]


EDGE_KERNEL_COLUMNS = ["edge", "arm", "repeat", "op_index", "kernel", "duration_us", "start_us"]


def edge_kernels(trace: dict[str, Any], slots: Slots) -> pd.DataFrame:
    """One row per kernel launched inside an edge measurement's traced step (fields `edge`, `arm`,
    `repeat`: steps/measure/edges.py, steps/measure/graph_edges.py)."""
    rows = _launched(_events(trace), slots)
    return pd.DataFrame(rows, columns=EDGE_KERNEL_COLUMNS)[EDGE_KERNEL_COLUMNS]


# -- the trace phase of graph surgery: every arm replayed under the profiler, kernels keyed by node --
# Per repeat the arms run in a rotating order, so drift touches each alike. A natural replay follows
# a settle (evict-last reset, read flush) and five untraced natural replays (the L2 as the program's
# own back-to-back steps leave it); a cold replay needs none (every kernel is flushed first). Kernels
# are keyed by their node: the serialised cold copies run the kernels one at a time in creation
# order, so a cold replay's j-th kernel is kernel node j; the natural and start arms' kernels (which
# may overlap) are matched to nodes by (name, occurrence).
# arms whose kernels run in the graph's own order (no flush node serialises them): paired by name
UNSERIALISED = (L2Condition.NATURAL, L2Condition.COLD_START)
# untraced natural replays before a traced one (after the settle)
NATURAL_WARM_REPLAYS = 5
NODE_COLUMNS = ["condition", "step", "node", "kernel", "duration_us", "start_us", "stream"]


def plan(conditions: list[L2Condition], repeats: int) -> list[tuple[int, L2Condition]]:
    """(repeat, condition) in the order they run: each repeat rotates the arms by one."""
    out = []
    for i in range(repeats):
        r = i % len(conditions)
        out += [(i, c) for c in conditions[r:] + conditions[:r]]
    return out


def trace_arms(torch: Any, arms: dict[L2Condition, Callable[[], None]], repeats: int,
               settle: Callable[[], None] | None = None,
               warm_replays: int = NATURAL_WARM_REPLAYS, first: int = 0) -> tuple[dict[str, Any], Slots]:
    """Replay each arm `repeats` times under the profiler; the kineto trace as a dict and the
    numbered replays (each with its arm and repeat). Before a
    natural replay: `settle` (steps/measure/flushes.py `Flushes.settle`: reset evict-last lines, write back
    the dirty lines a cold_dirty arm left), then `warm_replays` untraced natural replays, so the
    traced one meets the L2 as the program's own back-to-back steps leave it. After any flush one
    untraced replay is not enough for a step smaller than L2 (the quarter-L2 self-check's kernels
    read slower than in back-to-back calls on the H200; three replays came within a few percent):
    docs/steps.md#natural-arm. `first`: the number of the first repeat (a later round goes on counting)."""
    natural = arms[L2Condition.NATURAL]
    slots = Slots()

    def body() -> None:
        for i, cond in ((first + i, c) for i, c in plan(list(arms), repeats)):
            if cond is L2Condition.NATURAL:
                if settle is not None:
                    settle()
                for _ in range(warm_replays):
                    natural()                           # the state the step leaves the next, untraced
            with slots.range(torch, condition=cond, step=i):
                arms[cond]()
            if cond is list(arms)[-1]:
                torch.cuda.synchronize()
    return profiled(torch, body), slots


def trace_replays(torch: Any, arms: dict[L2Condition, Callable[[], None]], repeats: int,
                  settle: Callable[[], None] | None = None, first: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """The trace phase: every arm replayed `repeats` times under the profiler, every kernel keyed by
    its node; (the node-keyed table, the kernel names in node order). `first`: as trace_arms."""
    k = node_kernels(*trace_arms(torch, arms, repeats, settle=settle, first=first))
    return k, cold_names(k)


def node_kernels(trace: dict[str, Any], slots: Slots) -> pd.DataFrame:
    """One row per kernel of every traced replay, with its node index; refused when replays differ."""
    rows = [r for r in _launched(_events(trace), slots) if r["graph"]]
    if not rows:
        raise UserError("no kernel of the step's graph replays was traced (kineto recorded none)")
    df = pd.DataFrame(rows).sort_values(["condition", "step", "start_us"]).reset_index(drop=True)
    cold = df[df["condition"] != NATURAL]
    if cold.empty:
        raise UserError("no cold replay was traced")
    ref = cold[(cold["condition"] == cold["condition"].iloc[0]) & (cold["step"] == cold["step"].iloc[0])]
    names = list(ref["kernel"])
    key_to_node = {k: j for j, k in enumerate(occurrence_keys(names))}
    parts = []
    for (cond, step), g in df.groupby(["condition", "step"], sort=True):
        got = list(g["kernel"])
        if sorted(got) != sorted(names):
            raise UserError(f"the step's kernel sequence changes between replays ({cond} replay {step}: "
                            f"{len(got)} kernels against {len(names)}): kernels cannot be paired")
        if cond not in UNSERIALISED and got != names:
            raise UserError(f"a cold replay ran its kernels in another order ({cond} replay {step}): "
                            "the serialised copy should not allow that")
        parts.append(g.assign(node=[key_to_node[k] for k in occurrence_keys(got)]))
    out = pd.concat(parts, ignore_index=True)
    return out[NODE_COLUMNS]


def occurrence_keys(names: list[str]) -> list[tuple[str, int]]:
    """(name, occurrence) per kernel: how a replay's kernels are paired with nodes by name."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        out.append((n, seen.get(n, 0)))
        seen[n] = seen.get(n, 0) + 1
    return out


def cold_names(k: pd.DataFrame) -> list[str]:
    """Kernel names in node order (from the node-keyed table)."""
    first = k.drop_duplicates("node").sort_values("node")
    return list(first["kernel"])
