"""The fast family's tuning table (benchmarks/tune_fast.py's fast_tuning.csv), read whole or refused.

Why: `analysis.tuning.score` leaves out a launch point not measured on every profile, so a copy
cut at a row boundary quietly dropped the last points of the last profile and `choose()`
returned another launch point. The table's contract: one row per (profile, launch point), knobs
whole, medians finite, positive and plausible, spreads >= 0, and every launch point measured on
every profile the table holds (the tuner writes whole profiles).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from l2attr.schema import TUNING_KNOBS as KNOBS
from l2attr.csvfile import read_complete_csv
from l2attr.errors import STRICT, Damage, UserError
from l2attr.integrity import rules
from l2attr.integrity.tables import MAX_TIME_US, MAX_TIME_WHY

NEEDED = ("profile", *KNOBS, "median_us", "spread_pct")


def read_tuning(path: Path, damage: Damage = STRICT) -> pd.DataFrame:
    """The tuning table at `path`, after its contract (rows breaking it dropped in the partial mode)."""
    path = Path(path)
    source = str(path)
    df = read_complete_csv(path, damage)
    missing = [c for c in NEEDED if c not in df.columns]
    if missing:
        raise UserError(f"{source}: not an l2attr tuning table (missing columns: {', '.join(missing)})")
    bad = pd.Series(False, index=df.index)
    for c in (*KNOBS, "median_us", "spread_pct"):
        v = pd.to_numeric(df[c], errors="coerce")
        bad |= rules.flag(damage, source, v.isna() | ~v.between(-1e308, 1e308),
                          f"column {c} must be a finite number", lambda row, c=c: repr(df[c].iloc[row]))
        df[c] = v
    bad |= rules.whole_numbers(df, KNOBS, source, damage)
    bad |= rules.flag(damage, source, df["median_us"] <= 0, "column median_us must be > 0",
                      lambda row: f"{df['median_us'].iloc[row]:g}")
    bad |= rules.at_most(df, "median_us", MAX_TIME_US, MAX_TIME_WHY, source, damage)
    bad |= rules.at_least(df, "spread_pct", 0.0, source, damage)
    for c in KNOBS:
        bad |= rules.at_least(df, c, 0.0, source, damage)
    bad |= rules.unique_keys(df, ("profile", *KNOBS), source, damage)
    df = df[~bad].reset_index(drop=True)
    check_every_point_on_every_profile(df, source, damage)
    return df


def check_every_point_on_every_profile(df: pd.DataFrame, source: str, damage: Damage) -> None:
    if df.empty:
        damage.found(f"{source}: no launch points (was the tuning interrupted?)")
        return
    profiles = sorted(df["profile"].astype(str).unique())
    counts = df.groupby("profile").size()
    if counts.nunique() > 1:
        most = int(counts.max())
        short = {p: int(n) for p, n in counts.items() if n < most}
        damage.found(f"{source}: launch points per profile differ ({', '.join(f'{p} {n}' for p, n in short.items())} "
                     f"of {most}; of {', '.join(profiles)}): the file was cut, or the tuning stopped within a "
                     "profile, and the choice would skip the points one profile lacks")
