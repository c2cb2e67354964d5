"""Time every kernel of a captured step in each arm: replays of the natural graph and of its cold
copies, interleaved, inside one torch.profiler session (CUPTI durations: no events, no launch lag).

Per repeat the arms run in a rotating order, so drift touches each alike. A natural replay follows
a settle (evict-last reset, read flush) and five untraced natural replays (the L2 as the program's
own back-to-back steps leave it); a cold replay needs none (every kernel is flushed first). Kernels are keyed by their node: the cold copies run the
kernels one at a time in creation order, so a cold replay's j-th kernel is kernel node j; a natural
replay's kernels (which may overlap) are matched to nodes by (name, occurrence).
"""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from l2attr.errors import UserError
from l2attr.names import LEGACY_PREFIX, STEP_TRACE
from l2attr.vocab import L2Condition

NATURAL = L2Condition.NATURAL.value
# arms whose kernels run in the graph's own order (no flush node serialises them): paired by name
UNSERIALISED = (NATURAL, L2Condition.COLD_START.value)
# untraced natural replays before a traced one (after the settle)
NATURAL_WARM_REPLAYS = 5
NODE_COLUMNS = ["condition", "step", "node", "kernel", "duration_us", "start_us", "stream"]


def plan(conditions: list[str], repeats: int) -> list[tuple[int, str]]:
    """(repeat, condition) in the order they run: each repeat rotates the arms by one."""
    out = []
    for i in range(repeats):
        r = i % len(conditions)
        out += [(i, c) for c in conditions[r:] + conditions[:r]]
    return out


def trace_arms(torch: Any, arms: dict[str, Callable[[], None]], repeats: int,
               settle: Callable[[], None] | None = None, warm_replays: int = NATURAL_WARM_REPLAYS) -> dict[str, Any]:
    """Replay each arm `repeats` times under the profiler; the kineto trace as a dict. Before a
    natural replay: `settle` (steps/flushes.py `Flushes.settle`: reset evict-last lines, write back
    the dirty lines a cold_dirty arm left), then `warm_replays` untraced natural replays, so the
    traced one meets the L2 as the program's own back-to-back steps leave it. After any flush one
    untraced replay is not enough for a step smaller than L2 (the quarter-L2 self-check's kernels
    read slower than in back-to-back calls on the H200; three replays came within a few percent):
    docs/steps.md#natural-arm."""
    from l2attr.steps.trace import profiled

    natural = arms[NATURAL]

    def body() -> None:
        for i, cond in plan(list(arms), repeats):
            if cond == NATURAL:
                if settle is not None:
                    settle()
                for _ in range(warm_replays):
                    natural()                           # the state the step leaves the next, untraced
            with torch.profiler.record_function(LEGACY_PREFIX + STEP_TRACE.build(condition=cond, step=i)):
                arms[cond]()
            if cond == list(arms)[-1]:
                torch.cuda.synchronize()
    return profiled(torch, body)


def node_kernels(trace: dict[str, Any]) -> pd.DataFrame:
    """One row per kernel of every traced replay, with its node index; refused when replays differ."""
    from l2attr.steps.trace import _events, _launched
    from l2attr.steps.record import STEP_RANGE

    rows = [r for r in _launched(_events(trace), STEP_RANGE, STEP_TRACE.parse) if r["graph"]]
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


def trace_calls(torch: Any, call: Callable[[], Any], repeats: int) -> pd.DataFrame:
    """The step function called on its own (not replayed), `repeats` times under the profiler as
    the arms are: per call, the sum of its kernels' CUPTI durations and their count. The answer holds
    the natural replay's kernel time to it, so a capture that ran another program (an eager twin, a
    branch the capture froze) is seen: kernels inside one call are the program's own, the launch
    gaps between them are not counted."""
    from l2attr.steps.record import STEP_RANGE
    from l2attr.steps.trace import _events, _launched

    from l2attr.steps.trace import profiled

    call()                                  # the state one call leaves the next, untraced
    torch.cuda.synchronize()

    def body() -> None:
        for i in range(repeats):
            with torch.profiler.record_function(LEGACY_PREFIX + STEP_TRACE.build(condition=NATURAL, step=i)):
                call()
            torch.cuda.synchronize()
    trace = profiled(torch, body)
    rows = [r for r in _launched(_events(trace), STEP_RANGE, STEP_TRACE.parse) if not r["graph"]]
    if not rows:
        return pd.DataFrame({"kernel_us": [], "kernels": [], "names": []})
    df = pd.DataFrame(rows).sort_values(["step", "start_us"])
    by = df.groupby("step")
    return pd.DataFrame({"kernel_us": by["duration_us"].sum(), "kernels": by.size(),
                         "names": by["kernel"].agg(list)}).reset_index()


def kernel_difference(graph: list[str], call: list[str]) -> dict[str, list[str]]:
    """The kernels one side launches that the other does not (names with multiplicity, short):
    what a reader needs when the graph and the function called on its own disagree."""
    from collections import Counter

    g, c = Counter(graph), Counter(call)
    return {"only_in_graph": sorted(n[:120] for n in (g - c).elements()),
            "only_in_call": sorted(n[:120] for n in (c - g).elements())}


CONTROL_BYTES = 1 << 20          # the control kernel's slice: a short kernel's footprint in a decode step
CONTROL_KERNEL = "reduce_kernel"  # torch's sum over a slice launches one kernel of this name


def control_cost(torch: Any, flush: Callable[[], None], repeats: int, nbytes: int = CONTROL_BYTES) -> list[float]:
    """What a flush costs a kernel besides its data (code, constants, page-table entries): a sum over
    a slice no step leaves resident, right after the same kernel over another slice (natural) and
    after the clean flush (cold); per repeat, cold minus natural in µs (CUPTI durations)."""
    from l2attr.steps.trace import KINETO_KERNEL, _events, profiled

    n = nbytes // 4
    slices = 4 * repeats + 4
    buf = torch.ones(slices * n, dtype=torch.float32, device="cuda")
    out = torch.empty((), dtype=torch.float32, device="cuda")
    at = iter(range(slices))

    def read() -> None:
        i = next(at)
        torch.sum(buf[i * n:(i + 1) * n], dim=0, out=out)

    read()                                             # the kernel's first launch (code load), untraced
    flush()                                            # the slices torch.ones just wrote leave L2
    torch.cuda.synchronize()

    def body() -> None:
        for i in range(repeats):
            for cold in ((False, True) if i % 2 == 0 else (True, False)):
                read()
                if cold:
                    flush()
                read()
                torch.cuda.synchronize()
    trace = profiled(torch, body)
    d = [float(e.get("dur", 0.0)) for e in sorted(_events(trace), key=lambda e: float(e.get("ts", 0)))
         if e.get("cat") == KINETO_KERNEL and CONTROL_KERNEL in str(e.get("name", ""))]
    if len(d) != 4 * repeats:
        return []
    out_us = []
    for i in range(repeats):
        a, b = d[4 * i + 1], d[4 * i + 3]                  # the second read of each pair
        nat, cold = (a, b) if i % 2 == 0 else (b, a)
        out_us.append(round(cold - nat, 4))
    return out_us
