"""Measured selective eviction per edge: the consumer op with only one producer's output cold.

Hopper has no instruction that evicts an address range and keeps the data (`discard.global.L2`
drops dirty lines: the data would be lost), so "evict only the producer's bytes" is built from
what is safe: right before the consumer op, a clean flush of the whole L2 (l2attr's read flush
after a persisting reset: no dirty line left), then the consumer's *other* input bytes read back
into L2 (kernels/warm_l2.cu: one ld.global.cg per 32-byte sector, normal priority, clean lines):
those an earlier op of the step read or wrote, ordered by that last access, oldest first, so the
most recent are the most resident, as after the step's own traffic (`warm_ranges`). Four arms of
one consumer, all identical up to it (each preceded by an untraced step, as the program leaves L2):

  natural    nothing done before the consumer;
  cold       flushed, nothing read back (every input cold);
  rewarmed   flushed, every such input byte read back: the control, which must match natural;
  edge_cold  flushed, the same read back except the bytes this producer wrote.

The edge's saving is edge_cold - natural (steps/analyse/edges.py judges it, and says where the
control is off). The arms of one repeat run back to back, their order rotating. The consumer's
time is the sum of its op's kernels (CUPTI durations), from one torch.profiler session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

import pandas as pd

from l2attr.errors import UserError
from l2attr.schema import STEP_EDGES
from l2attr.steps.measure.record import OpRecord, make_recorder
from l2attr.vocab import L2Condition

SECTOR = 32
ARMS = (L2Condition.NATURAL, L2Condition.REWARMED, L2Condition.EDGE_COLD, L2Condition.COLD)
METHOD = ("right before the consumer op: read flush of the whole L2 (no dirty lines), then the consumer's "
          "other input bytes that earlier ops of the step touched read back into L2 (ld.global.cg per 32-byte "
          "sector, oldest access first); control: all of them read back (rewarmed) against natural")


@dataclass(frozen=True)
class EdgePlan:
    """One edge to measure: op indices and the bytes of the consumer's inputs the producer wrote."""

    producer: int
    consumer: int
    bytes: int


# -- address ranges (pure: tested on a CPU) ---------------------------------------------------

