"""Layer B: what the L2 did for the pin, judged from the layer-B cells (analysis.calls).

On top of the per-call table sit the study's judgements, DRAM first (on GH100 an L2 miss is not a DRAM
read, so bytes compare across profiles where hit rates do not: docs/facts.md#miss-is-not-dram):
- what pin + consumer read from DRAM per call against the unpinned consumer;
- the share of the consumer's L2 hits that landed on evict_last lines;
- the validity control (after pin / after pin + flush / after pin + persisting-L2 reset);
- the hotness gradient and the pin kernel's own traffic.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from l2attr.analysis.calls import EVICT_LAST_SHARE, cell_value, consumer_l2, headline_rate
from l2attr.analysis.common import NA, is_missing, ordered_profiles, ratio, rung_label, sort_rows
from l2attr.vocab import Condition, Profile, Role, RungId

HOT_PROFILES = (Profile.REUSE_HIGH.value, Profile.REUSE_MEDIUM.value, Profile.REUSE_LOW.value)
COLD_PROFILE = Profile.RANDOM.value
# (pinning rung, unpinned comparand): the pin is all the first adds over the second
PIN_PAIRS = ((RungId.L2P_OPTMT.value, RungId.OPTMT.value), (RungId.COMBINED.value, RungId.RPF_OPTMT.value))


def dram_attribution(l2: pd.DataFrame) -> pd.DataFrame:
    """Per profile and pinning rung: DRAM bytes per call of pin, consumer and both, against the
    unpinned comparand's consumer; with L2 fills, fabric sectors, the headline hit rate and the
    evict-last hit share."""
    rows = []
    profiles = ordered_profiles(consumer_l2(l2)["profile"]) if not l2.empty else []
    rate = headline_rate()
    for profile in profiles:
        for rung, comparand in PIN_PAIRS:
            cons, s1, w1 = cell_value(l2, rung, profile, "dram_read")
            pin, s2, w2 = cell_value(l2, rung, profile, "dram_read", role=Role.PIN.value)
            ref, s3, w3 = cell_value(l2, comparand, profile, "dram_read")
            if is_missing(cons) and is_missing(ref):
                continue
            missing: dict[str, str] = {}
            total = NA if is_missing(cons) or is_missing(pin) else cons + pin
            if is_missing(total):
                missing["total_dram_read"] = w1 or w2
            if is_missing(ref):
                missing["unpinned_dram_read"] = w3
            rec = {"profile": profile, "rung": rung, "comparand": comparand,
                   "pin_dram_read": pin, "consumer_dram_read": cons, "total_dram_read": total,
                   "unpinned_dram_read": ref,
                   "extra_dram_read": NA if is_missing(total) or is_missing(ref) else total - ref,
                   "total_over_unpinned": ratio(total, ref),
                   "consumer_over_unpinned": ratio(cons, ref)}
            for q, role, who in (("fill_device", Role.CONSUMER.value, rung), ("fabric", Role.CONSUMER.value, rung),
                                 (rate, Role.CONSUMER.value, rung), (rate, Role.CONSUMER.value, comparand),
                                 (EVICT_LAST_SHARE, Role.CONSUMER.value, rung),
                                 ("evict_last", Role.PIN.value, rung), ("fill_device", Role.PIN.value, rung)):
                v, _, why = cell_value(l2, who, profile, q, role=role)
                name = f"{Role.PIN if role == Role.PIN else Role.CONSUMER if who == rung else 'unpinned'}_{q}"
                rec[name] = v
                if is_missing(v):
                    missing[name] = why
            if "total_over_unpinned" in rec and is_missing(rec["total_over_unpinned"]):
                missing.setdefault("total_over_unpinned", missing.get("total_dram_read") or missing.get("unpinned_dram_read", ""))
            rec["source"] = " + ".join(s for s in dict.fromkeys((s1, s2, s3)) if s)
            rec["missing"] = missing
            rows.append(rec)
    return pd.DataFrame(rows)


def pin_effect(l2: pd.DataFrame) -> pd.DataFrame:
    """Per profile: the pin's effect on the consumer (headline hit-rate gain, DRAM bytes saved)."""
    rows = []
    for profile in ordered_profiles(consumer_l2(l2)["profile"]) if not l2.empty else []:
        for rung, comparand in PIN_PAIRS:
            rows.append(_compare(l2, profile, rung, comparand))
    return pd.DataFrame(rows)


def rpf_vs_l2p(l2: pd.DataFrame) -> pd.DataFrame:
    """Per profile: RPF+OptMT vs L2P+OptMT at the L2 layer (the study's Nsight comparison)."""
    return pd.DataFrame([_compare(l2, p, RungId.L2P_OPTMT.value, RungId.RPF_OPTMT.value)
                         for p in (ordered_profiles(consumer_l2(l2)["profile"]) if not l2.empty else [])])


