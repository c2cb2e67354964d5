"""Summaries of an experiment cell's samples (exp_samples.csv -> exp_cells.csv rows), CPU only.

`kernels` is producer + consumer of the same call (producer counted 0 where the condition runs
none), so its median is the median of per-call sums, not a sum of medians. Discarded samples
(timeout, late, throttled) are counted, never summarised.
"""

from __future__ import annotations

import pandas as pd

from l2attr.measure.stats import summarize
from l2attr.schema import EXP_CELLS
from l2attr.vocab import Quantity, RepeatMode, Timer

CELL_KEYS = ("experiment", "condition")


def summarize_pair_cell(samples: pd.DataFrame) -> pd.DataFrame:
    """EXP_CELLS rows (one per quantity x timer with data) for the samples of one condition."""
    if samples.empty:
        return pd.DataFrame(columns=list(EXP_CELLS.columns))
    keys = {k: samples[k].iloc[0] for k in CELL_KEYS}
    discard = samples["discard"].map(lambda x: "" if pd.isna(x) else str(x))
    device = samples[(samples["mode"] == RepeatMode.DEVICE.value)]
    host = samples[(samples["mode"] == RepeatMode.HOST.value)]
    kept = device[discard.loc[device.index] == ""]
    n_discarded = int((discard.loc[device.index] != "").sum())
    producer = kept["producer_time_us"].astype(float)
    consumer = kept["consumer_time_us"].astype(float)
    series = {
        (Quantity.PRODUCER, Timer.KERNEL, n_discarded): producer,
        (Quantity.CONSUMER, Timer.KERNEL, n_discarded): consumer,
        (Quantity.KERNELS, Timer.KERNEL, n_discarded): consumer + producer.fillna(0.0),
        (Quantity.PRODUCER, Timer.WALL, 0): host["producer_wall_us"].astype(float),
        (Quantity.CONSUMER, Timer.WALL, 0): host["consumer_wall_us"].astype(float),
        (Quantity.CALL, Timer.WALL, 0): host["call_wall_us"].astype(float),
    }
    rows = []
    for (quantity, timer, dropped), values in series.items():
        s = summarize(values.to_numpy())
        if s["n_samples"] == 0:
            continue
        rows.append({**keys, "quantity": quantity.value, "timer": timer.value, "n_discarded": dropped, **s})
    return pd.DataFrame(rows, columns=list(EXP_CELLS.columns))


def summarize_pairs(samples: pd.DataFrame) -> pd.DataFrame:
    """exp_cells.csv for every (experiment, condition) in a samples table."""
    parts = [summarize_pair_cell(g) for _, g in samples.groupby(list(CELL_KEYS), sort=False)]
    if not parts:
        return pd.DataFrame(columns=list(EXP_CELLS.columns))
    return pd.concat(parts, ignore_index=True)
