"""The flushes a cold graph puts in front of every kernel, each captured once into its own graph.

Clean (the `cold` arm): un-pin (evict_last prefetch of the flush buffer), demote (applypriority
evict_normal), then a read of twice the L2: the kernel meets only clean, normal lines of a buffer it
never touches, and pays no one's write-back. Dirty (the `cold_dirty` arm): the same, then a write
of one L2 of useless data: the kernel pays the write-back of a full L2 of dirty lines, at least what
the program's own state could leave it. A kernel's matched cold time lies between the two (the
program leaves at most an L2 of dirty lines), which is why both readings are kept.

Matched (the `cold_matched` arm, the answer's): the clean flush, then as many dirty bytes as the
kernel inherits in natural (its write-back, read by Nsight Compute: docs/step-method.md), rounded to
WRITE_BACK_GRAIN: the kernel meets the write-back the program leaves it and nothing it could reuse.
One graph per distinct size, captured once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from l2attr.vocab import L2Condition

LINE = 128
WRITE_BACK_GRAIN = 64 << 10     # matched write-back is rounded to this (the probe's D: median 0 B, p90 31 KB)


def grain(nbytes: float, l2_bytes: int) -> int:
    """A kernel's inherited write-back as the matched flush writes it: rounded to the nearest
    WRITE_BACK_GRAIN, at most one L2 (what the program can leave dirty), never negative."""
    if not nbytes or nbytes != nbytes or nbytes <= 0:
        return 0
    return int(min(round(nbytes / WRITE_BACK_GRAIN) * WRITE_BACK_GRAIN, l2_bytes - l2_bytes % WRITE_BACK_GRAIN))


class Flushes:
    """The flush graphs of one run, built on the current device (buffers live as long as this)."""

    def __init__(self, torch: Any, cupy: Any, l2_bytes: int) -> None:
        import numpy as np

        from l2attr.gpu.runtime import DEMOTE_SPEC, DIRTY_SPEC, FLUSH_SPEC, UNPIN_SPEC, get_kernel
        from l2attr.measure.timer import torch_stream

        self.torch, self.cupy, self.np, self.l2_bytes = torch, cupy, np, l2_bytes
        self._stream = lambda: torch_stream(torch, cupy)
        # no random op: a failed capture of the user's step may have left torch's generator unusable
        self.read = torch.arange(2 * l2_bytes // 4, dtype=torch.int32, device="cuda")
        self.dirty = torch.empty(l2_bytes // 4, dtype=torch.int32, device="cuda")
        self.sink = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.k = {name: get_kernel(spec) for name, spec in
                  (("unpin", UNPIN_SPEC), ("demote", DEMOTE_SPEC), ("read", FLUSH_SPEC), ("dirty", DIRTY_SPEC))}
        self.graphs: dict[str, Any] = {}
        self._matched: dict[int, Any] = {}  # dirty bytes -> the clean flush followed by that many written
        self._keep: list[Any] = []          # the torch graphs whose cudaGraph_t the cold copies embed
        self.graphs[L2Condition.COLD.value] = self._capture(0)
        self.graphs[L2Condition.COLD_DIRTY.value] = self._capture(self.dirty.numel() * 4)

    def matched(self, nbytes: float) -> Any:
        """The clean flush, then `nbytes` (after `grain`) of dirty lines: one graph per size."""
        n = grain(nbytes, self.l2_bytes)
        if n == 0:
            return self.graphs[L2Condition.COLD.value]
        if n not in self._matched:
            self._matched[n] = self._capture(n)
        return self._matched[n]

    def launch(self, dirty_bytes: int) -> None:
        """The flush itself, on torch's current stream (captured by `_capture`, or run eagerly)."""
        np, s = self.np, self._stream()
        ptr, lines = np.uint64(self.read.data_ptr()), np.int64(self.read.numel() * 4 // LINE)
        self.k["unpin"]((1024,), (256,), (ptr, lines), stream=s)
        self.k["demote"]((1024,), (256,), (ptr, lines), stream=s)
        self.k["read"]((1024,), (256,), (ptr, np.int64(self.read.numel()), np.uint64(self.sink.data_ptr())), stream=s)
        if dirty_bytes:
            self.k["dirty"]((1024,), (256,), (np.uint64(self.dirty.data_ptr()), np.int64(min(dirty_bytes // 4, self.dirty.numel())),
                                              np.uint32(0x5bd1e995)), stream=s)

    def settle(self) -> None:
        """Before a natural replay's untraced predecessors (eager, outside every graph): the
        context's reset of evict-last lines to normal, then a read of twice the L2. It writes back
        the full L2 of dirty lines a `cold_dirty` replay leaves and makes no evict-last line. It does
        not by itself give the program's steady state: the warm replays after it do
        (docs/steps.md#natural-arm)."""
        from l2attr.gpu.runtime import reset_persisting_l2

        self.torch.cuda.synchronize()
        reset_persisting_l2()
        np = self.np
        self.k["read"]((1024,), (256,), (np.uint64(self.read.data_ptr()), np.int64(self.read.numel()),
                                         np.uint64(self.sink.data_ptr())), stream=self._stream())

    def _capture(self, dirty_bytes: int) -> Any:
        from l2attr.steps.measure.surgery import capture, raw_graph

        self.launch(dirty_bytes)                      # compile + load the kernels outside the capture
        g = capture(self.torch, lambda: self.launch(dirty_bytes), warmup=1)
        self._keep.append(g)
        return raw_graph(g)

    def graph(self, condition: str) -> Any:
        return self.graphs[condition]


# -- the rewarmed arms ----------------------------------------------------------------------
# The rewarmed arms of a graph-surgery step: the flush's non-data cost, per kernel node, paired.
#
# A flush before a kernel takes two things away: the data the kernel could have found in L2, and what
# is no data at all (code and constants resident in L2, page-table entries). The study's quantity is
# the first. A control kernel elsewhere in the process measures the second only for itself; a
# 200 MB GEMM, an attention kernel and a 3 KB gather need not pay what it pays. So every kernel node
# gets two more arms, built from the blocks its pointer arguments touch (steps/measure/pointers.py):
#
#   warm_inputs  no flush; before kernel j every block j touches read back (clean loads, no store:
#                kernels/warm_l2.cu), at most one L2, the most recent kept;
#   rewarmed     before kernel j the matched flush (clean flush, then j's inherited write-back),
#                then the same read-back.
#
# Both leave j's inputs resident, the same bytes in the same order; they differ only by the flush.
# So per node and repeat, rewarmed - warm_inputs is the flush's non-data cost to that kernel, and
# natural - warm_inputs is the headroom: what perfect residency of every input would add to today.
# A node whose launch the driver does not give, or that touches no allocator block, gets neither
# child (`unread`): the analysis charges it the control kernel's cost instead, and says how many.


@dataclass
class Rewarms:
    """The child graphs of both arms, node -> graph, and which nodes have none."""

    warm: dict[int, Any] = field(default_factory=dict)
    rewarmed: dict[int, Any] = field(default_factory=dict)
    unread: list[int] = field(default_factory=list)
    why: str = ""
    warmed_bytes: int = 0
    keep: list[Any] = field(default_factory=list)      # the torch graphs whose cudaGraph_t the copies embed


def build(dev: Any, flushes: Any, kernel_nodes: list[Any], write_back: dict[int, float]) -> Rewarms:
    """Capture each read node's two children: the read-back alone, and the matched flush then the read-back."""
    from l2attr.steps.measure import surgery
    from l2attr.steps.measure.edges import Warmer
    from l2attr.steps.measure.graph_edges import fit
    from l2attr.steps.measure.pointers import own_spans, read_each

    torch = dev.torch
    touch, spans, why = read_each(torch, kernel_nodes)
    warm = Warmer(dev)
    out = Rewarms(why=why)
    for j in range(len(kernel_nodes)):
        ranges = fit(own_spans(j, touch, spans), dev.l2_bytes) if touch[j] is not None else []
        if not ranges:
            out.unread.append(j)
            continue
        dirty = grain(write_back.get(j, 0.0), dev.l2_bytes)

        def read_back(ranges: list[tuple[int, int]] = ranges) -> None:
            warm.launch(ranges)

        def flushed(ranges: list[tuple[int, int]] = ranges, dirty: int = dirty) -> None:
            flushes.launch(dirty)
            warm.launch(ranges)

        for fn, into in ((read_back, out.warm), (flushed, out.rewarmed)):
            g = surgery.capture(torch, fn, warmup=1)
            out.keep.append(g)
            into[j] = surgery.raw_graph(g)
        out.warmed_bytes += sum(n for _, n in ranges)
    if not out.why and out.unread:
        out.why = "no allocator block among their pointer arguments"
    return out


def facts(r: Rewarms, n_kernels: int) -> dict[str, Any]:
    """What the manifest says of the rewarmed arms: the nodes without one and why."""
    return {"rewarm_unread": list(r.unread), "rewarm_nodes": n_kernels - len(r.unread),
            "rewarm_bytes": int(r.warmed_bytes), **({"rewarm_why": r.why} if r.unread else {})}
