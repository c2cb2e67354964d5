"""The verdict: per profile, the artifact's L2P number next to the numbers that charge the pin.

Reads the ladder, the amortisation table, the L2 share and the pin's L2 effect, and puts one row
per profile side by side, plus one plain sentence per profile for the top of the report. Every
comparison carries the word of the one significance rule (`judgement_*`: faster, slower or within
noise; analysis/noise.py picks the noise: within-process repeats, or the cross-process spread
where the two cells come from different runs), and the headline's words come from those only.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from l2attr.analysis.common import NA, first_row, is_missing, join_sources, ordered_profiles, ratio, rung_label
from l2attr.ladders.analyse.ladder import ladder_row
from l2attr.analysis.noise import NONE, CrossProcess, Verdict, judge
from l2attr.analysis.significance import Interval
from l2attr.vocab import Judgement, Order, Quantity, RungId, Timer

PIN_RUNG = RungId.L2P_OPTMT.value
HONEST_COMPARAND = RungId.OPTMT.value
BASELINE = RungId.BASELINE.value


def verdict_table(ladder: pd.DataFrame, amortisation: pd.DataFrame, share: pd.DataFrame,
                  pin_effect: pd.DataFrame, state: str, title: str = "",
                  measured: pd.DataFrame | None = None, xp: CrossProcess = NONE, family: str = "") -> pd.DataFrame:
    """One row per profile for the chosen l2_state; `title` names the series in the headline,
    `family` the words its rungs are said in.

    `measured`: the amortisation sweep's break-even rows of this series (family and pin), when a
    sweep was read with the runs: the calls per pin measured, set beside the formula's."""
    profiles = ordered_profiles(
        list(ladder.loc[ladder["l2_state"] == state, "profile"]) if not ladder.empty else []
    ) or ordered_profiles(pin_effect["profile"] if not pin_effect.empty else [])
    rows = [_verdict_row(ladder, amortisation, share, pin_effect, state, p, xp) for p in profiles]
    for row in rows:
        _add_measured(row, measured)
        row["headline"] = headline(row, title, family)
    return pd.DataFrame(rows)


MEASURED_ORDERS = (Order.INTERLEAVED.value, Order.BACK_TO_BACK.value)


def _add_measured(row: dict[str, Any], measured: pd.DataFrame | None) -> None:
    """`measured_<order>`: the smallest k the sweep found the pinned arm faster by the rule, kernel-
    charged (inf: none within `measured_max_k`); `measured_even_<order>`: where it first stopped
    being slower (within noise), NA when the sweep has no such column."""
    for order in MEASURED_ORDERS:
        row[f"measured_{order}"] = row[f"measured_even_{order}"] = NA
    row["measured_max_k"], row["measured_run"] = NA, ""
    if measured is None or measured.empty:
        return
    mine = measured[measured["profile"] == row["profile"]]
    for rec in mine.to_dict("records"):
        if rec["order"] in MEASURED_ORDERS:
            row[f"measured_{rec['order']}"] = float(rec["measured_kernel"])
            even = rec.get("even_kernel", NA)
            row[f"measured_even_{rec['order']}"] = NA if is_missing(even) else float(even)
            row["measured_max_k"] = int(rec["max_k"])
            row["measured_run"] = str(rec.get("run", ""))


def _pick(df: pd.DataFrame, **match: Any) -> pd.Series | None:
    return None if df.empty else first_row(df, **match)


# ladder quantity -> its interval columns, run column, and the cells quantity and timer it is judged as
INTERVALS = {
    Quantity.CONSUMER.value: ("consumer_us", "consumer_ci_lo_us", "consumer_ci_hi_us", "consumer_run",
                              Quantity.CONSUMER.value, Timer.KERNEL.value),
    Quantity.KERNELS.value: ("kernels_us", "kernels_ci_lo_us", "kernels_ci_hi_us", "kernels_run",
                             Quantity.KERNELS.value, Timer.KERNEL.value),
    Timer.WALL.value: ("wall_us", "wall_ci_lo_us", "wall_ci_hi_us", "wall_run", Quantity.CALL.value, Timer.WALL.value),
    Timer.ARTIFACT.value: ("artifact_us", "artifact_ci_lo_us", "artifact_ci_hi_us", "artifact_run",
                           Quantity.CONSUMER.value, Timer.ARTIFACT.value),
}
# (verdict field, quantity judged, with the rung's named host charge): L2P+OptMT against the baseline
BASE_JUDGED = (("judgement_consumer", Quantity.CONSUMER.value, False),
               ("judgement_kernels", Quantity.KERNELS.value, False), ("judgement_wall", Timer.WALL.value, False),
               ("judgement_host", Quantity.KERNELS.value, True), ("judgement_artifact", Timer.ARTIFACT.value, False))
