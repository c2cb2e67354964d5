"""`l2attr.step` by graph surgery (the default for any step that can be captured).

1. Capture the step twice (the two must hold the same nodes) into CUDA graphs; refuse host and
   conditional nodes (steps/surgery.py).
2. Build the cold copies: a clean flush before every kernel node (`cold`) and a flush that leaves
   one L2 of dirty lines (`cold_dirty`): steps/flushes.py.
3. Replay natural, cold and cold_dirty graphs interleaved under torch.profiler; every kernel's
   duration per arm, keyed by its node (steps/replay.py).
4. Attribute nodes to ops from one eager recorded call, by name where it launches other kernels
   (steps/attribute.py).
5. Time the natural graph's replays untraced (blocking timer), and the function called on its own,
   so a reader can see that the graph is the program the user runs: the call's wall (blocking
   timer: every launch queued first, so no host gap; the GPU's own per-launch gaps stay in) and its
   kernels summed per call under the profiler, the figure the natural replay's kernels are held to.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import pandas as pd

from l2attr.schema import STEP_TIMES
from l2attr.vocab import STEP_CONDITIONS, condition_words

ARMS = condition_words(STEP_CONDITIONS)      # natural, cold, cold_dirty (vocab/conditions.py)
METHOD = {
    "natural": "replays of the CUDA graph captured from the step (kineto kernel records), each after a reset of "
               "evict-last lines, a read of 2x L2 and five untraced replays: the L2 as the program's own "
               "back-to-back steps leave it",
    "cold": "replays of a copy of that graph with a flush node before every kernel node: un-pin "
            "(evict_last prefetch of the flush buffer), demote (applypriority evict_normal), read of 2x L2; "
            "kernels serialised in creation order",
    "cold_dirty": "the same copy whose flush also writes one L2 of useless data: every kernel meets an L2 "
                  "full of dirty lines (at least the write-back the program's own state can leave it)",
    "ops": "one eager call under the dispatch-mode recorder, its kernels aligned with the graph's by name "
           "and order; kernels it does not launch attributed by name",
    "call_kernels": "the step function called on its own under the profiler, once per repeat: its kernels' "
                    "durations summed per call (call_kernel_us) and counted (call_kernels)",
}


def time_steps(dev: Any, step: Callable[[], Any], repeats: int) -> pd.DataFrame:
    """Blocking-timer events around the step's launches (no launch lag before the first kernel; the
    host gaps between an eager step's kernels are part of it and stay in)."""
    from l2attr.measure.timer import BlockingTimer

    timer = BlockingTimer(dev.torch, dev.cupy, timeout_ms=2000.0)
    rows = []
    for i in range(2 * repeats + 2):
        s = timer.time(step)
        if i >= 2:                                       # two more warm-ups
            rows.append({"repeat": i - 2, "step_us": s.time_us, "discard": s.discard})
    timer.close()
    return pd.DataFrame(rows, columns=list(STEP_TIMES.columns))


def user_graph(torch: Any, fn: Any) -> Any:
    """A torch.cuda.CUDAGraph the user captured (keep_graph=True), or None when `fn` is a function."""
    graph_type = getattr(getattr(torch, "cuda", None), "CUDAGraph", None)
    if isinstance(graph_type, type) and isinstance(fn, graph_type):
        from l2attr.errors import UserError

        try:
            return fn.raw_cuda_graph()
        except Exception:
            raise UserError("the CUDA graph given as the step was not captured with keep_graph=True: "
                            "l2attr needs its cudaGraph_t to copy it") from None
    return None


