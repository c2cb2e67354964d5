"""Edges of a step: which to measure, and what their measured selective eviction says.

Which: the producer -> consumer edges found from tensor identity (steps/analyse/answer.py `edges`),
producers inside the step only, ranked by the consumer saving their bytes carry (attributed),
then by bytes. What: step_edges.csv (steps/measure/edges.py) holds the consumer op's time in four arms;
per edge, medians with their 95 % intervals, and by the one rule (analysis/significance.py):

  saving    edge_cold - natural: what this producer's bytes in L2 are worth to the consumer;
  control   rewarmed against natural: `holds` when within noise (the re-warm reproduces the
            natural L2 for this consumer), else `fails`: the saving is then not judged, and the
            figure against the re-warmed state (edge_cold - rewarmed) is shown beside it.

The saving's interval is the conservative one of the rule (the far ends of the two intervals):
it excludes 0 exactly when the rule says the arms differ.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from l2attr.analysis.significance import Interval, clock_tick_us, compare
import json

from l2attr.vocab import L2Condition, Verdict, Judgement, EDGE_ARMS

OUTSIDE = -1   # producer index of bytes no op of the step wrote
EDGE_COLUMNS = ["producer", "consumer", "bytes", "attributed_saving_us"]   # op indices, bytes, µs


def views(ops: pd.DataFrame) -> set[int]:
    """Op indices of views: the `view` column where recorded, else the ops the cold arm did not
    flush before (it flushes before every op that is not a view)."""
    if not len(ops):
        return set()
    col = ops["view"] if "view" in ops.columns else ~ops["flushed_in_cold"].astype(str).str.lower().eq("true")
    flags = col.astype(str).str.lower().eq("true")
    return {int(i) for i, f in zip(ops["op_index"], flags) if f}


def candidates(edges: pd.DataFrame, ops: pd.DataFrame, kern: pd.DataFrame, n: int) -> pd.DataFrame:
    """The `n` edges to measure: producer inside the step, consumer with a kernel, top first."""
    if n <= 0 or edges.empty:
        return edges.iloc[0:0]
    launched = set(kern["op_index"].astype(int)) if len(kern) else set()
    e = edges[(edges["producer"] != OUTSIDE) & edges["consumer"].isin(launched) & (edges["bytes"] > 0)]
    e = e.assign(_rank=e["attributed_saving_us"].fillna(-math.inf))
    e = e.sort_values(["_rank", "bytes", "consumer"], ascending=[False, False, True]).drop(columns="_rank")
    return e.head(n).reset_index(drop=True)


def _word(j: Judgement) -> str:
    return j.value


def edge_results(raw: pd.DataFrame, ops: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per measured edge: arm medians and intervals, saving, control, judgements."""
    names = dict(zip(ops["op_index"].astype(int), ops["op"])) if ops is not None and len(ops) else {}
    rows = []
    tick = clock_tick_us(raw["consumer_us"]) if len(raw) else 0.0     # as per_kernel: one clock tick each side
    for e, g in raw.groupby("edge", sort=True):
        arm = {a: Interval.of(g.loc[g["arm"] == a.value, "consumer_us"].to_numpy(float)).widened(tick)
               for a in EDGE_ARMS}
        nat, cold, warm, edge = (arm[L2Condition.NATURAL], arm[L2Condition.COLD], arm[L2Condition.REWARMED],
                                 arm[L2Condition.EDGE_COLD])
        saving = compare(edge, nat)                  # faster: natural beats edge_cold, the edge saves
        vs_warm = compare(edge, warm)
        ctl = compare(nat, warm)
        control = (Verdict.NOT_MEASURED if ctl.judgement == Judgement.NOT_MEASURED else
                   Verdict.HOLDS if ctl.judgement == Judgement.WITHIN_NOISE else Verdict.FAILS)
        first = g.iloc[0]
        p, c = int(first["producer"]), int(first["consumer"])
        rows.append({
            "edge": int(e), "producer": p, "consumer": c, "producer_op": names.get(p, "?"),
            "consumer_op": names.get(c, "?"), "bytes": int(first["bytes"]),
            **{f"{a.value}_us": arm[a].median for a in EDGE_ARMS},
            **{f"{a.value}_lo": arm[a].lo for a in EDGE_ARMS},
            **{f"{a.value}_hi": arm[a].hi for a in EDGE_ARMS},
            "saving_us": edge.median - nat.median, "saving_lo": edge.lo - nat.hi, "saving_hi": edge.hi - nat.lo,
            "judgement": _word(saving.judgement) if control == Verdict.HOLDS else Judgement.NOT_MEASURED.value,
            "rule_judgement": _word(saving.judgement),
            "vs_rewarmed_us": edge.median - warm.median, "vs_rewarmed_judgement": _word(vs_warm.judgement),
            "all_cold_us": cold.median - nat.median,
            "control": control.value, "control_pct": 100 * (warm.median / nat.median - 1) if nat.valid else math.nan,
            "warmed_mb": float(g.loc[g["arm"] == L2Condition.REWARMED.value, "warmed_bytes"].median()) / 1e6
            if (g["arm"] == L2Condition.REWARMED.value).any() else math.nan,
        })
    return pd.DataFrame(rows)