# ... and against OptMT: what the pin alone is worth
PIN_JUDGED = (("pin_judgement_consumer", Quantity.CONSUMER.value, False),
              ("pin_judgement_charged", Quantity.KERNELS.value, False),
              ("pin_judgement_host", Quantity.KERNELS.value, True))


def _interval(row: pd.Series | None, what: str, host: bool = False) -> Interval:
    """A ladder row's median and 95 % interval of one quantity; with `host`, its kernels plus its
    named host charge (intervals added end to end: conservative)."""
    if row is None:
        return Interval(NA, NA, NA)
    med, lo, hi = (row.get(f, NA) for f in INTERVALS[what][:3])
    if host:
        ch = [row.get(f, NA) for f in ("host_charge_us", "host_charge_lo_us", "host_charge_hi_us")]
        if any(is_missing(x) for x in ch):
            return Interval(NA, NA, NA)
        med, lo, hi = med + ch[0], lo + ch[1], hi + ch[2]
    return Interval(med, lo, hi)


def _judge(base: pd.Series | None, new: pd.Series | None, what: str, xp: CrossProcess,
           host: bool = False) -> Verdict:
    _, _, _, run, quantity, timer = INTERVALS[what]
    return judge(_interval(base, what), _interval(new, what, host), None if base is None else base.get(run),
                 None if new is None else new.get(run), quantity, timer, xp)


def _verdict_row(ladder: pd.DataFrame, amortisation: pd.DataFrame, share: pd.DataFrame,
                 pin_effect: pd.DataFrame, state: str, profile: str, xp: CrossProcess = NONE) -> dict[str, Any]:
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
    out["speedup_host"] = from_row(l2p, "speedup_host", absent_l2p)
    base = ladder_row(ladder, state, profile, BASELINE) if not ladder.empty else None
    for field, what, host in BASE_JUDGED:
        v = _judge(base, l2p, what, xp, host)
        out[field], out[field.replace("judgement", "noise")] = v.word, v.noise

    # What the pin adds over OptMT (L2P+OptMT = OptMT + pin), consumer-only and charged.
    t_ref = NA if ref is None else ref["consumer_us"]
    out["pin_speedup_consumer"] = ratio(t_ref, NA if l2p is None else l2p["consumer_us"])
    out["pin_speedup_charged"] = ratio(t_ref, NA if l2p is None else l2p["kernels_us"])
    host = NA if l2p is None else l2p.get("host_charge_us", NA)
    out["pin_host_us"], out["pin_step_us"] = host, NA if l2p is None else l2p.get("pin_step_us", NA)
    out["pin_speedup_host"] = ratio(t_ref, NA if l2p is None or is_missing(host) else l2p["kernels_us"] + host)
    if is_missing(host) and l2p is not None:
        missing["pin_host_us"] = missing["pin_speedup_host"] = l2p["missing"].get("host_charge_us", "not measured")
    for field, what, host_on in PIN_JUDGED:
        v = _judge(ref, l2p, what, xp, host_on)
        out[field], out[field.replace("judgement", "noise")] = v.word, v.noise
        out[field.replace("judgement", "cross_process")] = v.cross
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
    out["break_even_calls_wall"] = NA if am is None else am.get("break_even_calls_wall", NA)
    out["break_even_wall"] = "n/a" if am is None else am.get("break_even_wall", "n/a")
    out["break_even_point"] = NA if am is None else am["break_even_point"]
    out["break_even_point_wall"] = NA if am is None else am.get("break_even_point_wall", NA)
    if am is not None and is_missing(out["break_even_calls_wall"]):
        missing["break_even_calls_wall"] = am["missing"].get("break_even_calls_wall", "not measured")

    pe = _pick(pin_effect, profile=profile, rung=PIN_RUNG)
    out["hit_gain_pp"] = from_row(pe, "hit_gain_pp", "this family was not profiled (layer B)" if pin_effect.empty
                                  else f"{PIN_RUNG}/{profile} not profiled")
    out["hit_rate_pct"] = NA if pe is None else pe["hit_rate_pct"]
    out["comparand_hit_rate_pct"] = NA if pe is None else pe["comparand_hit_rate_pct"]
    out["source"] = join_sources(r["source"] for r in (l2p, ref, pe) if r is not None)
    out["missing"] = missing
    return out


def _calls(k: float, max_k: Any) -> str:
    return f"none within {max_k} calls" if math.isinf(k) else f"from {int(k)} calls"


