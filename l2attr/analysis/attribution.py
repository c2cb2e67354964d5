"""Layer B: what the L2 did, per call and role, from Nsight Compute counters.

One aggregation everywhere: metrics.csv holds one row per kernel launch and metric; a *call* is one
NVTX range instance (one role of one table call), which can hold several kernels (torch's
embedding_bag launches helpers), so every count is **summed over the call's kernels** and every
rate is **derived from those sums** (`[[rate]]` in metrics/*.toml). Metric names come from the
TOML catalogue only; here quantities are referred to by their key.

On top of the per-call table sit the study's judgements, DRAM first (NOTES 2026-11-30 item 2: on
GH100 an L2 miss is not a DRAM read, so bytes compare across profiles where hit rates do not):
- what pin + consumer read from DRAM per call against the unpinned consumer;
- the share of the consumer's L2 hits that landed on evict_last lines;
- the validity control (after pin / after pin + flush / after pin + persisting-L2 reset);
- the hotness gradient and the pin kernel's own traffic.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from l2attr.analysis.common import NA, is_missing, ordered_profiles, ratio, rung_label, sort_rows
from l2attr.catalog.keys import Catalog, catalog
from l2attr.catalog.sets import DERIVED_PREFIX
from l2attr.vocab import Condition, Role

CALL_KEYS = ("run", "report", "condition", "role", "family", "rung", "pin", "profile", "l2_state", "table", "batch")
CELL_KEYS = ("condition", "role", "rung", "profile")
HOT_PROFILES = ("reuse_high", "reuse_medium", "reuse_low")
COLD_PROFILE = "random"
# Count keys whose all-zero value means "the counter did not count", not "nothing happened".
MUST_BE_NONZERO = ("dram_read", "lookup_hit", "read_lookup_hit", "fill_device", "duration")
SECTOR_BYTES = 32
# Derived per-call columns (beyond the TOML keys and rates).
EVICT_LAST_SHARE = "evict_last_hit_share"   # % of the call's L2 hits on evict_last lines
L2_SECTORS = "l2_sectors"                   # lookup_hit + lookup_miss


@lru_cache(maxsize=1)
def _catalog() -> Catalog:
    return catalog()


def headline_rate() -> str:
    """The key of the one hit rate printed everywhere."""
    return _catalog().headline_rate.key


def label(key: str) -> str:
    cat = _catalog()
    if key in cat.rates:
        return cat.rates[key].label
    if key in cat.metrics:
        return cat.metrics[key].label
    return {EVICT_LAST_SHARE: "share of L2 hits on evict_last lines", L2_SECTORS: "L2 sector lookups"}.get(key, key)


def call_table(metrics: pd.DataFrame, cat: Catalog | None = None,
               extra_keys: tuple[str, ...] = ()) -> pd.DataFrame:
    """One row per (call, role): each metric key summed over the call's kernels, rates from sums.

    `extra_keys` split calls further (e.g. the NVTX range of kernels l2attr did not name)."""
    cat = cat or _catalog()
    keys = [k for k in (*CALL_KEYS, *extra_keys) if k in metrics.columns]
    if metrics.empty:
        return pd.DataFrame(columns=[*keys, "kernels"])
    raw = metrics[~metrics["metric"].astype(str).str.startswith(DERIVED_PREFIX)]
    to_key = {name: entry.key for entry in cat.metrics.values() for name in entry.names.values()}
    keyed = raw.assign(key=raw["metric"].map(to_key)).dropna(subset=["key"])
    launch = "launch" if "launch" in raw.columns else "kernel"
    kernels = raw.groupby(keys, dropna=False)[launch].nunique().rename("kernels")
    if keyed.empty:
        return kernels.reset_index()
    sums = keyed.groupby([*keys, "key"], dropna=False)["value"].sum(min_count=1).unstack("key")
    sums.columns.name = None
    out = sums.join(kernels).reset_index()
    for t in cat.totals.values():
        if all(k in out for k in t.parts):
            total = sum(out[k] for k in t.parts)
            out[t.key] = out[t.key].fillna(total) if t.key in out else total
    for r in cat.rates.values():
        if r.hits in out and r.misses in out:
            total = out[r.hits] + out[r.misses]
            out[r.key] = np.where(total > 0, 100.0 * out[r.hits] / total.where(total > 0, 1.0), NA)
    if "lookup_hit" in out and "lookup_miss" in out:
        out[L2_SECTORS] = out["lookup_hit"] + out["lookup_miss"]
    if "evict_last_lookup_hit" in out and "lookup_hit" in out:
        out[EVICT_LAST_SHARE] = np.where(out["lookup_hit"] > 0,
                                         100.0 * out["evict_last_lookup_hit"] / out["lookup_hit"].where(
                                             out["lookup_hit"] > 0, 1.0), NA)
    return out


def quantities(calls: pd.DataFrame) -> list[str]:
    skip = set(CALL_KEYS) | {"kernels"}
    return [c for c in calls.columns if c not in skip]


def dead_counters(calls: pd.DataFrame) -> list[str]:
    """Keys that read exactly zero on every call: a counter that does not count (shown as missing)."""
    return [k for k in MUST_BE_NONZERO if k in calls and len(calls[k].dropna()) and (calls[k].dropna() == 0).all()]


def l2_cells(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per (condition, role, rung, profile): the median over its calls of every quantity,
    the number of calls, and the spread of DRAM bytes over the calls (one call per table)."""
    calls = call_table(metrics)
    qs = quantities(calls)
    columns = [*CELL_KEYS, "label", "n_calls", *qs, "dram_read_min", "dram_read_max", "dram_read_spread_pct",
               "source", "missing"]
    if calls.empty or not qs:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    dead = dead_counters(calls)
    rows = []
    for key, group in calls.groupby(list(CELL_KEYS), dropna=False, sort=False):
        condition, role, rung, profile = key
        rec: dict[str, Any] = dict(zip(CELL_KEYS, key))
        rec["label"] = rung_label(rung)
        rec["n_calls"] = int(len(group))
        missing: dict[str, str] = {}
        for q in qs:
            values = group[q].dropna()
            rec[q] = float(values.median()) if len(values) and q not in dead else NA
            if q in dead:
                missing[q] = f"{label(q)} read zero on every profiled call (counter not counting)"
            elif not len(values):
                missing[q] = f"{label(q)} not collected for this cell"
        dram = group["dram_read"].dropna() if "dram_read" in group else pd.Series(dtype=float)
        rec["dram_read_min"] = float(dram.min()) if len(dram) else NA
        rec["dram_read_max"] = float(dram.max()) if len(dram) else NA
        rec["dram_read_spread_pct"] = (100.0 * (dram.max() - dram.min()) / dram.median()
                                       if len(dram) and dram.median() > 0 else NA)
        runs = sorted(set(group["run"].astype(str))) if "run" in group else ["?"]
        rec["source"] = " + ".join(f"{run}/metrics.csv[{condition}|{role}|{rung}|{profile}: "
                                   f"{int((group['run'] == run).sum()) if 'run' in group else len(group)} calls]"
                                   for run in runs)
        rec["missing"] = missing
        rows.append(rec)
    return sort_rows(pd.DataFrame(rows, columns=columns))


