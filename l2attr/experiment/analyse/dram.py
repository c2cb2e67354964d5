"""DRAM-first attribution of an experiment from exp_metrics.csv, and its validity control.

Per (experiment, condition, role): the median over profiled calls of every metric key of the
catalog (metrics/*.toml; counts summed over a call's kernels, rates from the sums), with the
per-call range of DRAM reads. The control asks whether this profile can see the producer's lines
at all: the consumer's DRAM read under `natural` against `flush_after_producer` (the same child,
the producer's lines flushed between the two). Judged here, once, from the table on disk.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from l2attr.analysis.calls import call_table, headline_rate, label
from l2attr.vocab import L2Condition, Role, Verdict

MIN_DRAM_REDUCTION = 0.10   # the consumer must read >= 10 % less DRAM with the producer's lines kept
KEYS = ("experiment", "condition", "role")
CALL, KERNELS = "call", "kernels"   # column names: exp_metrics' call index, the call table's kernel count


def per_call(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per (experiment, condition, role, call): keys summed over the call's kernels."""
    if metrics.empty:
        return pd.DataFrame(columns=[*KEYS, CALL, KERNELS])
    df = metrics.rename(columns={CALL: "table"})
    calls = call_table(df, extra_keys=KEYS[:1])
    return calls.rename(columns={"table": CALL})


def dram_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """Medians per (experiment, condition, role), DRAM read range, calls profiled."""
    calls = per_call(metrics)
    if calls.empty:
        return pd.DataFrame(columns=[*KEYS, "calls"])
    value_cols = [c for c in calls.columns if c not in (*KEYS, CALL, KERNELS)
                  and pd.api.types.is_numeric_dtype(calls[c])]
    g = calls.groupby(list(KEYS), dropna=False, sort=False)
    out = g[value_cols].median()
    out["calls"] = g.size()
    out["kernels_per_call"] = g["kernels"].median()
    if "dram_read" in calls:
        out["dram_read_min"] = g["dram_read"].min()
        out["dram_read_max"] = g["dram_read"].max()
    return out.reset_index()


def control(metrics: pd.DataFrame, min_reduction: float = MIN_DRAM_REDUCTION) -> dict[str, Any]:
    """clear: with the producer's lines kept the consumer reads >= min_reduction less DRAM than
    after a flush, and the per-call ranges do not overlap; not_clear otherwise (no reuse to see,
    or a setup that erases it); inconclusive without both arms."""
    calls = per_call(metrics)
    rule = (f"consumer DRAM read under natural >= {min_reduction:.0%} below flush_after_producer, "
            "per-call ranges disjoint")
    result: dict[str, Any] = {"rule": rule, "hit_rate_metric": headline_rate(), "hit_rate_label": label(headline_rate())}
    if calls.empty or "dram_read" not in calls:
        return {**result, "verdict": Verdict.INCONCLUSIVE.value, "reason": "no DRAM-read counts"}
    cons = calls[calls["role"] == Role.CONSUMER.value]
    nat = cons[cons["condition"] == L2Condition.NATURAL.value]["dram_read"].dropna()
    cold = cons[cons["condition"] == L2Condition.FLUSH_AFTER_PRODUCER.value]["dram_read"].dropna()
    if nat.empty or cold.empty:
        return {**result, "verdict": Verdict.INCONCLUSIVE.value,
                "reason": "needs consumer calls under natural and flush_after_producer"}
    reduction = 1.0 - float(nat.median()) / float(cold.median()) if cold.median() > 0 else 0.0
    separated = float(nat.max()) < float(cold.min())
    clear = reduction >= min_reduction and separated
    return {**result, "natural_dram_read_median": float(nat.median()),
            "flushed_dram_read_median": float(cold.median()), "dram_read_reduction": reduction,
            "ranges_separated": separated, "calls": int(min(len(nat), len(cold))),
            "verdict": (Verdict.CLEAR if clear else Verdict.NOT_CLEAR).value}


def describe(vc: dict[str, Any]) -> str:
    """One line for the CLI and the report."""
    if vc["verdict"] == Verdict.INCONCLUSIVE.value:
        return f"validity control: inconclusive ({vc.get('reason', '')})"
    what = ("the profile sees the producer's lines: this setup keeps cross-kernel L2 state"
            if vc["verdict"] == Verdict.CLEAR.value else
            "no difference beyond the rule: the consumer does not reuse the producer's lines here, "
            "or the setup erased them")
    return (f"validity control: consumer DRAM read {vc['natural_dram_read_median'] / 1e6:.2f} MB natural vs "
            f"{vc['flushed_dram_read_median'] / 1e6:.2f} MB after a flush between producer and consumer "
            f"({_change(vc['dram_read_reduction'])}) -> {what}")


def _change(reduction: float) -> str:
    return f"{reduction:.1%} less" if reduction >= 0 else f"{-reduction:.1%} more"
