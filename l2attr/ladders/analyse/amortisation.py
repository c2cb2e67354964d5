"""Amortisation: how many consumer calls one pin must serve before pinning pays for itself.

If one pin kernel served k consumer calls (the hot rows staying resident in between), the
pinning rung's speedup over a comparand is

    speedup(k) = k * T_ref / (T_pin + k * T_cons)

It reaches 1 at k* = T_pin / (T_ref - T_cons); the break-even call count is the smallest whole
k >= k* (at least 1), or "never" when the consumer gains nothing (T_cons >= T_ref). As k grows
the speedup tends to T_ref / T_cons, the artifact's consumer-only number (the formula:
analysis/amortise.py, which the sweep's measured curve shares).

Two comparands for L2P+OptMT: the baseline (what the artifact compared against) and OptMT,
the honest one: L2P+OptMT is OptMT plus a pin, so the pin must pay for itself against OptMT.

Two charges for T_pin, side by side: *kernel-charged* (the pin kernel's GPU time) and
*wall-charged* (the pin step as a caller waits for it: launch + kernel + stream sync on the host
clock, ladders/analyse/charges.py), over the same consumer saving (kernel timer). The saving itself is
judged by the one significance rule (analysis/significance.py via analysis/noise.py: the
cross-process spread where the two consumers come from different runs): a break-even exists only
for a saving beyond noise; a consumer slower beyond noise "never" breaks even, and a saving
inside the noise is "within noise", never a call count.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import pandas as pd

from l2attr.analysis.amortise import amortised_speedup, break_even_calls, break_even_point
from l2attr.analysis.common import NA, is_missing, join_sources, rung_label, sort_rows
from l2attr.ladders.analyse.ladder import ladder_row
from l2attr.analysis.noise import NONE, CrossProcess, judge
from l2attr.analysis.significance import Interval
from l2attr.dlrm.declare import RUNG_BY_NAME
from l2attr.vocab import Judgement, Quantity, RungId, Timer

# (pinning rung, comparand, why this comparand: rungs as {rung id}, said in a family's words by `said`)
AMORTISATION_PAIRS: tuple[tuple[str, str, str], ...] = (
    (RungId.L2P_OPTMT.value, RungId.OPTMT.value,
     "honest comparand: the pin is all that {l2p_optmt} adds over {optmt}"),
    (RungId.L2P_OPTMT.value, RungId.BASELINE.value,
     "the artifact's comparand: credits {optmt}'s gain to the pin as well"),
    (RungId.COMBINED.value, RungId.RPF_OPTMT.value,
     "honest comparand: the pin is all that {combined} adds over {rpf_optmt}"),
)


def said(why: str, family: str = "") -> str:
    """A pair's reason with its rungs named as `family` names them (the fast family's OptMT is `fast`)."""
    return why.format(**{rung: rung_label(rung, family) for rung in RUNG_BY_NAME})

DEFAULT_KS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 25, 32, 40, 50, 64, 80, 100,
                               128, 160, 200, 256, 320, 400, 512, 640, 800, 1000)


def break_even_text(calls: float, gain: str = Judgement.FASTER.value) -> str:
    """'9', 'never' (the consumer is slower beyond noise) or 'within noise' (no saving beyond it)."""
    if is_missing(calls) or gain == Judgement.NOT_MEASURED.value:
        return "n/a"
    if gain == Judgement.WITHIN_NOISE.value:
        return Judgement.WITHIN_NOISE.value
    return "never" if math.isinf(calls) or gain == Judgement.SLOWER.value else f"{int(calls)}"


def judged_break_even(t_ref: float, t_pin: float, t_cons: float, gain: str) -> tuple[float, float]:
    """(k*, whole calls) for a saving the rule calls beyond noise; (inf, inf) otherwise."""
    if gain != Judgement.FASTER.value:
        return math.inf, math.inf
    return break_even_point(t_ref, t_pin, t_cons), break_even_calls(t_ref, t_pin, t_cons)


def amortisation_table(ladder: pd.DataFrame,
                       pairs: Sequence[tuple[str, str, str]] = AMORTISATION_PAIRS,
                       xp: CrossProcess = NONE, family: str = "") -> pd.DataFrame:
    """Break-even per (l2_state, profile, pinning rung, comparand), from the ladder's medians,
    kernel- and wall-charged; `xp`: the study's cross-process spread (analysis.noise); `family`:
    the words each pair's reason names its rungs in."""
    rows: list[dict[str, Any]] = []
    if ladder.empty:
        return pd.DataFrame(rows)
    for state, profile in sorted({(s, p) for s, p in zip(ladder["l2_state"], ladder["profile"])}):
        for rung, comparand, why_comparand in pairs:
            mine = ladder_row(ladder, state, profile, rung)
            ref = ladder_row(ladder, state, profile, comparand)
            if mine is None and ref is None:
                continue
            rows.append(_amortisation_row(state, profile, rung, comparand, said(why_comparand, family),
                                          mine, ref, xp))
    return sort_rows(pd.DataFrame(rows))


