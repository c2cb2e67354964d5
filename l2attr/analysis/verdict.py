"""The verdict: per profile, the artifact's L2P number next to the numbers that charge the pin.

Reads the ladder, the amortisation table, the L2 share and the pin's L2 effect, and puts one row
per profile side by side, plus one plain sentence per profile for the top of the report.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from l2attr.analysis.common import NA, is_missing, join_sources, ordered_profiles, ratio
from l2attr.analysis.ladder import ladder_row
from l2attr.vocab import Order, RungId

PIN_RUNG = RungId.L2P_OPTMT.value
HONEST_COMPARAND = RungId.OPTMT.value


def verdict_table(ladder: pd.DataFrame, amortisation: pd.DataFrame, share: pd.DataFrame,
                  pin_effect: pd.DataFrame, state: str, title: str = "",
                  measured: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per profile for the chosen l2_state; `title` names the series in the headline.

    `measured`: the amortisation sweep's break-even rows of this series (family and pin), when a
    sweep was read with the runs: the calls per pin measured, set beside the formula's."""
    profiles = ordered_profiles(
        list(ladder.loc[ladder["l2_state"] == state, "profile"]) if not ladder.empty else []
    ) or ordered_profiles(pin_effect["profile"] if not pin_effect.empty else [])
    rows = [_verdict_row(ladder, amortisation, share, pin_effect, state, p) for p in profiles]
    for row in rows:
        _add_measured(row, measured)
        row["headline"] = headline(row, title)
    return pd.DataFrame(rows)


MEASURED_ORDERS = (Order.INTERLEAVED.value, Order.BACK_TO_BACK.value)


def _add_measured(row: dict[str, Any], measured: pd.DataFrame | None) -> None:
    """`measured_<order>`: the sweep's kernel-charged break-even k (inf: none within `measured_max_k`)."""
    for order in MEASURED_ORDERS:
        row[f"measured_{order}"] = NA
    row["measured_max_k"], row["measured_run"] = NA, ""
    if measured is None or measured.empty:
        return
    mine = measured[measured["profile"] == row["profile"]]
    for rec in mine.to_dict("records"):
        if rec["order"] in MEASURED_ORDERS:
            row[f"measured_{rec['order']}"] = float(rec["measured_kernel"])
            row["measured_max_k"] = int(rec["max_k"])
            row["measured_run"] = str(rec.get("run", ""))


def _pick(df: pd.DataFrame, **match: Any) -> pd.Series | None:
    if df.empty:
        return None
    mask = pd.Series(True, index=df.index)
    for k, v in match.items():
        mask &= df[k] == v
    hit = df[mask]
    return None if hit.empty else hit.iloc[0]


def _verdict_row(ladder: pd.DataFrame, amortisation: pd.DataFrame, share: pd.DataFrame,
                 pin_effect: pd.DataFrame, state: str, profile: str) -> dict[str, Any]:
    missing: dict[str, str] = {}
    layer_a = "layer A not measured (no ladder run)"
    l2p = ladder_row(ladder, state, profile, PIN_RUNG) if not ladder.empty else None
    ref = ladder_row(ladder, state, profile, HONEST_COMPARAND) if not ladder.empty else None

    def from_row(row: pd.Series | None, field: str, absent: str) -> float:
        if row is None:
            missing[field] = absent
            return NA
        value = row[field]
        if is_missing(value):
            missing[field] = row["missing"].get(field, "not measured")
        return value

    absent_l2p = layer_a if ladder.empty else f"{PIN_RUNG} not measured for {profile}/{state}"
    out: dict[str, Any] = {"profile": profile, "l2_state": state}
    out["speedup_consumer"] = from_row(l2p, "speedup_consumer", absent_l2p)
    out["speedup_artifact"] = from_row(l2p, "speedup_artifact", absent_l2p)
    out["speedup_kernels"] = from_row(l2p, "speedup_kernels", absent_l2p)
    out["speedup_wall"] = from_row(l2p, "speedup_wall", absent_l2p)

    # What the pin adds over OptMT (L2P+OptMT = OptMT + pin), consumer-only and charged.
    t_ref = NA if ref is None else ref["consumer_us"]
    out["pin_speedup_consumer"] = ratio(t_ref, NA if l2p is None else l2p["consumer_us"])
    out["pin_speedup_charged"] = ratio(t_ref, NA if l2p is None else l2p["kernels_us"])
    for f in ("pin_speedup_consumer", "pin_speedup_charged"):
        if is_missing(out[f]):
            missing[f] = (layer_a if ladder.empty else
                          f"{HONEST_COMPARAND} not measured for {profile}/{state}" if is_missing(t_ref) else absent_l2p)

    sh = _pick(share, l2_state=state, profile=profile)
    for f in ("share_consumer_pct", "share_charged_pct", "t_step_us"):
        out[f] = from_row(sh, f, layer_a if ladder.empty else f"no OptMT/L2P+OptMT pair for {profile}/{state}")

    am = _pick(amortisation, l2_state=state, profile=profile, rung=PIN_RUNG, comparand=HONEST_COMPARAND)
    out["break_even_calls"] = from_row(am, "break_even_calls",
                                       layer_a if ladder.empty else f"no OptMT/L2P+OptMT pair for {profile}/{state}")
    out["break_even"] = "n/a" if am is None else am["break_even"]

    pe = _pick(pin_effect, profile=profile, rung=PIN_RUNG)
    out["hit_gain_pp"] = from_row(pe, "hit_gain_pp", "this family was not profiled (layer B)" if pin_effect.empty
                                  else f"{PIN_RUNG}/{profile} not profiled")
    out["hit_rate_pct"] = NA if pe is None else pe["hit_rate_pct"]
    out["comparand_hit_rate_pct"] = NA if pe is None else pe["comparand_hit_rate_pct"]
    out["source"] = join_sources(r["source"] for r in (l2p, ref, pe) if r is not None)
    out["missing"] = missing
    return out


