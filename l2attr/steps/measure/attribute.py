"""Which op and module launched each kernel node of a captured step.

The graph knows kernels, not ops. One eager call of the step under l2attr's recorder (a dispatch
mode: ops, modules, tensors) and torch.profiler gives the eager kernel sequence with each kernel's
op; the graph's kernel names (node order) are aligned with it by name and order (difflib, exact
names). A node that the eager call does not launch (a Triton kernel of a compiled step, whose
eager call runs ATen kernels instead) keeps op_index UNMATCHED and is attributed by its name: it is
measured as the graph runs it, and the run says how many kernels were attributed which way.

The recorded call runs under `torch.compiler.set_stance("force_eager")`: the recorder installs
module hooks and a dispatch mode, and a compiled module called under new hooks recompiles on every
call until Dynamo's recompile limit, after which it runs eagerly for good (seen on the H200: the
compiled decoder's prefill step then captured ATen kernels only). Forced eager, the compiled
function's caches are left as they were, and the record is the eager program by definition.
"""

from __future__ import annotations

import difflib
from typing import Any, Callable

import pandas as pd

from l2attr.vocab import L2Condition

from l2attr.names import UNMATCHED, name_op  # noqa: F401  (name_op: re-exported for callers)


def eager_stance(torch: Any) -> Any:
    """A context in which compiled code runs eagerly without touching its caches (a null context on
    a torch without compiler stances)."""
    import contextlib

    stance = getattr(getattr(torch, "compiler", None), "set_stance", None)
    return stance("force_eager") if callable(stance) else contextlib.nullcontext()


def is_compiled(torch: Any, fn: Any) -> bool:
    """Whether `fn` is a torch.compile'd module or function (what the answer must not silently
    measure as its eager version)."""
    optimized = getattr(getattr(getattr(torch, "_dynamo", None), "eval_frame", None), "OptimizedModule", None)
    return (isinstance(optimized, type) and isinstance(fn, optimized)) or hasattr(fn, "_torchdynamo_orig_callable")


def eager_record(torch: Any, fn: Callable[..., Any], args: tuple, kwargs: dict) -> tuple[pd.DataFrame, list[Any], str]:
    """One eager call under the recorder: (its kernels with op_index, kernel_index; its ops; why
    not, when it could not be recorded)."""
    from l2attr.steps.measure.record import make_recorder
    from l2attr.steps.measure.trace import Slots, kernels, profiled

    rec = make_recorder(None)
    slots = Slots()

    def body() -> None:
        with eager_stance(torch), slots.range(torch, condition=L2Condition.NATURAL, step=0), rec.modules, rec:
            fn(*args, **kwargs)
    try:
        k = kernels(profiled(torch, body), slots)
    except Exception as exc:          # a compiled or exotic step may refuse the dispatch mode
        return pd.DataFrame(), [], f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"
    return k, rec.ops, ""


def assign(k: pd.DataFrame, node_names: list[str], eager: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """Give every node-keyed kernel row its op_index and kernel_index (UNMATCHED: by name)."""
    ref: list[tuple[int, int, str]] = []
    if len(eager):
        first = eager.sort_values("start_us")
        ref = [(int(a), int(b), str(c)) for a, b, c in zip(first["op_index"], first["kernel_index"], first["kernel"])]
    ops, idx = [UNMATCHED] * len(node_names), [0] * len(node_names)
    hit = [False] * len(node_names)
    sm = difflib.SequenceMatcher(None, [r[2] for r in ref], node_names, autojunk=False)
    for a, b, size in sm.get_matching_blocks():
        for i in range(size):
            ops[b + i], idx[b + i], hit[b + i] = ref[a + i][0], ref[a + i][1], True
    extra = 0
    for j in range(len(node_names)):
        if not hit[j]:
            idx[j] = extra
            extra += 1
    by_node = pd.DataFrame({"node": range(len(node_names)), "op_index": ops, "kernel_index": idx})
    out = k.merge(by_node, on="node", how="left")
    counts = {"graph_kernels": len(node_names), "eager_kernels": len(ref), "matched_kernels": int(sum(hit))}
    return out, counts


def attribute(torch: Any, fn: Callable[..., Any], args: tuple, kwargs: dict, k: pd.DataFrame, names: list[str],
              record: bool) -> tuple[pd.DataFrame, list[Any], dict[str, int], str]:
    """The attribute phase: one eager call recorded (when `record`: the step is a function) and the
    nodes given their ops; (kernels, ops, counts, why the call was not recorded)."""
    if record:
        eager, ops, why = eager_record(torch, fn, args, kwargs)
    else:
        eager, ops, why = pd.DataFrame(), [], "the step is the user's own CUDA graph: no eager call to record"
    k, counts = assign(k, names, eager)
    return k, ops, counts, why
