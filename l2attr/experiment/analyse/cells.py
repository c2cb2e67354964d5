"""What an experiment's handoff is worth, from exp_cells.csv: speedups, charges, break-even.

Keyed by the user's labels (experiment, condition), never by a workload's names. For each
experiment, `natural` is judged against its declared baseline:

* consumer-only: the consumer's kernel time (what the artifact reported for its pin);
* kernel-charged: producer + consumer kernels of one call (the producer's GPU time charged);
* wall-charged: producer -> sync and consumer -> sync on the host clock (the producer step's
  launch and sync charged as well: what a caller waits for).

With the consumer alone as baseline (a pin, a prefetch: a producer that exists only to help),
break-even is the number of consumer calls one producer step must serve to pay for itself,
kernel- and wall-charged: k* = producer / (saving per consumer call), "never" when the saving is
not beyond noise. Every word comes from analysis.significance.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from l2attr.analysis.significance import Interval, Judged, compare
from l2attr.vocab import L2Condition, Judgement, Quantity, Timer

NAN = float("nan")
CONSUMER_ONLY = Quantity.CONSUMER.value   # the consumer-only comparison's key in a verdict row
CHARGES = {  # name -> (quantity, timer) compared between baseline and natural
    CONSUMER_ONLY: (Quantity.CONSUMER, Timer.KERNEL),
    "kernel_charged": (Quantity.KERNELS, Timer.KERNEL),
    "wall_charged": (Quantity.CALL, Timer.WALL),
}


def interval(cells: pd.DataFrame, experiment: str, condition: str, quantity: Quantity, timer: Timer) -> Interval:
    m = cells[(cells["experiment"] == experiment) & (cells["condition"] == condition)
              & (cells["quantity"] == quantity.value) & (cells["timer"] == timer.value)]
    if m.empty:
        return Interval(NAN, NAN, NAN)
    r = m.iloc[0]
    return Interval(float(r["median_us"]), float(r["ci95_lo_us"]), float(r["ci95_hi_us"]))


def break_even(producer_us: float, saving: Judged, base: Interval, new: Interval) -> float:
    """Consumer calls per producer step at which the step pays: inf when no saving beyond noise."""
    if saving.judgement != Judgement.FASTER or not math.isfinite(producer_us):
        return math.inf
    return producer_us / (base.median - new.median)


def experiment_row(cells: pd.DataFrame, experiment: str, baseline: str) -> dict[str, Any]:
    nat = L2Condition.NATURAL.value
    row: dict[str, Any] = {"experiment": experiment, "baseline": baseline}
    for name, (q, t) in CHARGES.items():
        j = compare(interval(cells, experiment, baseline, q, t), interval(cells, experiment, nat, q, t))
        row.update({f"{name}_speedup": j.speedup, f"{name}_lo": j.lo, f"{name}_hi": j.hi,
                    f"{name}_judgement": j.judgement.value})
    for cond in (nat, baseline):
        for q, t in ((Quantity.CONSUMER, Timer.KERNEL), (Quantity.PRODUCER, Timer.KERNEL),
                     (Quantity.PRODUCER, Timer.WALL), (Quantity.CALL, Timer.WALL)):
            row[f"{cond}_{q.value}_{t.value}_us"] = interval(cells, experiment, cond, q, t).median
    base_c = interval(cells, experiment, baseline, Quantity.CONSUMER, Timer.KERNEL)
    nat_c = interval(cells, experiment, nat, Quantity.CONSUMER, Timer.KERNEL)
    row["consumer_saving_us"] = base_c.median - nat_c.median
    row["consumer_saving_share"] = (base_c.median - nat_c.median) / base_c.median if base_c.valid else NAN
    row["break_even_kernel"] = row["break_even_wall"] = NAN
    if not L2Condition(baseline).producer:       # the consumer alone: does the producer step pay?
        saving = compare(base_c, nat_c)
        row["break_even_kernel"] = break_even(row[f"{nat}_producer_kernel_us"], saving, base_c, nat_c)
        base_w = interval(cells, experiment, baseline, Quantity.CONSUMER, Timer.WALL)
        nat_w = interval(cells, experiment, nat, Quantity.CONSUMER, Timer.WALL)
        row["break_even_wall"] = break_even(row[f"{nat}_producer_wall_us"], compare(base_w, nat_w), base_w, nat_w)
    row["headline"] = headline(row)
    return row


def verdict(cells: pd.DataFrame, baselines: dict[str, str]) -> pd.DataFrame:
    """One row per experiment (`baselines`: experiment -> its declared baseline condition)."""
    rows = [experiment_row(cells, e, b) for e, b in baselines.items()
            if not cells.empty and (cells["experiment"] == e).any()]
    return pd.DataFrame(rows)


def _ratio_text(row: dict[str, Any], name: str) -> str:
    j = row[f"{name}_judgement"]
    if j == Judgement.NOT_MEASURED.value:
        return "not measured"
    text = f"{row[f'{name}_speedup']:.3f}x [{row[f'{name}_lo']:.3f}, {row[f'{name}_hi']:.3f}]"
    return text + (" (within noise)" if j == Judgement.WITHIN_NOISE.value else "")


def _k(k: float) -> str:
    return "never (no saving beyond noise)" if not math.isfinite(k) else f"{k:.1f} consumer calls"


def headline(row: dict[str, Any]) -> str:
    """One sentence: does the handoff pay once its cost is charged?"""
    name, base = row["experiment"], row["baseline"]
    if not L2Condition(base).producer:
        j = row["wall_charged_judgement"]
        word = {Judgement.FASTER.value: "pays", Judgement.SLOWER.value: "does not pay",
                Judgement.WITHIN_NOISE.value: "breaks even within noise"}.get(j, "was not measured")
        out = (f"{name}: the producer step {word} once charged: wall-charged speedup "
               f"{_ratio_text(row, 'wall_charged')}, kernel-charged {_ratio_text(row, 'kernel_charged')}, "
               f"consumer alone {_ratio_text(row, CONSUMER_ONLY)} over the consumer without it")
        if not math.isfinite(row["break_even_wall"]) and not math.isfinite(row["break_even_kernel"]):
            return out + "; break-even: never."
        return out + (f"; break-even: {_k(row['break_even_kernel'])} per producer step on kernel time, "
                      f"{_k(row['break_even_wall'])} on the host clock.")
    j = row[f"{CONSUMER_ONLY}_judgement"]
    word = {Judgement.FASTER.value: "saves", Judgement.SLOWER.value: "costs",
            Judgement.WITHIN_NOISE.value: "changes nothing beyond noise in"}.get(j, "was not measured for")
    share = row["consumer_saving_share"]
    pct = f" ({100 * abs(share):.1f} % of the {base} consumer's time)" if math.isfinite(share) and j in (
        Judgement.FASTER.value, Judgement.SLOWER.value) else ""
    return (f"{name}: L2 reuse of the producer's output {word} the consumer{pct}: consumer "
            f"{_ratio_text(row, CONSUMER_ONLY)} against {base}; producer + consumer "
            f"{_ratio_text(row, 'kernel_charged')}.")
