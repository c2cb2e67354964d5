"""Summaries of timing samples: median, p10/p90 and a bootstrap 95% CI of the median (CPU only)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from l2attr.schema import CELLS, SAMPLES
from l2attr.vocab import Quantity, Timer

CELL_KEYS = ("family", "rung", "pin", "profile", "l2_state")


def bootstrap_median_ci(values: np.ndarray, resamples: int = 2000, seed: int = 0,
                        level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap of the median: resample with replacement, take the middle `level`."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return (float("nan"), float("nan"))
    if values.size == 1:
        return (float(values[0]), float(values[0]))
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, values.size, size=(resamples, values.size))
    medians = np.median(values[picks], axis=1)
    lo, hi = np.quantile(medians, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


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


def summarize_cell(samples: pd.DataFrame, bytes_per_call: int) -> pd.DataFrame:
    """CELLS rows (one per quantity x timer) for the samples of one cell.

    `kernels` is pin + consumer of the same call (pin counted as 0 for rungs without a pin), so
    its median is the median of per-call sums, not a sum of medians.
    """
    keys = {k: samples[k].iloc[0] for k in CELL_KEYS}
    pin = samples["pin_time_us"].astype(float)
    cons = samples["consumer_time_us"].astype(float)
    series = {
        (Quantity.PIN, Timer.KERNEL): pin,
        (Quantity.CONSUMER, Timer.KERNEL): cons,
        (Quantity.KERNELS, Timer.KERNEL): cons + pin.fillna(0.0),
        (Quantity.CONSUMER, Timer.ARTIFACT): samples["consumer_artifact_time_us"].astype(float),
        (Quantity.CALL, Timer.WALL): samples["call_wall_time_us"].astype(float),
    }
    rows = []
    for (quantity, timer), values in series.items():
        s = summarize(values.to_numpy())
        if s["n_samples"] == 0:
            continue
        rated = quantity == Quantity.CONSUMER and timer == Timer.KERNEL
        achieved = (bytes_per_call / (s["median_us"] * 1e-6) / 1e9) if rated else float("nan")
        rows.append({**keys, "quantity": quantity.value, "timer": timer.value, **s,
                     "bytes_per_call": bytes_per_call if rated else 0, "achieved_GBps": achieved})
    return pd.DataFrame(rows, columns=list(CELLS.columns))


__all__ = ["summarize", "summarize_cell", "bootstrap_median_ci", "SAMPLES"]
