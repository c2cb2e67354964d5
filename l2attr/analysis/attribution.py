"""Layer B: what the L2 did, per role (pin vs consumer), from Nsight Compute metrics.

metrics.csv is long (one row per kernel x metric). Here it becomes one row per profiled kernel
with one column per quantity (hit rate, DRAM bytes, L2 fills, ...; names resolved through
`metric_names`), and then one row per cell (condition, role, rung, profile) holding the median
over that cell's kernels and how many kernels there were.

On top of the cell table sit the study's comparisons:
- the pin's effect at the L2 layer: consumer hit rate of L2P+OptMT minus OptMT's;
- RPF+OptMT vs L2P+OptMT (the study's Nsight comparand: register prefetch vs explicit pinning);
- the hotness gradient: hottest profile vs random (hit-rate gap, DRAM-byte ratio);
- the pin kernel's own traffic (bytes it pulls from DRAM to warm the L2).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from l2attr.analysis.common import NA, is_missing, ordered_profiles, ratio, rung_label, sort_rows
from l2attr.analysis.metric_names import (
    METRIC_CANDIDATES, MUST_BE_NONZERO, QUANTITY_LABELS, RATE_QUANTITIES, CountRate, candidate_name,
)

KERNEL_KEYS = ["run", "cell", "condition", "role", "rung", "profile", "table", "batch", "kernel"]
CELL_KEYS = ["condition", "role", "rung", "profile"]
QUANTITIES = tuple(METRIC_CANDIDATES)
HOT_PROFILES = ("reuse_high", "reuse_medium", "reuse_low")
COLD_PROFILE = "random"


def choose_metrics(metrics: pd.DataFrame) -> dict[str, str | None]:
    """quantity -> the candidate used (its display name), or None when no candidate was collected."""
    present = set(metrics["metric"].dropna()) if not metrics.empty else set()
    chosen: dict[str, str | None] = {}
    for quantity, candidates in METRIC_CANDIDATES.items():
        chosen[quantity] = None
        for c in candidates:
            needed = {c.hits, c.misses} if isinstance(c, CountRate) else {c}
            if needed <= present:
                chosen[quantity] = candidate_name(c)
                break
    return chosen


def kernel_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per profiled kernel, one column per quantity (NaN where its metric is absent)."""
    columns = KERNEL_KEYS + list(QUANTITIES)
    if metrics.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    wide = (metrics.groupby(KERNEL_KEYS + ["metric"], dropna=False, sort=False)["value"].first()
            .unstack("metric").reset_index())
    wide.columns.name = None
    out = wide[KERNEL_KEYS].copy()
    for quantity, candidates in METRIC_CANDIDATES.items():
        out[quantity] = NA
        for c in candidates:
            if isinstance(c, CountRate):
                if c.hits in wide and c.misses in wide:
                    hits, misses = wide[c.hits].astype(float), wide[c.misses].astype(float)
                    total = hits + misses
                    out[quantity] = np.where(total > 0, 100.0 * hits / total.where(total > 0, 1.0), NA)
                    break
            elif c in wide:
                out[quantity] = wide[c].astype(float)
                break
    return out


