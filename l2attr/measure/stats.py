"""The one summariser of timing samples: median, p10/p90 and a bootstrap 95% CI of the median,
one row per (quantity, timer) series of a cell, for the ladder's cells.csv, an experiment's
exp_cells.csv and a sweep's sweep_points.csv alike (CPU only).

A cell's keys are its table's key without quantity and timer (schema.py declares them once).
`kernels` is pin (producer) + consumer of the same call, the pin counted 0 where the call runs
none, so its median is the median of per-call sums, not a sum of medians. Discarded samples
(timeout, late, throttled) are counted, never summarised.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from l2attr.schema import CELLS, EXP_CELLS, SAMPLES, Table
from l2attr.vocab import Quantity, RepeatMode, Timer

SERIES_KEYS = ("quantity", "timer")


def cell_keys(table: Table) -> tuple[str, ...]:
    """The columns that name one cell of a summary table: its key without quantity and timer."""
    return tuple(k for k in table.key if k not in SERIES_KEYS)


CELL_KEYS = cell_keys(CELLS)              # the ladder's: family, rung, pin, profile, l2_state
PAIR_KEYS = cell_keys(EXP_CELLS)          # an experiment's: experiment, condition


def bootstrap_median_ci(values: np.ndarray, resamples: int = 2000, seed: int = 0,
                        level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap of the median: resample with replacement, take the middle `level`.

    Each resample is read as counts (how often it drew each sample), so its median is an order
    statistic of the sorted samples found by a running count, not by sorting the resample: the
    same draws and the same medians as sorting each one (tests/test_measure_stats.py holds
    them equal), three to four times faster. The counts depend only on the sample count, the resamples and the
    seed, so a run's many series of one length share them (`_draw_counts`)."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return (float("nan"), float("nan"))
    if values.size == 1:
        return (float(values[0]), float(values[0]))
    n = values.size
    if np.isnan(values).any():
        rng = np.random.default_rng(seed)
        medians = np.median(values[rng.integers(0, n, size=(resamples, n))], axis=1)
    else:
        order = np.argsort(values, kind="stable")
        ranked = values[order]
        seen = np.cumsum(_draw_counts(n, resamples, seed)[:, order], axis=1, dtype=np.int32)

        def statistic(k: int) -> np.ndarray:     # each resample's k-th smallest value (k from 0)
            return ranked[(seen > k).argmax(axis=1)]

        medians = statistic(n // 2) if n % 2 else (statistic(n // 2 - 1) + statistic(n // 2)) / 2
    lo, hi = np.quantile(medians, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


def _draw_counts(n: int, resamples: int, seed: int) -> np.ndarray:
    """How often each of n samples is drawn by each resample: the draws of
    `default_rng(seed).integers(0, n, (resamples, n))`, counted per row (read-only). Kept for
    lengths up to 4,096 samples (8 tables of at most 16 MB), made anew above."""
    return (_kept_counts if n <= 4096 else _counts)(n, resamples, seed)


def _counts(n: int, resamples: int, seed: int) -> np.ndarray:
    picks = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    flat = (picks + np.arange(resamples)[:, None] * n).ravel()
    counts = np.bincount(flat, minlength=resamples * n).reshape(resamples, n)
    counts = counts.astype(np.uint16 if n < 2**16 else np.int64)
    counts.setflags(write=False)
    return counts


_kept_counts = functools.lru_cache(maxsize=8)(_counts)


def summarize(values: np.ndarray) -> dict[str, float]:
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        nan = float("nan")
        return {"n_samples": 0, "median_us": nan, "p10_us": nan, "p90_us": nan,
                "ci95_lo_us": nan, "ci95_hi_us": nan}
    lo, hi = bootstrap_median_ci(values)
    p10, med, p90 = np.quantile(values, [0.1, 0.5, 0.9])
    return {"n_samples": int(values.size), "median_us": float(med), "p10_us": float(p10),
            "p90_us": float(p90), "ci95_lo_us": lo, "ci95_hi_us": hi}


Series = Iterable[tuple[tuple[Quantity, Timer], Any, dict[str, Any]]]   # (quantity, timer), values, more fields


def summary_rows(table: Table, keys: dict[str, Any], series: Series,
                 more: Callable[[Quantity, Timer, dict[str, Any]], dict[str, Any]] | None = None) -> pd.DataFrame:
    """`table`'s rows for one cell: one per series with samples (an empty series leaves no row).

    `more(quantity, timer, summary)` adds fields a row's summary implies (the ladder's rated
    bandwidth)."""
    rows = []
    for (quantity, timer), values, fields in series:
        s = summarize(np.asarray(values, dtype=float))
        if s["n_samples"]:
            rows.append({**keys, "quantity": quantity.value, "timer": timer.value, **fields, **s,
                         **(more(quantity, timer, s) if more else {})})
    return pd.DataFrame(rows, columns=list(table.columns))


def summarize_cell(samples: pd.DataFrame, bytes_per_call: int) -> pd.DataFrame:
    """CELLS rows (one per quantity x timer) for the samples of one ladder cell."""
    pin = samples["pin_time_us"].astype(float)
    cons = samples["consumer_time_us"].astype(float)
    series = (((Quantity.PIN, Timer.KERNEL), pin, {}),
              ((Quantity.CONSUMER, Timer.KERNEL), cons, {}),
              ((Quantity.KERNELS, Timer.KERNEL), cons + pin.fillna(0.0), {}),
              ((Quantity.CONSUMER, Timer.ARTIFACT), samples["consumer_artifact_time_us"].astype(float), {}),
              ((Quantity.CALL, Timer.WALL), samples["call_wall_time_us"].astype(float), {}))

    def rated(quantity: Quantity, timer: Timer, s: dict[str, Any]) -> dict[str, Any]:
        if quantity == Quantity.CONSUMER and timer == Timer.KERNEL:
            return {"bytes_per_call": bytes_per_call, "achieved_GBps": bytes_per_call / (s["median_us"] * 1e-6) / 1e9}
        return {"bytes_per_call": 0, "achieved_GBps": float("nan")}

    return summary_rows(CELLS, {k: samples[k].iloc[0] for k in CELL_KEYS}, series, rated)


def summarize_pair_cell(samples: pd.DataFrame) -> pd.DataFrame:
    """EXP_CELLS rows (one per quantity x timer with data) for the samples of one condition."""
    if samples.empty:
        return pd.DataFrame(columns=list(EXP_CELLS.columns))
    discard = samples["discard"].map(lambda x: "" if pd.isna(x) else str(x))
    device = samples[(samples["mode"] == RepeatMode.DEVICE.value)]
    host = samples[(samples["mode"] == RepeatMode.HOST.value)]
    kept = device[discard.loc[device.index] == ""]
    dropped = {"n_discarded": int((discard.loc[device.index] != "").sum())}
    producer = kept["producer_time_us"].astype(float)
    consumer = kept["consumer_time_us"].astype(float)
    series = (((Quantity.PRODUCER, Timer.KERNEL), producer, dropped),
              ((Quantity.CONSUMER, Timer.KERNEL), consumer, dropped),
              ((Quantity.KERNELS, Timer.KERNEL), consumer + producer.fillna(0.0), dropped),
              ((Quantity.PRODUCER, Timer.WALL), host["producer_wall_us"].astype(float), {"n_discarded": 0}),
              ((Quantity.CONSUMER, Timer.WALL), host["consumer_wall_us"].astype(float), {"n_discarded": 0}),
              ((Quantity.CALL, Timer.WALL), host["call_wall_us"].astype(float), {"n_discarded": 0}))
    return summary_rows(EXP_CELLS, {k: samples[k].iloc[0] for k in PAIR_KEYS}, series)


def summarize_pairs(samples: pd.DataFrame) -> pd.DataFrame:
    """exp_cells.csv for every (experiment, condition) in a samples table."""
    parts = [summarize_pair_cell(g) for _, g in samples.groupby(list(PAIR_KEYS), sort=False)]
    if not parts:
        return pd.DataFrame(columns=list(EXP_CELLS.columns))
    return pd.concat(parts, ignore_index=True)


__all__ = ["summarize", "summary_rows", "summarize_cell", "summarize_pair_cell", "summarize_pairs",
           "bootstrap_median_ci", "cell_keys", "SAMPLES"]
