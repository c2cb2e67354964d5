"""Run-to-run spread: how much a cell's median moves between repeats, per timer.

A difference between rungs smaller than this spread is noise (docs/study.md, the significance
rule). Computed from samples.csv: each repeat's median per cell, then (max - min) / mean of those medians. Device
repeats carry the kernel timer (consumer, pin), host repeats the artifact's timer and the wall
clock, so each timer's spread comes from its own repeats.
"""

from __future__ import annotations

import pandas as pd

from l2attr.vocab import Discard, TimerKind

CELL_KEYS = ("family", "rung", "pin", "profile", "l2_state")
# timer label -> samples.csv column
TIMED_COLUMNS = {
    "consumer (kernel timer)": "consumer_time_us",
    "pin (kernel timer)": "pin_time_us",
    "consumer (artifact's timer)": "consumer_artifact_time_us",
    "whole call (wall clock)": "call_wall_time_us",
}


def repeat_spread(samples: pd.DataFrame, column: str = "consumer_time_us") -> pd.DataFrame:
    """Per cell: min, max, mean of the per-repeat medians, repeats, and spread_pct."""
    keys = [k for k in CELL_KEYS if k in samples.columns]
    per_repeat = (samples.dropna(subset=[column]).groupby(keys + ["repeat"])[column].median()
                  .reset_index())
    agg = per_repeat.groupby(keys)[column].agg(["min", "max", "mean", "count"]).reset_index()
    agg["spread_pct"] = (agg["max"] - agg["min"]) / agg["mean"] * 100.0
    return agg.rename(columns={"count": "repeats"})


def spread_summary(samples: pd.DataFrame) -> pd.DataFrame:
    """One row per timer: cells, repeats, median and worst spread, and the worst cell. A cell of one
    repeat (an adaptive run stops each cell on its own) has no spread of its own: it is counted
    (`single_cells`, `min_repeats`), never summarised as 0 %."""
    rows = []
    if samples is None or samples.empty:
        return pd.DataFrame(rows)
    for label, column in TIMED_COLUMNS.items():
        if column not in samples or samples[column].isna().all():
            continue
        every = repeat_spread(samples, column)
        sp = every[every["repeats"] >= 2]
        if sp.empty:
            continue
        worst = sp.loc[sp["spread_pct"].idxmax()]
        rows.append({"timer": label, "cells": int(len(sp)), "repeats": int(sp["repeats"].max()),
                     "min_repeats": int(every["repeats"].min()), "single_cells": int(len(every) - len(sp)),
                     "median_spread_pct": float(sp["spread_pct"].median()),
                     "worst_spread_pct": float(worst["spread_pct"]), "worst_repeats": int(worst["repeats"]),
                     "worst_cell": "/".join(str(worst[k]) for k in CELL_KEYS if k in sp.columns)})
    return pd.DataFrame(rows)


def launch_lag_effect(samples: pd.DataFrame, spin_us: float,
                      timer: str = TimerKind.SPIN.value) -> dict[str, float | str] | None:
    """How much the samples whose launch outlasted the spin head start move the consumer medians.

    Such a sample's event interval may hold host time (measure.gpu). Returned: their share of the
    kernel-timer samples (%) and the largest shift of a cell's consumer median when they are
    dropped (%, with the cell), so a run with many lagged samples says whether they matter."""
    need = {"launch_lag_us", "consumer_time_us"}
    blocking = timer == TimerKind.BLOCKING
    if samples is None or (spin_us <= 0 and not blocking) or not need <= set(samples.columns):
        return None
    timed = samples.dropna(subset=["consumer_time_us", "launch_lag_us"])
    if timed.empty:
        return None
    keys = [k for k in CELL_KEYS if k in timed.columns]
    if blocking:   # launch lag cannot reach the interval; only a timed-out wait could
        flag = timed["timer_discard"] if "timer_discard" in timed else pd.Series("", index=timed.index)
        lagged = flag.map(lambda x: "" if pd.isna(x) else str(x)) == Discard.TIMEOUT.value
    else:
        lagged = timed["launch_lag_us"] >= spin_us
    every = timed.groupby(keys)["consumer_time_us"].median()
    clean = timed[~lagged].groupby(keys)["consumer_time_us"].median()
    shift = ((every.reindex(clean.index) / clean - 1.0) * 100.0).abs().dropna()
    out: dict[str, float | str] = {"lagged_pct": float(lagged.mean() * 100.0),
                                   "max_shift_pct": float(shift.max()) if len(shift) else 0.0,
                                   "worst_cell": ""}
    if len(shift):
        worst = shift.idxmax()
        out["worst_cell"] = "/".join(str(v) for v in (worst if isinstance(worst, tuple) else (worst,)))
    return out


def describe_launch_lag(lag: dict[str, float | str], spin_us: float, timer: str = TimerKind.SPIN.value) -> str:
    """The one wording of launch_lag_effect, for the ladder's summary and the report's caveat."""
    if timer == TimerKind.BLOCKING:
        return (f"blocking kernel timer: {float(lag['lagged_pct']):.1f} % of the kernel-timer samples "
                f"timed out waiting for the host's release (0 % means no launch lag in any interval); "
                f"dropping them moves a consumer median by at most {float(lag['max_shift_pct']):.2f} %")
    return (f"{float(lag['lagged_pct']):.1f} % of the kernel-timer samples were launched after the "
            f"{spin_us:g} µs spin head start (their event interval may hold host time); dropping them "
            f"moves a consumer median by at most {float(lag['max_shift_pct']):.2f} % ({lag['worst_cell']})")