def _compare(l2: pd.DataFrame, profile: str, rung: str, comparand: str) -> dict[str, Any]:
    rate = headline_rate()
    hit, src_a, why_a = cell_value(l2, rung, profile, rate)
    hit_ref, src_b, why_b = cell_value(l2, comparand, profile, rate)
    dram, src_c, why_c = cell_value(l2, rung, profile, "dram_read")
    dram_ref, src_d, why_d = cell_value(l2, comparand, profile, "dram_read")
    missing = {}
    if is_missing(hit) or is_missing(hit_ref):
        missing["hit_gain_pp"] = why_a or why_b
    if is_missing(dram) or is_missing(dram_ref):
        missing["dram_ratio"] = missing["dram_saved_bytes"] = why_c or why_d
    return {
        "profile": profile, "rung": rung, "comparand": comparand,
        "hit_rate_pct": hit, "comparand_hit_rate_pct": hit_ref,
        "hit_gain_pp": hit - hit_ref if not (is_missing(hit) or is_missing(hit_ref)) else NA,
        "dram_read_bytes": dram, "comparand_dram_read_bytes": dram_ref,
        "dram_saved_bytes": dram_ref - dram if not (is_missing(dram) or is_missing(dram_ref)) else NA,
        "dram_ratio": ratio(dram, dram_ref),
        "source": " + ".join(s for s in dict.fromkeys((src_a, src_b, src_c, src_d)) if s),
        "missing": missing,
    }


def hotness_pair(profiles: list[str]) -> tuple[str | None, str | None]:
    hot = next((p for p in HOT_PROFILES if p in profiles), None)
    return hot, (COLD_PROFILE if COLD_PROFILE in profiles else None)


def hotness_gradient(l2: pd.DataFrame) -> pd.DataFrame:
    """Per rung: headline hit-rate gap (hot minus random, points) and DRAM-byte ratio (random / hot)."""
    grid = consumer_l2(l2)
    if grid.empty:
        return pd.DataFrame()
    hot, cold = hotness_pair(ordered_profiles(grid["profile"]))
    rate = headline_rate()
    rows = []
    for rung in dict.fromkeys(grid["rung"]):
        missing: dict[str, str] = {}
        if hot is None or cold is None:
            reason = "no reuse profile was profiled" if hot is None else "random was not profiled"
            missing = {"hit_gap_pp": reason, "dram_ratio": reason}
            h_hot = h_cold = d_hot = d_cold = NA
            sources: tuple[str, ...] = ()
        else:
            h_hot, s1, w1 = cell_value(l2, rung, hot, rate)
            h_cold, s2, w2 = cell_value(l2, rung, cold, rate)
            d_hot, s3, w3 = cell_value(l2, rung, hot, "dram_read")
            d_cold, s4, w4 = cell_value(l2, rung, cold, "dram_read")
            if is_missing(h_hot) or is_missing(h_cold):
                missing["hit_gap_pp"] = w1 or w2
            if is_missing(d_hot) or is_missing(d_cold):
                missing["dram_ratio"] = w3 or w4
            sources = (s1, s2, s3, s4)
        rows.append({
            "rung": rung, "label": rung_label(rung), "hot_profile": hot, "cold_profile": cold,
            "hot_hit_rate_pct": h_hot, "cold_hit_rate_pct": h_cold,
            "hit_gap_pp": NA if "hit_gap_pp" in missing else h_hot - h_cold,
            "hot_dram_read_bytes": d_hot, "cold_dram_read_bytes": d_cold,
            "dram_ratio": NA if "dram_ratio" in missing else ratio(d_cold, d_hot),
            "source": " + ".join(s for s in dict.fromkeys(sources) if s), "missing": missing,
        })
    return sort_rows(pd.DataFrame(rows))


def pin_traffic(l2: pd.DataFrame, config: dict[str, Any]) -> pd.DataFrame:
    """Per pinning rung x profile: what the pin kernel itself costs the memory system.

    `hot_set_bytes` = hot_rows x dim x element size: the bytes a perfect pin pulls once."""
    if l2.empty:
        return pd.DataFrame()
    pins = l2[(l2["role"] == Role.PIN.value) & (l2["condition"] == Condition.LADDER.value)]
    hot_set = _hot_set_bytes(config)
    rows = []
    for rec in pins.to_dict("records"):
        missing = {q: r for q, r in rec["missing"].items() if q in ("dram_read", "evict_last", "duration", "fill_device")}
        if is_missing(hot_set):
            missing["hot_set_bytes"] = "config lacks hot_rows, dim or dtype"
        rows.append({
            "rung": rec["rung"], "label": rec["label"], "profile": rec["profile"], "n_calls": rec["n_calls"],
            "dram_read": rec.get("dram_read", NA), "fill_device": rec.get("fill_device", NA),
            "evict_last": rec.get("evict_last", NA), "duration": rec.get("duration", NA),
            "hot_set_bytes": hot_set, "dram_over_hot_set": ratio(rec.get("dram_read", NA), hot_set),
            "source": rec["source"], "missing": missing,
        })
    return sort_rows(pd.DataFrame(rows))


def _hot_set_bytes(config: dict[str, Any]) -> float:
    element = {"fp32": 4, "fp16": 2, "bf16": 2}.get(str(config.get("dtype")))
    try:
        return float(int(config["hot_rows"]) * int(config["dim"]) * element) if element else NA
    except (KeyError, TypeError, ValueError):
        return NA


CONTROL_ARMS = (Condition.CONTROL_AFTER_PIN.value, Condition.CONTROL_AFTER_FLUSH.value,
                Condition.CONTROL_AFTER_RESET.value)


def validity_from_metrics(l2: pd.DataFrame) -> pd.DataFrame:
    """The control's consumer cells (after pin, after pin + flush, after pin + reset), if profiled."""
    if l2.empty:
        return pd.DataFrame()
    ctrl = l2[l2["condition"].isin(CONTROL_ARMS) & (l2["role"] == Role.CONSUMER.value)]
    cols = ["condition", "rung", "profile", "n_calls", headline_rate(), "dram_read", EVICT_LAST_SHARE,
            "evict_last_lookup_hit", "source", "missing"]
    return ctrl[[c for c in cols if c in ctrl.columns]].reset_index(drop=True)


