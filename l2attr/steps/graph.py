"""A step that replays a CUDA graph: l2attr captures the step function into a torch.cuda.CUDAGraph.

The method (stated in every graph run's manifest):
- ops and tensors: recorded while the graph is captured (the dispatch mode sees every op the
  capture records; the manifest says whether they are the eager step's), and in each eager cold
  step, whose tensors the edges are made of;
- natural: replays of the graph, kernel durations from kineto (a replay's kernels carry the
  correlation id of its cudaGraphLaunch), the step time from untraced replays;
- cold: eager re-execution of the captured function with the read flush before each op (a
  graph runs its kernels with no host in between: nothing can be flushed inside a replay);
- kernels of a replay are matched to ops by their order: the replay's kernel names aligned with
  the eager cold step's (difflib, exact names); a kernel the eager step does not have gets
  op_index -2 (UNMATCHED: in the step's kernel time, paired with nothing, in no saving).
"""

from __future__ import annotations

import difflib
from typing import Any, Callable

import pandas as pd

from l2attr.errors import UserError
from l2attr.vocab import L2Condition

UNMATCHED = -2   # op_index of a replayed kernel the eager step does not have

METHOD = {"natural": "replays of a CUDA graph l2attr captured from the step function (kineto kernel records)",
          "cold": "eager re-execution of the captured function, read flush before each op",
          "ops": "recorded during capture and in every eager cold step",
          "edges": "measured on eager re-execution"}


def capture(torch: Any, fn: Callable[..., Any], args: tuple, kwargs: dict, warmup: int) -> tuple[Any, list[Any]]:
    """Warm `fn` up on a side stream (as torch's graph docs ask), capture it: (graph, ops)."""
    from l2attr.steps.record import make_recorder

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(max(1, warmup)):
            fn(*args, **kwargs)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    rec = make_recorder(None)
    try:
        with torch.cuda.graph(graph):
            with rec.modules, rec:
                fn(*args, **kwargs)
    except RuntimeError as exc:
        raise UserError(f"the step function cannot be captured into a CUDA graph: {str(exc).splitlines()[0]}") from None
    torch.cuda.synchronize()
    if not rec.ops:
        raise UserError("the step function dispatched no aten op while captured: nothing to attribute")
    return graph, rec.ops


def align(k: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """Give a graph run's natural kernels the op and order of the eager cold step's kernels they
    match (by name, in order); the others UNMATCHED. Returns the table and the counts."""
    cold = k[k["condition"] == L2Condition.COLD.value]
    nat = k[k["condition"] == L2Condition.NATURAL.value]
    if cold.empty or nat.empty:
        raise UserError("graph step: no kernels traced in the natural replays or the eager cold steps "
                        "(kineto recorded none of the graph's kernels?)")
    first = cold[cold["step"] == cold["step"].min()].sort_values("start_us")
    ref = list(zip(first["op_index"], first["kernel_index"], first["kernel"]))
    names = [x[2] for x in ref]
    out, worst = [], len(ref)
    for _, g in nat.groupby("step", sort=True):
        g = g.sort_values("start_us").reset_index(drop=True)
        ops, idx, hit = [UNMATCHED] * len(g), [0] * len(g), [False] * len(g)
        sm = difflib.SequenceMatcher(None, names, list(g["kernel"]), autojunk=False)
        matched = 0
        for a, b, size in sm.get_matching_blocks():
            for i in range(size):
                ops[b + i], idx[b + i], hit[b + i] = int(ref[a + i][0]), int(ref[a + i][1]), True
                matched += 1
        extra = 0
        for j in range(len(g)):
            if not hit[j]:
                idx[j] = extra
                extra += 1
        worst = min(worst, matched)
        out.append(g.assign(op_index=ops, kernel_index=idx))
    counts = {"eager_kernels": len(ref), "replay_kernels": int(nat.groupby("step").size().max()),
              "matched_kernels": worst}
    if worst == 0:
        raise UserError(f"graph step: none of the {counts['replay_kernels']} replayed kernels matches the "
                        f"eager step's {len(ref)} by name and order")
    merged = pd.concat([cold, *out], ignore_index=True)
    return merged.sort_values(["condition", "step", "start_us"]).reset_index(drop=True), counts