def measure(dev: Any, fn: Callable[..., Any], args: tuple, kwargs: dict, repeats: int, warmup: int,
            log: Callable[[str], None], edges: int = 0) -> dict[str, Any]:
    """Everything the surgery run writes: kernels, ops, step times, the manifest's facts, and the
    top `edges` kernel-level edges (None with a reason where the driver gives no arguments)."""
    from l2attr.steps import attribute, replay, surgery
    from l2attr.steps.flushes import Flushes

    torch = dev.torch
    t0 = time.perf_counter()
    try:
        import cuda.bindings.runtime  # noqa: F401
    except ImportError:
        raise surgery.UncapturableStep("the cuda-bindings package is not installed: pip install cuda-bindings") from None
    own = user_graph(torch, fn)
    flushes = Flushes(torch, dev.cupy, dev.l2_bytes)   # before the user's capture: a failed one can leave torch's RNG mid-capture
    call = (lambda: fn(*args, **kwargs))
    keep: list[Any] = []
    if own is None:
        g1 = surgery.capture(torch, call, max(1, warmup))
        g2 = surgery.capture(torch, call, 0)      # the very next call: must capture the same nodes
        keep += [g1, g2]
        raw = surgery.raw_graph(g1)
        s, again = surgery.shape(raw), surgery.shape(surgery.raw_graph(g2))
    else:
        raw = surgery.as_graph(own)
        s, again = surgery.shape(raw), None
    surgery.refuse_shape(s, again)
    t_capture = time.perf_counter() - t0
    arms = {ARMS[0]: surgery.Exec(torch, raw)}
    for cond in ARMS[1:]:
        arms[cond] = surgery.Exec(torch, surgery.with_flushes(raw, s, flushes.graph(cond)))
    for a in arms.values():         # one replay each before tracing: upload, first-launch costs
        a()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    trace = replay.trace_arms(torch, arms, repeats, settle=flushes.settle)
    k = replay.node_kernels(trace)
    t_trace = time.perf_counter() - t1
    names = replay.cold_names(k)
    if own is None:
        eager, ops, why = attribute.eager_record(torch, fn, args, kwargs)
    else:
        eager, ops, why = pd.DataFrame(), [], "the step is the user's own CUDA graph: no eager call to record"
    k, counts = attribute.assign(k, names, eager)
    step_times = time_steps(dev, arms[ARMS[0]], repeats)
    call_us = [] if own is not None else _time_call(dev, call, repeats)
    torch_graph_us = [] if own is not None else _time_call(dev, keep[0].replay, repeats)   # torch's own replay
    calls = replay.trace_calls(torch, call, repeats) if own is None else None
    for a in arms.values():
        a.close()
    edge_rows, edge_why = _kernel_edges(dev, raw, s, k, flushes, edges, repeats, log) if edges else (None, "")
    facts = {**METHOD, **counts, "overlapping_kernels": s.overlapping, "nodes": len(s.types),
             "node_types": {t: s.types.count(t) for t in sorted(set(s.types))},
             "call_us": call_us, "torch_graph_us": torch_graph_us,
             "call_kernel_us": [] if calls is None else [round(float(x), 3) for x in calls["kernel_us"]],
             "call_kernels": [] if calls is None else [int(x) for x in calls["kernels"]],
             "timings": {"capture_s": round(t_capture, 2), "trace_s": round(t_trace, 2)}}
    facts["compiled"] = attribute.is_compiled(torch, fn)
    if calls is not None and len(calls):
        diff = replay.kernel_difference(names, list(calls["names"].iloc[0]))
        if diff["only_in_graph"] or diff["only_in_call"]:
            facts["call_kernel_difference"] = diff
    if why:
        facts["eager_record"] = why
    log(f"step graph: {len(names)} kernel nodes, {counts['matched_kernels']} attributed to eager ops"
        f"{f', {s.overlapping} may overlap in natural' if s.overlapping else ''}")
    del keep
    return {"kernels": k, "ops": ops, "times": step_times, "facts": facts, "edges": edge_rows, "edges_why": edge_why}


def _kernel_edges(dev: Any, raw: Any, s: Any, k: pd.DataFrame, flushes: Any, n: int, repeats: int,
                  log: Callable[[str], None]) -> tuple[pd.DataFrame | None, str]:
    """The kernel-level edges, or (None, why) when the driver does not give the nodes' arguments or
    an edge cannot be measured (the caller then measures op-level edges, and says so)."""
    from l2attr.errors import UserError
    from l2attr.steps import graph_edges
    from l2attr.steps.pointers import PointersUnavailable

    try:
        rows = graph_edges.measure(dev, raw, s, k, flushes, n, repeats)
    except (PointersUnavailable, UserError, RuntimeError) as exc:
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        log(f"step graph: kernel-level edges not measured: {why}")
        return None, why
    if rows is None:
        return None, "no two kernel nodes' pointer arguments share an allocator block"
    return rows, ""


def _time_call(dev: Any, call: Callable[[], Any], repeats: int) -> list[float]:
    """The step function called on its own (not replayed): what the user's program runs."""
    from l2attr.measure.timer import BlockingTimer

    timer = BlockingTimer(dev.torch, dev.cupy, timeout_ms=2000.0)
    out = []
    for i in range(repeats + 2):
        r = timer.time(call)
        if i >= 2 and not r.discard:
            out.append(round(float(r.time_us), 3))
    timer.close()
    return out