def describe(r: Any) -> str:
    """One line of an edge: producer -> consumer, bytes, saving with interval, control."""
    head = (f"{r['producer_op']}#{r['producer']} -> {r['consumer_op']}#{r['consumer']} "
            f"({r['bytes'] / 1e6:.2f} MB): edge_cold - natural {r['saving_us']:+.2f} µs "
            f"[{r['saving_lo']:+.2f}, {r['saving_hi']:+.2f}]")
    if r["control"] == Verdict.HOLDS.value:
        word = {Judgement.FASTER.value: "the edge saves", Judgement.SLOWER.value: "the edge costs"}.get(
            r["judgement"], Judgement.WITHIN_NOISE.value)
        return f"{head}, {word} (control holds: rewarmed {r['control_pct']:+.1f} % of natural, within noise)"
    return (f"{head}, not judged: control {r['control']} (rewarmed {r['control_pct']:+.1f} % of natural); "
            f"against rewarmed {r['vs_rewarmed_us']:+.2f} µs, {r['vs_rewarmed_judgement']}")


def edges(ops: pd.DataFrame, kern: pd.DataFrame) -> pd.DataFrame:
    """Producer -> consumer edges by bytes, with each consumer's first-kernel saving split by bytes.
    Views are neither: they launch nothing and write nothing (their output aliases their input). An
    op whose schema may alias but that launched a kernel (`contiguous` of a strided tensor copies)
    wrote its output, so it is no view here."""
    writers: list[tuple[int, int, int]] = []        # (start, end, op) of every output so far
    saving = {int(r.op_index): float(r.saving_us) for r in kern.itertuples() if r.met_flush} if len(kern) else {}
    skip = views(ops) - (set(kern["op_index"].astype(int)) if len(kern) else set())
    rows = []
    for r in ops.sort_values("op_index").itertuples():
        if int(r.op_index) in skip:
            continue
        ins = [tuple(x) for x in json.loads(r.inputs or "[]")]
        parts: dict[int, int] = {}
        for ptr, n in ins:
            left = n
            for s, e, p in reversed(writers):
                overlap = min(e, ptr + n) - max(s, ptr)
                if overlap > 0:
                    parts[p] = parts.get(p, 0) + overlap
                    left -= overlap
                    break
            if left > 0:
                parts[OUTSIDE] = parts.get(OUTSIDE, 0) + left
        total = sum(parts.values())
        for p, nbytes in parts.items():
            rows.append({"producer": p, "consumer": int(r.op_index), "bytes": nbytes,
                         "attributed_saving_us": saving.get(int(r.op_index), math.nan) * nbytes / total if total else math.nan})
        for ptr, n in (tuple(x) for x in json.loads(r.outputs or "[]")):
            writers.append((ptr, ptr + n, int(r.op_index)))
    return pd.DataFrame(rows, columns=EDGE_COLUMNS)
