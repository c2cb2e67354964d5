"""One sweep run dir -> its judgement: the axis' tables and a one-line reading (computed from
sweep_points.csv on disk, nothing from the GPU)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from l2attr.analysis import (sweep_amortisation, sweep_capacity, sweep_dram, sweep_hotset, sweep_pollution,
                             sweep_window)
from l2attr.analysis.sweep_load import SweepRun
from l2attr.vocab import Arm, SweepAxis, SweepQuantity as Q, SweepRole, Timer


@dataclass
class SweepAnalysis:
    run: SweepRun
    axis: SweepAxis
    table: pd.DataFrame                       # the axis' main table (one row per measured x, per series)
    reading: str                              # one line
    break_even: pd.DataFrame = field(default_factory=pd.DataFrame)   # amortisation only
    lag: str = ""                             # how many kernel-timer samples the spin did not cover

    @property
    def title(self) -> str:
        return TITLES[self.axis]


TITLES = {
    SweepAxis.AMORTISATION: "Sweep: consumer calls per pin (measured amortisation)",
    SweepAxis.HOTSET: "Sweep: hot-set size",
    SweepAxis.WINDOW: "Sweep: access-policy window instead of a pin kernel",
    SweepAxis.CAPACITY: "Sweep: effective L2 capacity",
    SweepAxis.POLLUTION: "Sweep: pollution between pin and consumer",
}


# axis -> DRAM MiB columns its table gets from `--profile` (column -> (arm or None = the row's, role))
DRAM_COLUMNS: dict[SweepAxis, dict[str, tuple[str | None, str]]] = {
    SweepAxis.HOTSET: {"consumer_dram_mib": (None, SweepRole.CONSUMER), "pin_dram_mib": (None, SweepRole.PIN)},
    SweepAxis.WINDOW: {"consumer_dram_mib": (None, SweepRole.CONSUMER)},
    SweepAxis.CAPACITY: {"optmt_dram_mib": (Arm.OPTMT, SweepRole.CONSUMER),
                         "consumer_dram_mib": (Arm.PIN, SweepRole.CONSUMER), "pin_dram_mib": (Arm.PIN, SweepRole.PIN)},
    SweepAxis.POLLUTION: {"optmt_dram_mib": (Arm.OPTMT, SweepRole.CONSUMER),
                          "consumer_dram_mib": (Arm.PIN, SweepRole.CONSUMER), "pin_dram_mib": (Arm.PIN, SweepRole.PIN)},
}


# axis -> the quantity whose repeat spread a row shows: (arm or None = the row's, quantity, timer)
SPREAD: dict[SweepAxis, tuple[str | None, str, str]] = {
    SweepAxis.AMORTISATION: (Arm.PIN, Q.CHARGED, Timer.KERNEL),
    SweepAxis.HOTSET: (None, Q.CHARGED, Timer.KERNEL),
    SweepAxis.WINDOW: (None, Q.CONSUMER, Timer.KERNEL),
    SweepAxis.CAPACITY: (Arm.PIN, Q.CHARGED, Timer.KERNEL),
    SweepAxis.POLLUTION: (Arm.PIN, Q.CONSUMER, Timer.KERNEL),
}


def add_spread(table: pd.DataFrame, points: pd.DataFrame, axis: SweepAxis) -> pd.DataFrame:
    """`spread_pct`: half the bootstrap 95 % CI of the row's main median, in % of it."""
    if table.empty or "point" not in table.columns:
        return table
    arm, quantity, timer = SPREAD[axis]
    sel = points[(points["quantity"] == quantity) & (points["timer"] == timer)]
    half = {(r.family, r.profile, r.point, r.arm): (r.ci95_hi_us - r.ci95_lo_us) / 2 / r.median_us * 100
            for r in sel.itertuples() if r.median_us > 0}
    table = table.copy()
    table["spread_pct"] = [half.get((r["family"], r["profile"], r["point"], arm or r.get("arm")), float("nan"))
                           for r in table.to_dict("records")]
    return table


def launch_lag(run: SweepRun) -> str:
    """One line: the share of kernel-timer samples launched after the spin's head start ran out
    (their event interval may hold host time, as the ladder's caveat says); '' without samples."""
    try:
        s = run.samples()
    except Exception:  # no samples file (a copied points table): nothing to say
        return ""
    spin = float((run.manifest.get("sweep") or {}).get("spin_us", 50.0))
    k = s[(s["timer"] == Timer.KERNEL) & s["launch_lag_us"].notna()]
    if k.empty or spin <= 0:
        return ""
    late = float((k["launch_lag_us"].astype(float) >= spin).mean())
    return (f"{late * 100:.1f} % of the {len(k):,} kernel-timer samples were launched after the {spin:g} µs "
            "spin had run out (their CUDA-event interval may hold host time).")


def analyse_sweep(run: SweepRun) -> SweepAnalysis:
    an = _analyse(run)
    an.lag = launch_lag(run)
    an.table = add_spread(an.table, run.points, an.axis)
    columns = DRAM_COLUMNS.get(an.axis)
    if columns and run.dram is not None:
        an.table = sweep_dram.add_columns(an.table, sweep_dram.medians(run.dram), columns)
    return an


def _analyse(run: SweepRun) -> SweepAnalysis:
    p, axis = run.points, run.axis
    if axis == SweepAxis.AMORTISATION:
        curve = sweep_amortisation.curves(p)
        be = sweep_amortisation.with_formula(sweep_amortisation.break_even(curve), p)
        return SweepAnalysis(run, axis, curve, sweep_amortisation.reading(be), be)
    if axis == SweepAxis.HOTSET:
        cfg = run.config
        row_bytes = int(cfg.get("dim", 128)) * {"fp32": 4, "fp16": 2, "bf16": 2}.get(str(cfg.get("dtype", "fp32")), 4)
        t = sweep_hotset.table(p, row_bytes)
        return SweepAnalysis(run, axis, t, sweep_hotset.reading(t))
    if axis == SweepAxis.WINDOW:
        t = sweep_window.table(p)
        return SweepAnalysis(run, axis, t, sweep_window.reading(t))
    if axis == SweepAxis.CAPACITY:
        t = sweep_capacity.table(p)
        return SweepAnalysis(run, axis, t, sweep_capacity.reading(t))
    t = sweep_pollution.table(p)
    return SweepAnalysis(run, axis, t, sweep_pollution.reading(t))
