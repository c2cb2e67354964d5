"""Amortisation: how many consumer calls one pin must serve before pinning pays for itself.

If one pin kernel served k consumer calls (the hot rows staying resident in between), the
pinning rung's speedup over a comparand is

    speedup(k) = k * T_ref / (T_pin + k * T_cons)

It reaches 1 at k* = T_pin / (T_ref - T_cons); the break-even call count is the smallest whole
k >= k* (at least 1), or "never" when the consumer gains nothing (T_cons >= T_ref). As k grows
the speedup tends to T_ref / T_cons, the artifact's consumer-only number.

Two comparands for L2P+OptMT: the baseline (what the artifact compared against) and OptMT,
the honest one: L2P+OptMT is OptMT plus a pin, so the pin must pay for itself against OptMT.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import pandas as pd

from l2attr.analysis.common import NA, is_missing, join_sources, sort_rows
from l2attr.analysis.ladder import ladder_row
from l2attr.vocab import RungId

# (pinning rung, comparand, why this comparand)
AMORTISATION_PAIRS: tuple[tuple[str, str, str], ...] = (
    (RungId.L2P_OPTMT.value, RungId.OPTMT.value,
     "honest comparand: the pin is all that L2P+OptMT adds over OptMT"),
    (RungId.L2P_OPTMT.value, RungId.BASELINE.value,
     "the artifact's comparand: credits OptMT's gain to the pin as well"),
    (RungId.COMBINED.value, RungId.RPF_OPTMT.value,
     "honest comparand: the pin is all that RPF+L2P+OptMT adds over RPF+OptMT"),
)

DEFAULT_KS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 25, 32, 40, 50, 64, 80, 100,
                               128, 160, 200, 256, 320, 400, 512, 640, 800, 1000)


def amortised_speedup(t_ref: float, t_pin: float, t_cons: float, k: float) -> float:
    """Speedup over the comparand when one pin serves k consumer calls."""
    denominator = t_pin + k * t_cons
    return NA if denominator <= 0 else k * t_ref / denominator


def break_even_point(t_ref: float, t_pin: float, t_cons: float) -> float:
    """k* = T_pin / (T_ref - T_cons), the real-valued break-even; inf when the consumer gains nothing."""
    gain = t_ref - t_cons
    if gain <= 0:
        return math.inf
    return t_pin / gain


def break_even_calls(t_ref: float, t_pin: float, t_cons: float) -> float:
    """Smallest whole k >= 1 with speedup(k) >= 1; inf ("never") when the consumer gains nothing."""
    k_star = break_even_point(t_ref, t_pin, t_cons)
    if math.isinf(k_star):
        return math.inf
    k = max(1, math.ceil(k_star - 1e-9))
    # Guard against floating-point rounding at exact break-even points.
    while amortised_speedup(t_ref, t_pin, t_cons, k) < 1 - 1e-12:
        k += 1
    return float(k)


def break_even_text(calls: float) -> str:
    if is_missing(calls):
        return "n/a"
    return "never" if math.isinf(calls) else f"{int(calls)}"


def amortisation_table(ladder: pd.DataFrame,
                       pairs: Sequence[tuple[str, str, str]] = AMORTISATION_PAIRS) -> pd.DataFrame:
    """Break-even per (l2_state, profile, pinning rung, comparand), from the ladder's medians."""
    rows: list[dict[str, Any]] = []
    if ladder.empty:
        return pd.DataFrame(rows)
    for state, profile in sorted({(s, p) for s, p in zip(ladder["l2_state"], ladder["profile"])}):
        for rung, comparand, why_comparand in pairs:
            mine = ladder_row(ladder, state, profile, rung)
            ref = ladder_row(ladder, state, profile, comparand)
            if mine is None and ref is None:
                continue
            rows.append(_amortisation_row(state, profile, rung, comparand, why_comparand, mine, ref))
    return sort_rows(pd.DataFrame(rows))


def _amortisation_row(state: str, profile: str, rung: str, comparand: str, why_comparand: str,
                      mine: pd.Series | None, ref: pd.Series | None) -> dict[str, Any]:
    t_ref = NA if ref is None else ref["consumer_us"]
    t_pin = NA if mine is None else mine["pin_us"]
    t_cons = NA if mine is None else mine["consumer_us"]
    missing: dict[str, str] = {}
    if is_missing(t_ref):
        missing["t_ref_us"] = f"{comparand} not measured for {profile}/{state}"
    if is_missing(t_cons):
        missing["t_cons_us"] = f"{rung} not measured for {profile}/{state}"
    if is_missing(t_pin):
        missing["t_pin_us"] = f"no pin cell for {rung}/{profile}/{state}"
    complete = not missing
    k_star = break_even_point(t_ref, t_pin, t_cons) if complete else NA
    calls = break_even_calls(t_ref, t_pin, t_cons) if complete else NA
    reason = "; ".join(missing.values())
    for f in ("break_even_point", "break_even_calls", "speedup_k1", "speedup_limit"):
        if not complete:
            missing[f] = reason
    return {
        "l2_state": state, "profile": profile, "rung": rung, "comparand": comparand,
        "honest": comparand != RungId.BASELINE, "why_comparand": why_comparand,
        "t_ref_us": t_ref, "t_pin_us": t_pin, "t_cons_us": t_cons,
        "gain_per_call_us": (t_ref - t_cons) if complete else NA,
        "break_even_point": k_star, "break_even_calls": calls, "break_even": break_even_text(calls),
        "speedup_k1": amortised_speedup(t_ref, t_pin, t_cons, 1) if complete else NA,
        "speedup_limit": (t_ref / t_cons) if complete and t_cons > 0 else NA,
        "source": join_sources(r["source"] for r in (mine, ref) if r is not None),
        "missing": missing,
    }


def amortisation_curve(table: pd.DataFrame, ks: Sequence[int] = DEFAULT_KS) -> pd.DataFrame:
    """speedup(k) for every complete row of the amortisation table, long form (one row per k)."""
    rows = []
    for rec in table.to_dict("records") if not table.empty else []:
        if any(is_missing(rec[f]) for f in ("t_ref_us", "t_pin_us", "t_cons_us")):
            continue
        for k in ks:
            rows.append({"l2_state": rec["l2_state"], "profile": rec["profile"], "rung": rec["rung"],
                         "comparand": rec["comparand"], "k": int(k),
                         "speedup": amortised_speedup(rec["t_ref_us"], rec["t_pin_us"], rec["t_cons_us"], k)})
    return pd.DataFrame(rows, columns=["l2_state", "profile", "rung", "comparand", "k", "speedup"])