def l2_cells(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per (condition, role, rung, profile): median of each quantity over its kernels, n."""
    kernels = kernel_table(metrics)
    chosen = choose_metrics(metrics)
    dead = dead_counters(kernels)
    for quantity in dead:
        kernels[quantity] = NA
    columns = CELL_KEYS + ["label", "n_kernels"] + list(QUANTITIES) + ["metric_used", "source", "missing"]
    if kernels.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    rows = []
    for key, group in kernels.groupby(CELL_KEYS, dropna=False, sort=False):
        condition, role, rung, profile = key
        rec: dict[str, Any] = dict(zip(CELL_KEYS, key))
        rec["label"] = rung_label(rung)
        rec["n_kernels"] = int(len(group))
        missing: dict[str, str] = {}
        for quantity in QUANTITIES:
            values = group[quantity].dropna()
            rec[quantity] = float(values.median()) if len(values) else NA
            if quantity in dead:
                missing[quantity] = f"{chosen[quantity]} read zero on every profiled kernel (counter not counting)"
            elif not len(values):
                missing[quantity] = (f"{QUANTITY_LABELS[quantity]} not collected (none of: "
                                     f"{', '.join(candidate_name(c) for c in METRIC_CANDIDATES[quantity])})"
                                     if chosen[quantity] is None
                                     else f"{chosen[quantity]} not collected for this cell")
        rec["metric_used"] = {q: m for q, m in chosen.items() if m}
        runs = sorted(set(group["run"].astype(str)))
        rec["source"] = " + ".join(
            f"{run}/metrics.csv[{condition}|{role}|{rung}|{profile}: {int((group['run'] == run).sum())} kernels]"
            for run in runs)
        rec["missing"] = missing
        rows.append(rec)
    return sort_rows(pd.DataFrame(rows, columns=columns))


def dead_counters(kernels: pd.DataFrame) -> list[str]:
    """Quantities that read exactly zero on every profiled kernel: a counter that does not count.

    A zero hit rate or zero DRAM traffic on every kernel of a gather is not a measurement; it is
    shown as missing (with this reason) rather than as a zero.
    """
    dead = []
    for quantity in MUST_BE_NONZERO:
        values = kernels[quantity].dropna() if quantity in kernels else pd.Series(dtype=float)
        if len(values) and (values == 0).all():
            dead.append(quantity)
    return dead


def cell_value(l2: pd.DataFrame, rung: str, profile: str, quantity: str,
               role: str = "consumer", condition: str = "ladder") -> tuple[float, str, str]:
    """(value, source, reason-if-missing) of one quantity of one cell."""
    if l2.empty:
        return NA, "", "layer B not measured (no metrics.csv)"
    hit = l2[(l2["condition"] == condition) & (l2["role"] == role) & (l2["rung"] == rung)
             & (l2["profile"] == profile)]
    if hit.empty:
        return NA, "", f"{rung}/{profile} not profiled ({role}, {condition})"
    row = hit.iloc[0]
    value = row[quantity]
    return value, row["source"], (row["missing"].get(quantity, "not measured") if is_missing(value) else "")


def consumer_l2(l2: pd.DataFrame, condition: str = "ladder") -> pd.DataFrame:
    """The consumer rows of the ladder condition: the rung x profile attribution grid."""
    if l2.empty:
        return l2
    return l2[(l2["role"] == "consumer") & (l2["condition"] == condition)].reset_index(drop=True)


def pin_effect(l2: pd.DataFrame, pairs: tuple[tuple[str, str], ...] = (("l2p_optmt", "optmt"),
                                                                        ("combined", "rpf_optmt"))) -> pd.DataFrame:
    """Per profile: what the pin did to the consumer's L2 (hit-rate gain in points, DRAM bytes saved)."""
    rows = []
    for profile in ordered_profiles(consumer_l2(l2)["profile"]) if not l2.empty else []:
        for rung, comparand in pairs:
            rows.append(_compare(l2, profile, rung, comparand))
    return pd.DataFrame(rows)


def rpf_vs_l2p(l2: pd.DataFrame) -> pd.DataFrame:
    """Per profile: RPF+OptMT vs L2P+OptMT at the L2 layer (the study's Nsight comparison)."""
    rows = []
    for profile in ordered_profiles(consumer_l2(l2)["profile"]) if not l2.empty else []:
        rows.append(_compare(l2, profile, "l2p_optmt", "rpf_optmt"))
    return pd.DataFrame(rows)


def _compare(l2: pd.DataFrame, profile: str, rung: str, comparand: str) -> dict[str, Any]:
    hit, src_a, why_a = cell_value(l2, rung, profile, "hit_rate_pct")
    hit_ref, src_b, why_b = cell_value(l2, comparand, profile, "hit_rate_pct")
    dram, src_c, why_c = cell_value(l2, rung, profile, "dram_read_bytes")
    dram_ref, src_d, why_d = cell_value(l2, comparand, profile, "dram_read_bytes")
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
    """(hot, cold) profiles for the gradient: the hottest measured reuse profile vs random."""
    hot = next((p for p in HOT_PROFILES if p in profiles), None)
    cold = COLD_PROFILE if COLD_PROFILE in profiles else None
    return hot, cold


def hotness_gradient(l2: pd.DataFrame) -> pd.DataFrame:
    """Per rung: hit-rate gap (hot minus random, points) and DRAM-byte ratio (random over hot)."""
    grid = consumer_l2(l2)
    if grid.empty:
        return pd.DataFrame()
    hot, cold = hotness_pair(ordered_profiles(grid["profile"]))
    rows = []
    for rung in dict.fromkeys(grid["rung"]):
        missing: dict[str, str] = {}
        if hot is None or cold is None:
            reason = ("no reuse profile was profiled" if hot is None else "random was not profiled")
            missing = {"hit_gap_pp": reason, "dram_ratio": reason}
            h_hot = h_cold = d_hot = d_cold = NA
            sources: tuple[str, ...] = ()
        else:
            h_hot, s1, w1 = cell_value(l2, rung, hot, "hit_rate_pct")
            h_cold, s2, w2 = cell_value(l2, rung, cold, "hit_rate_pct")
            d_hot, s3, w3 = cell_value(l2, rung, hot, "dram_read_bytes")
            d_cold, s4, w4 = cell_value(l2, rung, cold, "dram_read_bytes")
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

    `hot_set_bytes` is hot_rows x dim x element size from the workload config: the bytes a
    perfect pin would pull once. More DRAM bytes than that means the pin re-reads or over-fetches.
    """
    if l2.empty:
        return pd.DataFrame()
    pins = l2[(l2["role"] == "pin") & (l2["condition"] == "ladder")]
    hot_set = _hot_set_bytes(config)
    rows = []
    for rec in pins.to_dict("records"):
        missing = {q: r for q, r in rec["missing"].items()
                   if q in ("dram_read_bytes", "evict_last_sectors", "duration_ns", "l2_fill_sectors")}
        if is_missing(hot_set):
            missing["hot_set_bytes"] = "config lacks hot_rows, dim or dtype"
        rows.append({
            "rung": rec["rung"], "label": rec["label"], "profile": rec["profile"], "n_kernels": rec["n_kernels"],
            "dram_read_bytes": rec["dram_read_bytes"], "l2_fill_sectors": rec["l2_fill_sectors"],
            "evict_last_sectors": rec["evict_last_sectors"], "duration_ns": rec["duration_ns"],
            "hot_set_bytes": hot_set, "dram_over_hot_set": ratio(rec["dram_read_bytes"], hot_set),
            "source": rec["source"], "missing": missing,
        })
    return sort_rows(pd.DataFrame(rows))


def _hot_set_bytes(config: dict[str, Any]) -> float:
    element = {"fp32": 4, "fp16": 2, "bf16": 2}.get(str(config.get("dtype")))
    try:
        return float(int(config["hot_rows"]) * int(config["dim"]) * element) if element else NA
    except (KeyError, TypeError, ValueError):
        return NA


def validity_from_metrics(l2: pd.DataFrame) -> pd.DataFrame:
    """Consumer hit rate and DRAM bytes of the validity control (after pin vs after flush), if profiled."""
    if l2.empty:
        return pd.DataFrame()
    ctrl = l2[l2["condition"].isin(["control_after_pin", "control_after_flush"]) & (l2["role"] == "consumer")]
    return ctrl[["condition", "rung", "profile", "n_kernels", "hit_rate_pct", "dram_read_bytes", "source",
                 "missing"]].reset_index(drop=True)


def metric_warnings(metrics: pd.DataFrame) -> list[str]:
    """Metrics that were not collected, counted only zeros, or rates outside [0, 100] %."""
    if metrics.empty:
        return []
    out = []
    chosen = choose_metrics(metrics)
    for quantity, name in chosen.items():
        if name is None:
            out.append(f"{QUANTITY_LABELS[quantity]}: none of its metrics was collected "
                       f"({', '.join(candidate_name(c) for c in METRIC_CANDIDATES[quantity])})")
    kernels = kernel_table(metrics)
    for quantity in dead_counters(kernels):
        out.append(f"{chosen[quantity]} is zero on every profiled kernel: the counter probably does "
                   f"not count these loads on this GPU; shown as missing, not as zero")
    for quantity in RATE_QUANTITIES:
        values = kernels[quantity].dropna()
        bad = values[(values < 0) | (values > 100)]
        if len(bad):
            out.append(f"{chosen[quantity]}: {len(bad)} of {len(values)} kernels report a rate outside "
                       f"[0, 100] % (max {bad.max():.2f} %): hits and lookups came from different passes")
    return out
