"""`l2attr.step` by graph surgery (the default for any step that can be captured).

1. Capture the step twice (the two must hold the same nodes, launched alike) into CUDA graphs;
   refuse host and conditional nodes and a step that changes between calls (steps/measure/surgery.py).
2. Build the cold copies (steps/measure/flushes.py): a clean flush before every kernel node (`cold`), a
   flush that leaves one L2 of dirty lines (`cold_dirty`), a clean flush followed by the kernel's
   own inherited write-back (`cold_matched`, where the write-back was measured), and one flush before
   the first kernel only (`cold_start`: what the step reuses of what was there before it).
3. Replay the arms interleaved under torch.profiler; every kernel's duration per arm, keyed by its
   node (steps/measure/trace.py).
4. Attribute nodes to ops from one eager recorded call (steps/measure/attribute.py).
5. Time the step three ways, the answer's denominators: the natural graph's replays (blocking
   timer), the function called on its own in a loop as a program runs it (host clock, nothing
   queued ahead: the eager step), and its kernels summed per call under the profiler, the figure
   the natural replay's kernels are held to. Then the flush's non-data cost, by a control kernel.
"""


from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import pandas as pd

from l2attr.vocab import L2Condition

# the arms, as members from here to the kernel table (steps/measure/trace.py Slots)
NATURAL, COLD, MATCHED, DIRTY, START = (L2Condition.NATURAL, L2Condition.COLD, L2Condition.COLD_MATCHED,
                                        L2Condition.COLD_DIRTY, L2Condition.COLD_START)
WARM, REWARMED = L2Condition.WARM_INPUTS, L2Condition.REWARMED
# (node-keyed kernels so far, what the rule needs besides them) -> True once the answer is decided
StopRule = Callable[[pd.DataFrame, Mapping[str, Any]], bool]
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
    "cold_matched": "the copy whose flush before kernel j is the clean flush followed by D_j bytes written, D_j the "
                    "DRAM bytes kernel j writes in natural minus those it writes after Nsight Compute's flush "
                    "(rounded to 64 KiB, at most one L2): the write-back it inherits, and no data it could reuse",
    "cold_start": "the natural graph with one flush before its first kernel only (matched to that kernel's "
                  "write-back when measured): the step's own kernels leave L2 as in natural, what was resident "
                  "before the step is gone",
    "eager_us": "the step function called in a loop, five calls per reading, host clock between two "
                "synchronisations, no launch queued ahead: the eager step as a program runs it, per call",
    "control_us": "per repeat: a 1 MiB sum over data no step leaves resident, after the clean flush minus after "
                  "the same kernel on another slice: the flush's cost to one kernel besides its data",
    "warm_inputs": "the natural graph with a node before every kernel that reads back every allocator block the "
                   "kernel's pointer arguments touch (clean loads, at most one L2, the most recent kept), no flush",
    "rewarmed": "the copy whose node before every kernel is the matched flush, then the same read-back: rewarmed minus "
                "warm_inputs is the flush's non-data cost to that kernel (steps/measure/flushes.py)",
}


@dataclass(frozen=True)
class SurgeryRun:
    """What one graph-surgery measurement gives the writer: node-keyed kernels of every arm, the eager
    ops, the replays' step times, the facts for the manifest, and the kernel-level edges."""

    kernels: pd.DataFrame
    ops: list[Any]
    times: pd.DataFrame
    facts: dict[str, Any]
    edges: pd.DataFrame | None = None
    edges_why: str = ""
    write_back: pd.DataFrame = field(default_factory=pd.DataFrame)     # node, kernel, bytes (matched arm)



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


def write_back_bytes(write_back: Mapping[int, float] | float | None, n_kernels: int) -> tuple[dict[int, float], str]:
    """Per kernel node, the write-back its natural run inherits (bytes), from steps/declare.py
    `node_bytes`'s one form (a mapping node -> bytes, or one number for every node: 0 for a step known
    to leave nothing dirty). ({}, why) when there is none or it is not this graph's."""
    if write_back is None:
        return {}, "no write-back reading was given (Nsight Compute per kernel node: steps/measure/ncu.py profile_graph)"
    got = (dict(write_back) if isinstance(write_back, Mapping)
           else {j: float(write_back) for j in range(n_kernels)})      # every node the same (0: the clean flush)
    if sorted(got) != list(range(n_kernels)):
        return {}, (f"the write-back reading covers {len(got)} kernel nodes and the captured graph holds "
                    f"{n_kernels}: not the same graph")
    return got, ""


