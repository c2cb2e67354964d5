"""The files of a sweep run dir, and the per-point summary made from its samples.

sweep_samples.csv  one row per timed thing (kernel or host call) of every measured call
sweep_units.csv    one row per finished (family, profile, point, arm, repeat, mode): a unit whose
                   row is here had all its samples appended before it; `--resume` re-measures the
                   rest
sweep_points.csv   medians and spread per (family, profile, point, arm, quantity, timer), rewritten
                   (atomically) after every point
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from l2attr.measure.stats import summary_rows
from l2attr.schema import GPU_COLUMNS, Table
from l2attr.vocab import RepeatMode, Quantity as Q, Role as R, Timer

POINT_KEYS = ("family", "pin", "profile", "point", "arm")
UNIT_KEYS = ("family", "profile", "point", "arm", "repeat", "mode")

_ID = {
    "axis": "sweep axis: amortisation, hotset, window, occupy (capacity before the rename), pollution, or another registered one",
    "family": "kernel family: artifact or tuned",
    "pin": "pin granularity of the family's pin (line, element)",
    "profile": "reuse profile",
    "point": "point id on the axis (e.g. interleaved:k8, hot60000, hr0.5, occupy_20MiB, pollute_30MiB)",
    "x": "the axis value (k, hot rows, hitRatio, MiB held (capacity runs: L2 minus it), MiB polluted)",
    "order": "back_to_back or interleaved (where a pin's k calls sit)",
    "k": "consumer calls per pin",
    "arm": "optmt, l2p_optmt, remap or window",
}

SWEEP_SAMPLES = Table(
    "sweep_samples",
    {**_ID,
     "repeat": "repeat index (device and host repeats alternate)",
     "mode": "device (kernel timer) or host (wall clock)",
     "group": "pin group within the repeat (a pin and its k calls, per table)",
     "table": "embedding table index",
     "batch": "row of the index stream the call read",
     "position": "1..k: which consumer call after the pin",
     "role": "pin, consumer, pollute, prepare (host call before the consumer) or call (whole call, host)",
     "timer": "kernel (CUDA events + spin) or wall (host clock)",
     "time_us": "time in microseconds",
     "launch_lag_us": "host time from the spin's launch to the timed kernel's launch (kernel timer)"},
    ("family", "profile", "point", "arm", "repeat", "mode", "group", "table", "position", "role"),
)

SWEEP_UNITS = Table(
    "sweep_units",
    {"family": "kernel family", "profile": "reuse profile", "point": "point id", "arm": "arm",
     "repeat": "repeat index", "mode": "device or host", "rows": "sample rows the unit appended"},
    UNIT_KEYS,
    optional=dict(GPU_COLUMNS),
)

SWEEP_POINTS = Table(
    "sweep_points",
    {**_ID,
     "hot_rows": "rows pinned or in the window",
     "hit_ratio": "access-policy window hitRatio (window arm; 0 otherwise)",
     "occupy_bytes": "L2 bytes held by evict_last lines of a dummy buffer before each call (occupy)",
     "pollute_bytes": "bytes streamed between pin and consumer (pollution)",
     "quantity": "pin, consumer, consumer_first (position 1), consumer_rest (positions > 1), pollute, "
                 "prepare, charged (pin + consumer kernels per consumer call) or call (wall per consumer call)",
     "timer": "kernel or wall",
     "n_samples": "samples behind the median",
     "median_us": "median", "p10_us": "10th percentile", "p90_us": "90th percentile",
     "ci95_lo_us": "bootstrap 95% CI of the median, low end",
     "ci95_hi_us": "bootstrap 95% CI of the median, high end"},
    ("family", "pin", "profile", "point", "arm", "quantity", "timer"),
    optional={"stopped": "--adaptive (sweep/measure/adaptive.py): target (every arm's 95% interval closed) or limit "
                         "(noisy, stopped at the limit); absent in a fixed run"},
)

SWEEP_TABLES = (SWEEP_SAMPLES, SWEEP_UNITS, SWEEP_POINTS)


def _per_consumer_call(rows: pd.DataFrame, roles: tuple[str, ...], unit: tuple[str, ...]) -> np.ndarray:
    """Per (repeat, group, table): the time of `roles` summed, over the consumer calls it served."""
    mine = rows[rows["role"].isin(roles)]
    if mine.empty:
        return np.array([])
    sums = mine.groupby(list(unit))["time_us"].sum()
    calls = rows[rows["role"].isin((R.CONSUMER.value, R.CALL.value))].groupby(list(unit)).size()
    return (sums / calls.reindex(sums.index)).dropna().to_numpy(dtype=float)


def point_series(samples: pd.DataFrame) -> dict[tuple[Q, Timer], np.ndarray]:
    """The values each SWEEP_POINTS quantity of one (family, profile, point, arm) summarises (its
    samples, all repeats); the integrity check recomputes the summaries from the same series."""
    unit = ("repeat", "group", "table")
    dev = samples[samples["mode"] == RepeatMode.DEVICE.value]
    host = samples[samples["mode"] == RepeatMode.HOST.value]
    role = lambda frame, r: frame.loc[frame["role"] == r.value, "time_us"].to_numpy(dtype=float)  # noqa: E731
    cons = dev[dev["role"] == R.CONSUMER.value]
    kernel, wall = Timer.KERNEL, Timer.WALL
    series: dict[tuple[Q, Timer], np.ndarray] = {
        (Q.CONSUMER, kernel): role(dev, R.CONSUMER),
        (Q.CONSUMER_FIRST, kernel): cons.loc[cons["position"] == 1, "time_us"].to_numpy(dtype=float),
        (Q.CONSUMER_REST, kernel): cons.loc[cons["position"] > 1, "time_us"].to_numpy(dtype=float),
        (Q.PIN, kernel): role(dev, R.PIN),
        (Q.POLLUTE, kernel): role(dev, R.POLLUTE),
        (Q.PREPARE, wall): role(dev, R.PREPARE),
        (Q.CHARGED, kernel): _per_consumer_call(dev, (R.PIN.value, R.CONSUMER.value), unit),
        (Q.CALL, wall): _per_consumer_call(host, (R.CALL.value,), unit),
    }
    return series


def summarize_point(samples: pd.DataFrame, facts: dict[str, Any]) -> pd.DataFrame:
    """SWEEP_POINTS rows of one (family, profile, point, arm) from its samples (all repeats)."""
    return summary_rows(SWEEP_POINTS, facts, ((qt, values, {}) for qt, values in point_series(samples).items()))