def _interval(row: pd.Series | None) -> Interval:
    if row is None:
        return Interval(NA, NA, NA)
    return Interval(row["consumer_us"], row["consumer_ci_lo_us"], row["consumer_ci_hi_us"])


def _get(row: pd.Series | None, field: str) -> Any:
    return NA if row is None or field not in row else row[field]


def _amortisation_row(state: str, profile: str, rung: str, comparand: str, why_comparand: str,
                      mine: pd.Series | None, ref: pd.Series | None, xp: CrossProcess = NONE) -> dict[str, Any]:
    t_ref = NA if ref is None else ref["consumer_us"]
    t_pin = NA if mine is None else mine["pin_us"]
    t_cons = NA if mine is None else mine["consumer_us"]
    t_step = _get(mine, "pin_step_us")
    missing: dict[str, str] = {}
    if is_missing(t_ref):
        missing["t_ref_us"] = f"{comparand} not measured for {profile}/{state}"
    if is_missing(t_cons):
        missing["t_cons_us"] = f"{rung} not measured for {profile}/{state}"
    if is_missing(t_pin):
        missing["t_pin_us"] = f"no pin cell for {rung}/{profile}/{state}"
    complete = not missing
    gain = judge(_interval(ref), _interval(mine), _get(ref, "consumer_run"), _get(mine, "consumer_run"),
                 Quantity.CONSUMER.value, Timer.KERNEL.value, xp)
    word = gain.word if complete else Judgement.NOT_MEASURED.value
    k_star, calls = judged_break_even(t_ref, t_pin, t_cons, word) if complete else (NA, NA)
    reason = "; ".join(missing.values())
    for f in ("break_even_point", "break_even_calls", "speedup_k1", "speedup_limit"):
        if not complete:
            missing[f] = reason
    wall_ok = complete and not is_missing(t_step)
    k_wall, calls_wall = judged_break_even(t_ref, t_step, t_cons, word) if wall_ok else (NA, NA)
    if not wall_ok:
        missing["break_even_calls_wall"] = missing["break_even_point_wall"] = (
            reason or (mine["missing"].get("pin_step_us") if mine is not None else "") or "pin step not measured")
    return {
        "l2_state": state, "profile": profile, "rung": rung, "comparand": comparand,
        "honest": comparand != RungId.BASELINE, "why_comparand": why_comparand,
        "t_ref_us": t_ref, "t_pin_us": t_pin, "t_cons_us": t_cons,
        "gain_per_call_us": (t_ref - t_cons) if complete else NA,
        "gain_judgement": word, "gain_noise": gain.noise, "gain_cross_process": gain.cross,
        "break_even_point": k_star, "break_even_calls": calls, "break_even": break_even_text(calls, word),
        "t_pin_step_us": t_step, "pin_host_us": _get(mine, "host_charge_us"),
        "break_even_point_wall": k_wall, "break_even_calls_wall": calls_wall,
        "break_even_wall": break_even_text(calls_wall, word) if wall_ok else "n/a",
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