def _calls(k: float, max_k: Any) -> str:
    return f"none within {max_k} calls" if math.isinf(k) else f"{int(k)} calls"


def measured_text(row: dict[str, Any]) -> str:
    """The amortisation sweep's break-even, kernel-charged: '' when no sweep measured this profile."""
    inter, b2b = row.get("measured_interleaved", NA), row.get("measured_back_to_back", NA)
    if is_missing(inter) and is_missing(b2b):
        return ""
    said = []
    if not is_missing(inter):
        said.append(f"{_calls(inter, row['measured_max_k'])} with the other tables in between")
    if not is_missing(b2b):
        said.append(f"{_calls(b2b, row['measured_max_k'])} back to back")
    return "measured break-even (l2attr sweep amortisation): " + ", ".join(said)


def _x(value: float) -> str:
    return f"{value:.2f}×"


def headline(row: dict[str, Any], title: str = "") -> str:
    """One plain sentence per profile, the pin-charged verdict first; only states what was measured."""
    p = row["profile"]
    who = f"{p} ({title})" if title else p
    parts = []
    charged = [f"{_x(row[f])} {what}" for f, what in (("speedup_kernels", "with the pin kernel charged"),
                                                     ("speedup_wall", "for the whole call on the host clock"))
               if not is_missing(row.get(f))]
    free = [f"{_x(row[f])} {what}" for f, what in (("speedup_artifact", "as the artifact timed it (its own timer)"),
                                                  ("speedup_consumer", "on consumer kernel time"))
            if not is_missing(row.get(f))]
    if charged or free:
        text = "L2P+OptMT vs baseline: " + ", ".join(charged)
        if free:
            text += ("; pin not charged: " if charged else "pin not charged: ") + ", ".join(free)
        parts.append(text.replace(": ;", ":"))
    if not is_missing(row["pin_speedup_consumer"]) and not is_missing(row["pin_speedup_charged"]):
        parts.append(f"the pin alone (vs OptMT) is worth {_x(row['pin_speedup_consumer'])}, "
                     f"{_x(row['pin_speedup_charged'])} charged")
    if row.get("break_even") not in (None, "n/a"):
        parts.append("by the k = 1 formula it never pays for itself" if row["break_even"] == "never"
                     else f"by the k = 1 formula it pays for itself once one pin serves "
                          f"{row['break_even']}+ calls")
    measured = measured_text(row)
    if measured:
        parts.append(measured)
    if not is_missing(row["hit_gain_pp"]):
        parts.append(f"consumer L2 hit rate {row['hit_gain_pp']:+.1f} points")
    if not parts:
        return f"{who}: not enough measured to say anything."
    return f"{who}: " + "; ".join(parts) + "."
