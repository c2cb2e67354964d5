"""Layer B's one aggregation: metrics.csv rows -> calls -> cells, quantities named by catalog key.

metrics.csv holds one row per kernel launch and metric; a *call* is one NVTX range instance (one
role of one table call), which can hold several kernels (torch's embedding_bag launches helpers),
so every count is **summed over the call's kernels** and every rate is **derived from those
sums** (`[[rate]]` in metrics/*.toml). Metric names come from the TOML catalogue only; here
quantities are referred to by their key. The judgements on top are attribution.py's.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from l2attr.analysis.common import NA, first_row, is_missing, rung_label, sort_rows
from l2attr.catalog.keys import Catalog, catalog
from l2attr.catalog.sets import DERIVED_PREFIX
from l2attr.vocab import Condition, Role

CALL_KEYS = ("run", "report", "condition", "role", "family", "rung", "pin", "profile", "l2_state", "table", "batch")
CELL_KEYS = ("condition", "role", "rung", "profile")
# Count keys whose all-zero value means "the counter did not count", not "nothing happened".
MUST_BE_NONZERO = ("dram_read", "lookup_hit", "read_lookup_hit", "fill_device", "duration")
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
    row = first_row(l2, condition=condition, role=role, rung=rung, profile=profile)
    if row is None:
        return NA, "", f"{rung}/{profile} not profiled ({role}, {condition})"
    value = row[quantity] if quantity in row else NA
    reason = "" if not is_missing(value) else (row["missing"].get(quantity) or f"{label(quantity)} not collected")
    return value, row["source"], reason


def consumer_l2(l2: pd.DataFrame, condition: str = Condition.LADDER.value) -> pd.DataFrame:
    if l2.empty:
        return l2
    return l2[(l2["role"] == Role.CONSUMER.value) & (l2["condition"] == condition)].reset_index(drop=True)


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
