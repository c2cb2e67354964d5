"""Graph surgery: every kernel of a captured step made cold on its own, inside the replay.

A flush before each aten op leaves an op's later kernels warm (a fused op, a split-K GEMM, SDPA),
and a dispatch mode around a compiled function runs its eager kernels instead. So the step is
captured into a CUDA graph (what the program itself launches, whatever launched it: eager ATen,
cuBLAS, Triton from torch.compile), and the cold arms are *copies of that graph* with a flush node
in front of every kernel node:

- the flush is a child-graph node holding a captured flush (steps/measure/flushes.py): un-pin, demote,
  read twice the L2 (clean lines), and for the write-back arm a write of one L2 of useless lines;
- in the copy, flush j depends on kernel j's dependencies *and* on kernel j-1, and kernel j on
  flush j: the kernels run one at a time in creation order (a captured graph's creation order is
  a topological order), so no flush runs beside a kernel it would disturb. A natural graph whose
  kernels can overlap says so (`overlapping`): its kernels are serialised in the cold arms only.

A graph is refused when it holds nodes whose work the copies cannot reproduce faithfully (host
callbacks, conditional nodes, memory allocation nodes) or when three captures of the step differ
(steps/measure/pointers.py launch_difference).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from l2attr.errors import UserError

ALLOWED = ("Kernel", "Memcpy", "Memset", "Empty", "EventRecord", "WaitEvent", "Graph")


def _rt() -> Any:
    try:
        from cuda.bindings import runtime
    except ImportError:
        raise UserError("graph surgery needs the cuda-bindings package (pip install cuda-bindings): "
                        "or pass eager=True for the per-op method") from None
    return runtime


def check(result: Any, what: str) -> Any:
    """cuda-bindings calls return (err, *values): the values, or one clear line."""
    rt = _rt()
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != rt.cudaError_t.cudaSuccess:
        raise UserError(f"graph surgery: {what} failed ({err.name})")
    return rest[0] if len(rest) == 1 else tuple(rest)


def as_graph(raw: int) -> Any:
    return _rt().cudaGraph_t(init_value=int(raw))


def nodes(graph: Any) -> list[Any]:
    rt = _rt()
    _, n = check(rt.cudaGraphGetNodes(graph, 0), "cudaGraphGetNodes")
    if not n:
        return []
    got, _ = check(rt.cudaGraphGetNodes(graph, n), "cudaGraphGetNodes")
    return list(got)


def node_type(node: Any) -> str:
    t = check(_rt().cudaGraphNodeGetType(node), "cudaGraphNodeGetType")
    return str(t.name).replace("cudaGraphNodeType", "")


def edges(graph: Any) -> list[tuple[int, int]]:
    """(from, to) as node handles' integer values (the edge-data result differs between versions)."""
    rt = _rt()
    got = check(rt.cudaGraphGetEdges(graph, 0), "cudaGraphGetEdges")
    n = got[-1]
    if not n:
        return []
    got = check(rt.cudaGraphGetEdges(graph, n), "cudaGraphGetEdges")
    return [(int(a), int(b)) for a, b in zip(got[0], got[1])]


@dataclass
class Shape:
    """What a captured graph is: node types in creation order, its kernel nodes, their order."""

    types: list[str]
    kernels: list[Any]
    overlapping: int = 0                          # kernel nodes not ordered after the kernel before them
    refused: list[str] = field(default_factory=list)


def shape(graph: Any) -> Shape:
    ns = nodes(graph)
    types = [node_type(n) for n in ns]
    kern = [n for n, t in zip(ns, types) if t == "Kernel"]
    refused = sorted({t for t in types if t not in ALLOWED})
    index = {int(n): i for i, n in enumerate(ns)}
    succ: dict[int, list[int]] = {}
    for a, b in edges(graph):
        succ.setdefault(index[a], []).append(index[b])
    reach_ok = 0
    kidx = [index[int(k)] for k in kern]
    for prev, cur in zip(kidx, kidx[1:]):
        reach_ok += _reaches(succ, prev, cur)
    return Shape(types, kern, max(0, len(kern) - 1 - reach_ok), refused)


def _reaches(succ: dict[int, list[int]], a: int, b: int) -> bool:
    seen, todo = {a}, [a]
    while todo:
        x = todo.pop()
        for y in succ.get(x, ()):
            if y == b:
                return True
            if y not in seen and y < b:          # creation order is topological: nothing past b leads to b
                seen.add(y)
                todo.append(y)
    return False


def refuse_shape(s: Shape, again: Shape | None) -> None:
    """One clear line for a graph the copies cannot reproduce, or a step that changes between calls."""
    if s.refused:
        raise UserError(f"the captured step holds {', '.join(s.refused)} node(s): a host callback or a "
                        "conditional makes its kernel sequence the host's or the data's, not a fixed "
                        "graph's; l2attr cannot flush in front of every kernel (run it with eager=True)")
    if not s.kernels:
        raise UserError("the captured step launched no GPU kernel (are its tensors on the GPU?)")
    if again is not None and again.types != s.types:
        raise UserError(f"the step's kernel sequence changes between calls ({len(s.types)} nodes in one "
                        f"capture, {len(again.types)} in the next); {CHANGES_HINT}")


CHANGES_HINT = ("a step must launch the same work on every call to be replayed: a cache that grows (transformers' "
                "DynamicCache) or a Python counter baked into the launch changes it; use a fixed-size cache "
                "(StaticCache) and pass positions and other state in as GPU tensors")