def _order_said(row: dict[str, Any], order: str, where: str) -> str:
    """'from 8 calls back to back (within noise from 4)': the rule's first faster k, and where the
    pinned arm first stopped being slower when that is earlier."""
    k, even = row[f"measured_{order}"], row.get(f"measured_even_{order}", NA)
    said = f"{_calls(k, row['measured_max_k'])} {where}"
    if not is_missing(even) and not math.isinf(even) and (math.isinf(k) or even < k):
        said += f" (within noise from {int(even)})"
    return said


def measured_text(row: dict[str, Any]) -> str:
    """The amortisation sweep's kernel-charged reading: the smallest k at which the pinned arm was
    faster by the significance rule, per order; '' when no sweep measured this profile."""
    inter, b2b = row.get("measured_interleaved", NA), row.get("measured_back_to_back", NA)
    if is_missing(inter) and is_missing(b2b):
        return ""
    said = []
    if not is_missing(inter):
        said.append(_order_said(row, Order.INTERLEAVED.value, "with the other tables in between"))
    if not is_missing(b2b):
        said.append(_order_said(row, Order.BACK_TO_BACK.value, "back to back"))
    return "faster by the rule, kernel-charged (l2attr sweep amortisation): " + ", ".join(said)


def _x(value: float) -> str:
    return f"{value:.2f}×"


def _worded(row: dict[str, Any], field: str, judgement: str, what: str = "") -> str:
    """'0.89× with the pin kernel charged (slower)': the figure and the rule's word."""
    word = row.get(judgement)
    said = f" ({word})" if word and word != Judgement.NOT_MEASURED.value else ""
    return _x(row[field]) + (f" {what}" if what else "") + said


def break_even_said(row: dict[str, Any]) -> str:
    """Kernel- and wall-charged break-even side by side, in the rule's words ('' when not computed)."""
    kernel, wall = row.get("break_even"), row.get("break_even_wall")
    if kernel in (None, "n/a"):
        return ""
    if kernel == Judgement.WITHIN_NOISE.value:
        return "by the k = 1 formula no break-even: the pin's consumer saving is within noise"
    if kernel == "never":
        return "by the k = 1 formula it never pays for itself (the pinned consumer is slower beyond noise)"
    text = f"by the k = 1 formula one pin must serve {kernel}+ calls to pay for itself with its kernel charged"
    if wall not in (None, "n/a"):
        host = row.get("pin_host_us")
        charge = f" ({host:.1f} µs of launch + sync per pin step)" if not is_missing(host) else ""
        text += f", {wall}+ with the pin step's host launch + sync charged{charge}"
    return text


def headline(row: dict[str, Any], title: str = "", family: str = "") -> str:
    """One plain sentence per profile, the pin-charged verdict first; only states what was measured,
    every word the significance rule's."""
    p = row["profile"]
    who = f"{p} ({title})" if title else p
    parts = []
    charged = [_worded(row, f, j, what) for f, j, what in (
        ("speedup_kernels", "judgement_kernels", "with the pin kernel charged"),
        ("speedup_host", "judgement_host", "with the pin step's host launch + sync charged too"),
        ("speedup_wall", "judgement_wall", "for the whole call on the host clock"))
        if not is_missing(row.get(f))]
    free = [_worded(row, "speedup_artifact", "judgement_artifact", "as the artifact timed it")] \
        if not is_missing(row.get("speedup_artifact")) else []
    if not is_missing(row.get("speedup_consumer")):
        free.append(_worded(row, "speedup_consumer", "judgement_consumer", "on consumer kernel time"))
    if charged or free:
        text = f"{rung_label(PIN_RUNG, family)} vs baseline: " + ", ".join(charged)
        if free:
            text += ("; pin not charged: " if charged else "pin not charged: ") + ", ".join(free)
        parts.append(text.replace(": ;", ":"))
    if not is_missing(row["pin_speedup_consumer"]) and not is_missing(row["pin_speedup_charged"]):
        said = (f"the pin alone (vs {rung_label(HONEST_COMPARAND, family)}) is worth "
                f"{_worded(row, 'pin_speedup_consumer', 'pin_judgement_consumer')}, "
                f"{_worded(row, 'pin_speedup_charged', 'pin_judgement_charged', 'with its kernel charged')}")
        if row.get("pin_cross_process_charged"):
            said += f" (two runs: judged against {row.get('pin_noise_charged')})"
        parts.append(said)
    be = break_even_said(row)
    if be:
        parts.append(be)
    measured = measured_text(row)
    if measured:
        parts.append(measured)
    if not is_missing(row["hit_gain_pp"]):
        parts.append(f"consumer L2 hit rate {row['hit_gain_pp']:+.1f} points")
    if not parts:
        return f"{who}: not enough measured to say anything."
    return f"{who}: " + "; ".join(parts) + "."