def cell_value(l2: pd.DataFrame, rung: str, profile: str, quantity: str,
               role: str = Role.CONSUMER.value, condition: str = Condition.LADDER.value) -> tuple[float, str, str]:
    """(value, source, reason-if-missing) of one quantity of one cell."""
    if l2.empty:
        return NA, "", "layer B not measured (no metrics.csv)"
    hit = l2[(l2["condition"] == condition) & (l2["role"] == role) & (l2["rung"] == rung)
             & (l2["profile"] == profile)]
    if hit.empty:
        return NA, "", f"{rung}/{profile} not profiled ({role}, {condition})"
    row = hit.iloc[0]
    value = row[quantity] if quantity in row else NA
    reason = "" if not is_missing(value) else (row["missing"].get(quantity) or f"{label(quantity)} not collected")
    return value, row["source"], reason


def consumer_l2(l2: pd.DataFrame, condition: str = Condition.LADDER.value) -> pd.DataFrame:
    if l2.empty:
        return l2
    return l2[(l2["role"] == Role.CONSUMER.value) & (l2["condition"] == condition)].reset_index(drop=True)


# (pinning rung, unpinned comparand): the pin is all the first adds over the second
PIN_PAIRS = (("l2p_optmt", "optmt"), ("combined", "rpf_optmt"))


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
                name = f"{'pin' if role == Role.PIN.value else 'consumer' if who == rung else 'unpinned'}_{q}"
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
    return pd.DataFrame([_compare(l2, p, "l2p_optmt", "rpf_optmt")
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


def metric_warnings(metrics: pd.DataFrame) -> list[str]:
    """Keys none of whose names were collected, counters that read zero on every call, and ncu
    .pct rates outside [0, 100] (their inputs came from different passes)."""
    if metrics.empty:
        return []
    cat = _catalog()
    calls = call_table(metrics, cat)
    out = [f"{label(k)} ({', '.join(sorted(cat.names(k)))}) is zero on every profiled call: the counter "
           "probably does not count these accesses on this GPU; shown as missing, not as zero"
           for k in dead_counters(calls)]
    for r in cat.rates.values():
        if r.headline and not (r.hits in calls and r.misses in calls):
            out.append(f"{r.label}: its counts ({r.hits}, {r.misses}) were not collected")
    for key in ("ncu_hit_pct", "ncu_read_hit_pct"):
        names = cat.names(key) if key in cat.metrics else set()
        values = metrics.loc[metrics["metric"].isin(names), "value"]
        bad = values[(values < 0) | (values > 100)]
        if len(bad):
            out.append(f"{', '.join(sorted(names))}: {len(bad)} of {len(values)} kernels report a rate outside "
                       f"[0, 100] % (max {bad.max():.2f} %): hits and lookups came from different passes; "
                       "l2attr's rates come from same-call counts")
    return out