def refuse_changing(torch: Any, caps: list[Shape]) -> str:
    """Before any replay: one clear line when three consecutive captures launch a kernel node
    differently (pointers.launch_difference: dimensions, argument sizes, or a small whole number that
    moves by one step per call), which a replay would run stale: a grown cache's kernels read memory
    that is gone (an illegal address that ends the process's CUDA context). Otherwise what the run
    says of the check: the values that changed but are no count (a struct's padding), the nodes whose
    launch the driver did not give (not compared)."""
    from l2attr.steps.measure.pointers import PointersUnavailable, blocks, host_spans, launch_difference, node_launch

    spans, host = blocks(torch.cuda.memory_snapshot()), host_spans()
    unread: list[int] = []
    why = ""
    irregular = 0
    for j, nodes in enumerate(zip(*(c.kernels for c in caps))):
        try:
            launches = [node_launch(n) for n in nodes]
        except PointersUnavailable as exc:          # this node unread; the others are still compared
            unread.append(j)
            why = why or (str(exc).splitlines() or [type(exc).__name__])[0]
            continue
        diff, n = launch_difference(launches, spans, host)
        if diff:
            raise UserError(f"the step changes between calls: kernel node {j} is launched differently by "
                            f"{len(caps)} consecutive calls ({diff}); {CHANGES_HINT}")
        irregular += n
    said = f"the {len(caps)} captures launch every kernel node alike"
    if irregular:
        said += (f", but for {irregular} argument value(s) that changed between calls and are no count (bytes "
                 "the host left in a struct: no small whole number moving by one step per call)")
    if unread:
        said += (f"; {len(unread)} of {len(caps[0].kernels)} kernel nodes' launches could not be read ({why}): "
                 "not compared")
    return said


def with_flushes(graph: Any, s: Shape, flush: Any, only: dict[int, Any] | None = None) -> Any:
    """A copy of `graph` with a child-graph node (`flush`) in front of every kernel node, the kernels
    serialised in creation order; with `only` (kernel position -> child graph), a node in front of
    those kernels alone, each after the kernel before it. The original is not changed."""
    rt = _rt()
    clone = check(rt.cudaGraphClone(graph), "cudaGraphClone")
    prev = None
    for j, k in enumerate(s.kernels):
        kc = check(rt.cudaGraphNodeFindInClone(k, clone), "cudaGraphNodeFindInClone")
        child = flush if only is None else only.get(j)
        if child is not None:
            got = check(rt.cudaGraphNodeGetDependencies(kc, 0), "cudaGraphNodeGetDependencies")
            n = got[-1]
            deps = list(check(rt.cudaGraphNodeGetDependencies(kc, n), "cudaGraphNodeGetDependencies")[0]) if n else []
            if prev is not None and int(prev) not in {int(d) for d in deps}:
                deps.append(prev)
            f = check(rt.cudaGraphAddChildGraphNode(clone, deps, len(deps), child), "cudaGraphAddChildGraphNode")
            _add_edge(clone, f, kc)
        prev = kc
    return clone


def _add_edge(graph: Any, a: Any, b: Any) -> None:
    rt = _rt()
    try:
        check(rt.cudaGraphAddDependencies(graph, [a], [b], None, 1), "cudaGraphAddDependencies")
    except TypeError:           # bindings before the edge-data argument
        check(rt.cudaGraphAddDependencies(graph, [a], [b], 1), "cudaGraphAddDependencies")


class Exec:
    """An instantiated graph, launched on torch's current stream."""

    def __init__(self, torch: Any, graph: Any) -> None:
        self.rt, self.torch = _rt(), torch
        self.exec = check(self.rt.cudaGraphInstantiate(graph, 0), "cudaGraphInstantiate")

    def __call__(self) -> None:
        s = self.rt.cudaStream_t(init_value=int(self.torch.cuda.current_stream().cuda_stream))
        check(self.rt.cudaGraphLaunch(self.exec, s), "cudaGraphLaunch")

    def close(self) -> None:
        if self.exec is not None:
            self.rt.cudaGraphExecDestroy(self.exec)
            self.exec = None


def capture(torch: Any, fn: Callable[[], Any], warmup: int, pool: Any = None) -> Any:
    """Warm `fn` up `warmup` times on a side stream (torch's graph docs ask for it: allocator, autotuning, compiles)
    and capture it into a torch.cuda.CUDAGraph that keeps its cudaGraph_t. One clear line when the
    step cannot be captured (a host sync, a CPU tensor read, dynamic shapes)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph(keep_graph=True)
    try:
        with torch.cuda.graph(g, pool=pool):
            fn()
    except Exception as exc:            # torch raises RuntimeError or its AcceleratorError subclass
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        torch.cuda.synchronize()
        _heal_generators(torch)
        raise UncapturableStep(f"{first}; a host sync inside the step (.item(), .cpu(), .tolist(), a "
                               "data-dependent shape) is the usual cause") from None
    torch.cuda.synchronize()
    return g


def _heal_generators(torch: Any) -> None:
    """After a failed capture torch's CUDA generator still expects a graph (its capture epilogue
    never ran), so the next random op anywhere in the process raised "Offset increment outside
    graph capture" (seen on the H200 in bench_steps --bad: the user's program broken by our
    capture attempt). One trivial capture that ends cleanly runs the epilogue."""
    try:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            torch.empty(1, device="cuda").zero_()
        torch.cuda.synchronize()
        del g
    except Exception:         # nothing more to do: the caller's line says the step was not captured
        pass


class UncapturableStep(UserError):
    """The step could not be captured into a CUDA graph (the caller may fall back to eager)."""


def raw_graph(g: Any) -> Any:
    return as_graph(g.raw_cuda_graph())
