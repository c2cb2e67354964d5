"""Measured amortisation: how many consumer calls one pin really serves before it pays, against
the formula's extrapolation from k = 1 (analysis/amortisation.py).

Per (family, profile, order, k): the OptMT arm's charged time per consumer call (its consumer
alone) over the pinning arm's (pin + its k consumer calls, per call) is the kernel-charged
speedup; the same ratio of the host clock's whole calls (launch + sync included) is the
wall-charged one. The measured break-even k is the smallest measured k whose speedup is >= 1
(inf: none of them). The formula takes T_ref, T_pin and T_cons from this sweep's own k = 1
interleaved point (the artifact's loop) and predicts k* = T_pin / (T_ref - T_cons).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from l2attr.analysis.common import ratio

from l2attr.analysis.amortisation import amortised_speedup, break_even_calls
from l2attr.vocab import Arm, Order, SweepQuantity as Q, Timer

CURVE_COLUMNS = ["family", "pin", "profile", "point", "order", "k", "ref_us", "pinned_us", "speedup_kernel",
                 "ref_wall_us", "pinned_wall_us", "speedup_wall", "consumer_first_us", "consumer_rest_us",
                 "pin_us", "formula_speedup"]


def _lookup(points: pd.DataFrame) -> dict[tuple[str, ...], float]:
    return {(r.family, r.profile, r.point, r.arm, r.quantity, r.timer): float(r.median_us)
            for r in points.itertuples()}


def formula_inputs(points: pd.DataFrame) -> dict[tuple[str, str], tuple[float, float, float]]:
    """(family, profile) -> (T_ref, T_pin, T_cons) from the k = 1 point (interleaved, else back to
    back: at k = 1 both are the artifact's loop)."""
    v = _lookup(points)
    out = {}
    for fam, prof in sorted({(r.family, r.profile) for r in points.itertuples()}):
        t = (math.nan,) * 3
        for order in (Order.INTERLEAVED, Order.BACK_TO_BACK):
            point = f"{order.value}:k1"
            t = (v.get((fam, prof, point, Arm.OPTMT.value, Q.CONSUMER, Timer.KERNEL), math.nan),
                 v.get((fam, prof, point, Arm.PIN.value, Q.PIN, Timer.KERNEL), math.nan),
                 v.get((fam, prof, point, Arm.PIN.value, Q.CONSUMER, Timer.KERNEL), math.nan))
            if not any(math.isnan(x) for x in t):
                break
        out[(fam, prof)] = t
    return out


def curves(points: pd.DataFrame) -> pd.DataFrame:
    """Speedup of L2P+OptMT over OptMT per measured (family, profile, order, k)."""
    if points.empty:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    v = _lookup(points)
    formula = formula_inputs(points)
    pins = dict(zip(points["family"], points["pin"]))
    rows = []
    keys = sorted({(r.family, r.profile, r.order, int(r.k), r.point) for r in points.itertuples()},
                  key=lambda x: (x[0], x[1], x[2], x[3]))
    for fam, prof, order, k, point in keys:
        g = lambda arm, q, t=Timer.KERNEL: v.get((fam, prof, point, arm, q, t), math.nan)  # noqa: E731
        ref, pinned = g(Arm.OPTMT.value, Q.CHARGED), g(Arm.PIN.value, Q.CHARGED)
        ref_w, pinned_w = g(Arm.OPTMT.value, Q.CALL, Timer.WALL), g(Arm.PIN.value, Q.CALL, Timer.WALL)
        t_ref, t_pin, t_cons = formula.get((fam, prof), (math.nan,) * 3)
        rows.append({"family": fam, "pin": pins.get(fam, ""), "profile": prof, "point": point, "order": order, "k": k,
                     "ref_us": ref, "pinned_us": pinned, "speedup_kernel": ratio(ref, pinned),
                     "ref_wall_us": ref_w, "pinned_wall_us": pinned_w,
                     "speedup_wall": ratio(ref_w, pinned_w),
                     "consumer_first_us": g(Arm.PIN.value, Q.CONSUMER_FIRST),
                     "consumer_rest_us": g(Arm.PIN.value, Q.CONSUMER_REST), "pin_us": g(Arm.PIN.value, Q.PIN),
                     "formula_speedup": amortised_speedup(t_ref, t_pin, t_cons, k)
                     if not any(math.isnan(x) for x in (t_ref, t_pin, t_cons)) else math.nan})
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def measured_break_even(ks: list[int], speedups: list[float]) -> float:
    """Smallest measured k with speedup >= 1 (ks ascending); inf when none reaches 1; nan when no data."""
    pairs = [(k, s) for k, s in zip(ks, speedups) if not math.isnan(s)]
    if not pairs:
        return math.nan
    for k, s in sorted(pairs):
        if s >= 1.0:
            return float(k)
    return math.inf


def break_even(curve: pd.DataFrame) -> pd.DataFrame:
    """Per (family, profile, order): measured break-even k (kernel- and wall-charged), the largest
    measured k, and the formula's prediction from the k = 1 point."""
    rows: list[dict[str, Any]] = []
    if curve.empty:
        return pd.DataFrame(rows)
    for (fam, prof, order), g in curve.groupby(["family", "profile", "order"], sort=False):
        g = g.sort_values("k")
        ks = [int(k) for k in g["k"]]
        rows.append({"family": fam, "pin": g["pin"].iloc[0], "profile": prof, "order": order,
                     "measured_kernel": measured_break_even(ks, list(g["speedup_kernel"])),
                     "measured_wall": measured_break_even(ks, list(g["speedup_wall"])),
                     "max_k": max(ks), "speedup_at_max_k": float(g["speedup_kernel"].iloc[-1])})
    out = pd.DataFrame(rows)
    return out


def with_formula(table: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """Add the formula's break-even (analysis/amortisation.break_even_calls on the k = 1 point)."""
    if table.empty:
        return table
    inputs = formula_inputs(points)
    table = table.copy()
    predicted = []
    for r in table.itertuples():
        t_ref, t_pin, t_cons = inputs.get((r.family, r.profile), (math.nan,) * 3)
        predicted.append(math.nan if any(math.isnan(x) for x in (t_ref, t_pin, t_cons))
                         else break_even_calls(t_ref, t_pin, t_cons))
    table["formula"] = predicted
    return table


def k_text(k: float, max_k: int | None = None) -> str:
    if isinstance(k, float) and math.isnan(k):
        return "n/a"
    if math.isinf(k):
        return f"> {max_k}" if max_k else "never"
    return f"{int(k)}"


def reading(table: pd.DataFrame) -> str:
    """One line: the measured break-even next to the formula's, per profile (interleaved, the
    artifact's loop, when measured; else back to back)."""
    if table.empty:
        return "No amortisation points measured."
    order = Order.INTERLEAVED.value if (table["order"] == Order.INTERLEAVED.value).any() else Order.BACK_TO_BACK.value
    rows = table[table["order"] == order]
    parts = [f"{r.family} {r.profile}: {k_text(r.measured_kernel, r.max_k)} measured vs {k_text(r.formula)} "
             f"by the formula" for r in rows.itertuples()]
    return (f"Calls per pin to break even against OptMT ({order.replace('_', ' ')}, kernel-charged): "
            + "; ".join(parts) + ".")
