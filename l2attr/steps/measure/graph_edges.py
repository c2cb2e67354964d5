"""Kernel-level edges of a captured step, measured inside graph replays.

The edges come from the kernel nodes' pointer arguments (steps/measure/pointers.py). Each edge i -> j is
measured as the per-op method measures an op-level edge (steps/measure/edges.py), with the consumer kernel
j of the step's graph in place of a consumer op. Four arms, each a graph: the natural graph, and
three copies of it with one child-graph node in front of kernel j alone (steps/measure/surgery.py):

  natural    the natural graph;
  cold       a clean flush before j (every input of j cold);
  rewarmed   a clean flush, then every block of j that an earlier kernel touched read back (oldest
             last touch first, at most one L2's worth, the most recent kept): the control;
  edge_cold  the same read back without the blocks whose latest toucher is i.

Every arm's replay follows one untraced natural replay (L2 as the step leaves the next), the arms
of one repeat rotate, and kernel j's CUPTI duration is its time. The rows go to step_edges.csv with
kernel node indices as producer and consumer (the manifest's `edges_level` says so).
"""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from l2attr.errors import UserError
from l2attr.schema import STEP_EDGES
from l2attr.steps.measure.edges import ARMS, rotate
from l2attr.steps.measure.pointers import kernel_edges, warm_spans
from l2attr.vocab import L2Condition

LEVEL = ("kernel-level: producer and consumer are kernel nodes of the step's graph (step_kernels.csv `node`), "
         "joined by the allocator blocks their pointer arguments share")
METHOD = ("graph copies with one node in front of the consumer kernel: a clean flush (cold), then the consumer's "
          "blocks that earlier kernels touched read back (rewarmed; at most one L2, the most recent kept) or the "
          "same without the producer's blocks (edge_cold); control: rewarmed against natural")


def fit(spans: list[tuple[int, int]], cap: int) -> list[tuple[int, int]]:
    """The last `cap` bytes of the spans (oldest first): older bytes would be evicted by newer ones anyway."""
    out: list[tuple[int, int]] = []
    left = cap
    for start, size in reversed(spans):
        if left <= 0:
            break
        take = min(size, left)
        out.append((start + size - take, take))
        left -= take
    return out[::-1]


def rank(edges: pd.DataFrame, k: pd.DataFrame, n: int) -> pd.DataFrame:
    """The `n` edges to measure: the consumer's clean-cold saving (cold - natural medians) first, then bytes."""
    if n <= 0 or edges.empty:
        return edges.iloc[0:0]
    med = k.groupby(["node", "condition"])["duration_us"].median().unstack()
    nat, cold = L2Condition.NATURAL.value, L2Condition.COLD.value
    saving = (med[cold] - med[nat]) if nat in med and cold in med else pd.Series(dtype=float)
    e = edges[edges["bytes"] > 0].assign(_saving=edges["consumer"].map(saving).fillna(float("-inf")))
    e = e.sort_values(["_saving", "bytes", "consumer"], ascending=[False, False, True]).drop(columns="_saving")
    return e.head(n).reset_index(drop=True)


def rows_from(kern: pd.DataFrame, plans: pd.DataFrame, names: list[str], warmed: dict[tuple[int, str], int]) -> pd.DataFrame:
    """Traced edge replays (steps/trace.edge_kernels) -> step_edges rows: the consumer node's duration
    per (edge, arm, repeat), the node found by (name, occurrence) in its replay."""
    from l2attr.steps.measure.trace import occurrence_keys

    keys = occurrence_keys(names)
    out = []
    for (e, arm, r), g in kern.groupby(["edge", "arm", "repeat"], sort=True):
        p = plans.iloc[int(e)]
        c = int(p["consumer"])
        got = dict(zip(occurrence_keys(list(g.sort_values("start_us")["kernel"])), g.sort_values("start_us")["duration_us"]))
        if keys[c] not in got:
            raise UserError(f"edge {int(p['producer'])} -> {c}: the consumer kernel {names[c]} is missing from the "
                            f"{arm} replay {r} (does the graph launch other kernels each time?)")
        out.append({"edge": int(e), "producer": int(p["producer"]), "consumer": c, "bytes": int(p["bytes"]),
                    "arm": arm, "repeat": int(r), "consumer_us": float(got[keys[c]]), "n_kernels": 1,
                    "warmed_bytes": int(warmed.get((int(e), arm), 0))})
    return pd.DataFrame(out, columns=list(STEP_EDGES.columns))