def _minus(span: tuple[int, int], holes: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """[start, end) without the holes, as [start, end) pieces in address order."""
    pieces = [span]
    for hs, he in holes:
        nxt = []
        for s, e in pieces:
            if he <= s or hs >= e:
                nxt.append((s, e))
                continue
            if s < hs:
                nxt.append((s, hs))
            if he < e:
                nxt.append((he, e))
        pieces = nxt
    return pieces


def _touched(o: OpRecord) -> list[tuple[int, int]]:
    return [(p, p + n) for p, n in [*o.inputs, *o.outputs]]


def warm_ranges(consumer: OpRecord, ops: list[OpRecord], producer: int | None = None) -> list[tuple[int, int]]:
    """The consumer's input bytes to read back, as (ptr, nbytes): the bytes an earlier op of the
    step (not a view) read or wrote, each once, ordered by that last access, oldest first (so the
    most recent are the most resident, as after the step's own traffic); without `producer`'s
    outputs when given. Bytes no earlier op touched stay cold: in the natural step they are
    resident only if the previous step left them there, which the control shows."""
    holes = [(p, p + n) for o in ops if o.index == producer for p, n in o.outputs] if producer is not None else []
    left: list[tuple[int, int]] = []
    for ptr, n in consumer.inputs:                      # the inputs' bytes, each once
        left += _minus((ptr, ptr + n), left)
    left = [x for span in left for x in _minus(span, holes)]
    pieces: list[tuple[int, int, int]] = []             # (last access, start, end)
    for o in reversed(ops):
        if o.view or not left:
            continue
        touched = _touched(o)
        rest = []
        for span in left:
            outside = _minus(span, touched)
            inside = _minus(span, outside)
            pieces += [(o.index, s, e) for s, e in inside]
            rest += outside
        left = rest
    return [(s, e - s) for _, s, e in sorted(pieces)]


def sectors(ptr: int, nbytes: int) -> tuple[int, int]:
    """(first sector's address, number of sectors) covering [ptr, ptr + nbytes)."""
    first = ptr - ptr % SECTOR
    return first, (ptr + nbytes - first + SECTOR - 1) // SECTOR


def rotate(arms: tuple[Any, ...], k: int) -> tuple[Any, ...]:
    k %= len(arms)
    return arms[k:] + arms[:k]


def consumer_rows(kern: pd.DataFrame, plans: list[EdgePlan], warmed: dict[tuple[int, str, int], int]) -> pd.DataFrame:
    """Edge-range kernels (steps/trace.edge_kernels) -> step_edges rows: the consumer op's kernels
    summed per (edge, arm, repeat). An arm whose consumer launched no kernel is refused."""
    rows = []
    for (e, arm, r), w in sorted(warmed.items()):
        p = plans[e]
        g = kern[(kern["edge"] == e) & (kern["arm"] == arm) & (kern["repeat"] == r) & (kern["op_index"] == p.consumer)]
        if g.empty:
            raise UserError(f"edge {p.producer} -> {p.consumer}: the consumer launched no kernel in the "
                            f"{arm} arm of repeat {r} (is the step deterministic?)")
        rows.append({"edge": e, "producer": p.producer, "consumer": p.consumer, "bytes": p.bytes, "arm": arm,
                     "repeat": r, "consumer_us": float(g["duration_us"].sum()), "n_kernels": int(len(g)),
                     "warmed_bytes": int(w)})
    return pd.DataFrame(rows, columns=list(STEP_EDGES.columns))


# -- on the GPU -------------------------------------------------------------------------------

class Warmer:
    """Reads address ranges back into L2 on torch's current stream (kernels/warm_l2.cu)."""

    def __init__(self, dev: Any) -> None:
        from l2attr.gpu.runtime import KernelSpec, get_kernel

        self.dev = dev
        self.kernel = get_kernel(KernelSpec("warm_l2.cu", "warm_l2", ()))
        self.sink = dev.torch.zeros(1, dtype=dev.torch.int32, device="cuda")

    def launch(self, ranges: list[tuple[int, int]]) -> int:
        """The reads, queued on torch's current stream (no sync: a graph capture may hold them)."""
        from l2attr.measure.timer import torch_stream

        np = self.dev.np
        stream = torch_stream(self.dev.torch, self.dev.cupy)
        total = 0
        for ptr, n in ranges:
            first, count = sectors(ptr, n)
            blocks = int(max(1, min(1024, (count + 255) // 256)))
            self.kernel((blocks,), (256,), (np.uint64(first), np.int64(count), np.uint64(self.sink.data_ptr())),
                        stream=stream)
            total += n
        return total

    def __call__(self, ranges: list[tuple[int, int]]) -> int:
        total = self.launch(ranges)
        self.dev.sync()
        return total


def measure_edges(dev: Any, fn: Callable[..., Any], args: tuple, kwargs: dict, plans: list[EdgePlan],
                  repeats: int, reference: list[str]) -> pd.DataFrame:
    """Every arm of every planned edge, `repeats` times: step_edges rows. `reference`: the step's
    op names, which every measured step must repeat."""
    from l2attr.steps.measure.trace import Slots, edge_kernels, profiled

    torch = dev.torch
    slots = Slots()
    warm = Warmer(dev)
    warmed: dict[tuple[int, str, int], int] = {}
    def body() -> None:
        for r in range(repeats):
            for e, plan in enumerate(plans):
                for arm in rotate(ARMS, r + e):
                    dev.flush_l2()
                    fn(*args, **kwargs)          # the step before: L2 as the program leaves it
                    dev.sync()
                    got = [0]

                    def before(rec: OpRecord, ops: list[OpRecord], arm: L2Condition = arm, plan: EdgePlan = plan) -> bool:
                        if rec.index != plan.consumer or arm == L2Condition.NATURAL:
                            return False
                        dev.flush_l2()
                        if arm != L2Condition.COLD:
                            drop = plan.producer if arm == L2Condition.EDGE_COLD else None
                            got[0] = warm(warm_ranges(rec, ops, drop))
                        return True

                    rec = make_recorder(None, before=before, range_ops={plan.consumer})
                    with slots.range(torch, edge=e, arm=arm, repeat=r), rec.modules, rec:
                        fn(*args, **kwargs)
                    dev.sync()
                    if [o.op for o in rec.ops] != reference:
                        raise UserError(f"edge {plan.producer} -> {plan.consumer}: the step ran other ops than "
                                        "its first measured step (the step must be deterministic)")
                    warmed[(e, arm.value, r)] = got[0]
    trace = profiled(torch, body)
    return consumer_rows(edge_kernels(trace, slots), plans, warmed)