def measure(dev: Any, fn: Callable[..., Any], args: tuple, kwargs: dict, repeats: int, warmup: int,
            log: Callable[[str], None], edges: int = 0, write_back: Any = None, rewarm: bool = True,
            until: StopRule | None = None, max_repeats: int = 0) -> SurgeryRun:
    """Everything the surgery run writes, phase by phase: capture, arms, trace (in rounds of
    `repeats` until the rule `until` says the answer is decided or `max_repeats` are traced), attribute,
    time, control, edges (steps/measure/graph_edges.py; None with a reason where the driver gives no arguments)."""
    from l2attr.steps.measure import attribute
    from l2attr.steps.measure import flushes as rewarms
    from l2attr.steps.measure import graph_edges
    from l2attr.steps.measure import surgery
    from l2attr.steps.measure import timing
    from l2attr.steps.measure import trace
    from l2attr.steps.measure.flushes import Flushes, grain

    torch = dev.torch
    t0 = time.perf_counter()
    try:
        import cuda.bindings.runtime  # noqa: F401
    except ImportError:
        raise surgery.UncapturableStep("the cuda-bindings package is not installed: pip install cuda-bindings") from None
    # -- capture: twice, the same nodes launched alike, or one clear line before any replay
    own = user_graph(torch, fn)
    flushes = Flushes(torch, dev.cupy, dev.l2_bytes)   # before the user's capture: a failed one can leave torch's RNG mid-capture
    call = (lambda: fn(*args, **kwargs))
    keep: list[Any] = []
    launch_check = "the user's own graph: captured once"
    if own is None:
        keep += [surgery.capture(torch, call, max(1, warmup))]
        keep += [surgery.capture(torch, call, 0) for _ in range(2)]   # the next calls: the same launches
        raw = surgery.raw_graph(keep[0])
        caps = [surgery.shape(raw)] + [surgery.shape(surgery.raw_graph(g)) for g in keep[1:]]
        s = caps[0]
        for again in caps[1:]:
            surgery.refuse_shape(s, again)
        launch_check = surgery.refuse_changing(torch, caps)
        log(f"step graph: {launch_check}")
    else:
        raw = surgery.as_graph(own)
        s = surgery.shape(raw)
        surgery.refuse_shape(s, None)
    t_capture = time.perf_counter() - t0
    # -- arms: natural and its cold copies
    wb, wb_why = write_back_bytes(write_back, len(s.kernels))
    arms = {NATURAL: surgery.Exec(torch, raw),
            COLD: surgery.Exec(torch, surgery.with_flushes(raw, s, flushes.graph(COLD)))}
    if wb:
        arms[MATCHED] = surgery.Exec(torch, surgery.with_flushes(raw, s, None, only={
            j: flushes.matched(wb[j]) for j in range(len(s.kernels))}))
    arms[DIRTY] = surgery.Exec(torch, surgery.with_flushes(raw, s, flushes.graph(DIRTY)))
    arms[START] = surgery.Exec(torch, surgery.with_flushes(raw, s, None, only={0: flushes.matched(wb.get(0, 0.0))}))
    rw = rewarms.build(dev, flushes, s.kernels, wb) if rewarm else None
    if rw is not None and rw.warm:
        arms[WARM] = surgery.Exec(torch, surgery.with_flushes(raw, s, None, only=rw.warm))
        arms[REWARMED] = surgery.Exec(torch, surgery.with_flushes(raw, s, None, only=rw.rewarmed))
    for a in arms.values():         # one replay each before tracing: upload, first-launch costs
        a()
    torch.cuda.synchronize()
    # -- trace: every kernel of every arm, keyed by node; more rounds while the rule is undecided
    t1 = time.perf_counter()
    k, names = trace.trace_replays(torch, arms, repeats, settle=flushes.settle)
    done, rounds = repeats, 1
    if until is not None:
        ctx = {"eager_us": timing.time_eager(torch, call, 5) if own is None else [],
               "replay_us": list(timing.time_steps(dev, arms[NATURAL], 5)["step_us"]),
               "control_us": timing.control_cost(torch, lambda: flushes.launch(0), 10),
               "unread": len(rw.unread) if rw is not None and rw.warm else None}
        settled = until(k, ctx)
        while done < max_repeats and not settled:
            more = min(done, max_repeats - done)
            k2, _ = trace.trace_replays(torch, arms, more, settle=flushes.settle, first=done)
            k = pd.concat([k, k2], ignore_index=True)
            done, rounds = done + more, rounds + 1
            settled = until(k, ctx)
        log(f"step graph: {done} repeats in {rounds} round(s) ({'decided' if settled else 'undecided'} "
            f"within at most {max_repeats})")
    t_trace = time.perf_counter() - t1
    # -- attribute: nodes to the eager ops that launch them
    k, ops, counts, why = attribute.attribute(torch, fn, args, kwargs, k, names, own is None)
    # -- time: the replay, the call, the eager loop, the call's own kernels; the flush's non-data cost
    times = timing.times(dev, arms[NATURAL], None if own is not None else call,
                         None if own is not None else keep[0].replay, done, lambda: flushes.launch(0), names)
    for a in arms.values():
        a.close()
    edge_rows, edge_why = graph_edges.measured_edges(dev, raw, s, k, flushes, edges, repeats, log) if edges else (None, "")
    wb_table = pd.DataFrame({"node": list(range(len(names))), "kernel": names,
                             "bytes": [float(wb[j]) for j in range(len(names))],
                             "matched_bytes": [grain(wb[j], dev.l2_bytes) for j in range(len(names))]}) if wb else pd.DataFrame()
    facts = {**METHOD, **counts, "arms": [a.value for a in arms], "overlapping_kernels": s.overlapping, "nodes": len(s.types),
             "node_types": {t: s.types.count(t) for t in sorted(set(s.types))},
             **times.facts(), "launch_check": launch_check, "repeats_done": done, "rounds": rounds,
             **(rewarms.facts(rw, len(names)) if rw is not None and rw.warm else {}),
             "timings": {"capture_s": round(t_capture, 2), "trace_s": round(t_trace, 2)}}
    if not wb:
        facts["write_back_missing"] = wb_why
    if rw is not None and not rw.warm:
        facts["rewarm_missing"] = f"no kernel node's inputs could be read back ({rw.why}): the control is the non-data cost"
    if not times.control_us:
        facts["control_missing"] = "the control kernel's launches were not all traced: no non-data cost is taken off"
    facts["compiled"] = attribute.is_compiled(torch, fn)
    if times.difference:
        facts["call_kernel_difference"] = times.difference
    if why:
        facts["eager_record"] = why
    log(f"step graph: {len(names)} kernel nodes, {counts['matched_kernels']} attributed to eager ops"
        f"{f', {s.overlapping} may overlap in natural' if s.overlapping else ''}"
        f"{'' if wb else '; no write-back reading: the answer is the clean/dirty bracket'}")
    del keep
    return SurgeryRun(k, ops, times.steps, facts, edge_rows, edge_why, wb_table)