def measure(dev: Any, raw: Any, s: Any, k: pd.DataFrame, flushes: Any, n: int, repeats: int) -> pd.DataFrame | None:
    """Discover, pick and measure the top `n` kernel edges; None when the step has none."""
    from l2attr.steps.measure import pointers
    from l2attr.steps.measure import surgery
    from l2attr.steps.measure.edges import Warmer
    from l2attr.steps.measure.trace import Slots, cold_names, edge_kernels, profiled

    torch = dev.torch
    touch, spans = pointers.read(torch, s.kernels)
    plans = rank(kernel_edges(touch, spans), k, n)
    if plans.empty:
        return None
    warm = Warmer(dev)
    clean = flushes.graph(L2Condition.COLD.value)
    keep: list[Any] = []
    arms: dict[tuple[int, str], Any] = {}
    warmed: dict[tuple[int, str], int] = {}
    for e, p in plans.iterrows():
        i, j = int(p["producer"]), int(p["consumer"])
        arms[(e, L2Condition.COLD.value)] = surgery.Exec(torch, surgery.with_flushes(raw, s, None, only={j: clean}))
        for arm, drop in ((L2Condition.REWARMED, None), (L2Condition.EDGE_COLD, i)):
            ranges = fit(warm_spans(j, touch, spans, drop), dev.l2_bytes)

            def before(ranges: list[tuple[int, int]] = ranges) -> None:
                flushes.launch(0)
                warm.launch(ranges)

            g = surgery.capture(torch, before, warmup=1)
            keep.append(g)
            warmed[(e, arm.value)] = sum(x for _, x in ranges)
            arms[(e, arm.value)] = surgery.Exec(torch, surgery.with_flushes(raw, s, None, only={j: surgery.raw_graph(g)}))
    natural = surgery.Exec(torch, raw)
    for a in [natural, *arms.values()]:
        a()
    torch.cuda.synchronize()
    slots = Slots()

    def body() -> None:
        for r in range(repeats):
            for e in range(len(plans)):
                for arm in rotate(ARMS, r + e):
                    natural()                      # the step before: L2 as the program leaves it
                    with slots.range(torch, edge=e, arm=arm, repeat=r):
                        (natural if arm == L2Condition.NATURAL else arms[(e, arm.value)])()
            torch.cuda.synchronize()
    trace = profiled(torch, body)
    for a in [natural, *arms.values()]:
        a.close()
    del keep
    return rows_from(edge_kernels(trace, slots), plans, cold_names(k), warmed)


def measured_edges(dev: Any, raw: Any, s: Any, k: pd.DataFrame, flushes: Any, n: int, repeats: int,
                  log: Callable[[str], None]) -> tuple[pd.DataFrame | None, str]:
    """The kernel-level edges, or (None, why) when the driver does not give the nodes' arguments or
    an edge cannot be measured (the caller then measures op-level edges, and says so)."""
    from l2attr.steps.measure.pointers import PointersUnavailable

    try:
        rows = measure(dev, raw, s, k, flushes, n, repeats)
    except (PointersUnavailable, UserError, RuntimeError) as exc:
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        log(f"step graph: kernel-level edges not measured: {why}")
        return None, why
    if rows is None:
        return None, "no two kernel nodes' pointer arguments share an allocator block"
    return rows, ""
