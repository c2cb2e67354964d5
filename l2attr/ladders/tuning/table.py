"""The fast family's launch-parameter choice, made from the committed tuning table, not guessed.

`benchmarks/tune_fast.py` times every (warps per bag, bags per block, loads in flight) point on
the GPU and writes one row per point and profile. The default is the point with the smallest
geometric mean of its consumer medians over the profiles measured; `LaunchShape`'s defaults must
be that point (a CPU test holds them to it), or within the table's own spread of it.

A table measured on several GPUs (`tune_fast.py --workers`: its `gpu_uuid` column holds more than
one) compares points by their ratio to the tuned OptMT consumer timed beside them on their own
GPU (`vs_tuned`), never by medians of two GPUs (analysis.gpus' rule).

The table is read whole or refused (read_tuning, below). Why: `score` leaves out a launch point not measured on every profile, so a copy
cut at a row boundary quietly dropped the last points of the last profile and `choose()`
returned another launch point. The table's contract: one row per (profile, launch point), knobs
whole, medians finite, positive and plausible, spreads >= 0, and every launch point measured on
every profile the table holds (the tuner writes whole profiles).

`tuned_flags` (below) turns the table's choice into the ladder's flags (`ladder --tuning FILE`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.csvfile import read_complete_csv
from l2attr.errors import STRICT, Damage, UserError
from l2attr.integrity import rules
from l2attr.integrity.tables import MAX_TIME_US, MAX_TIME_WHY
from l2attr.schema import TUNING_KNOBS as KNOBS

# the knob of the table -> the `l2attr ladder` option that sets it
LADDER_FLAGS = {"warps_per_bag": "fast_warps_per_bag", "bags_per_block": "fast_bags_per_block",
                "unroll": "fast_unroll", "load": "fast_load", "maxrregcount": "fast_maxrregcount"}


def across_gpus(table: pd.DataFrame) -> bool:
    """The table's points were measured on more than one GPU."""
    return "gpu_uuid" in table and table["gpu_uuid"].dropna().astype(str).nunique() > 1


def _geomean(values: Any) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def score(table: pd.DataFrame) -> pd.DataFrame:
    """One row per launch point: geometric mean of its median_us over profiles, its worst spread,
    and its ratio to the tuned OptMT consumer per profile (when the table has that reference).
    Ranked by `rank_by`: geomean_us on one GPU, geomean_vs_tuned across GPUs."""
    rows = []
    several = across_gpus(table)
    profiles = sorted(table["profile"].unique())
    for knobs, grp in table.groupby(list(KNOBS)):
        if len(grp) != len(profiles):
            continue   # a point not measured on every profile cannot be compared fairly
        med = grp.set_index("profile")["median_us"]
        row = dict(zip(KNOBS, (int(k) for k in knobs)))
        row["geomean_us"] = _geomean(med)
        if several:
            row["geomean_vs_tuned"] = _geomean(grp["vs_tuned"].astype(float))
        row["spread_pct"] = float(grp["spread_pct"].max())
        for p in profiles:
            row[f"{p}_us"] = float(med[p])
        first = grp.iloc[0]
        for col in ("registers", "blocks_per_sm", "theoretical_occupancy"):
            if col in grp:
                row[col] = first[col]
        rows.append(row)
    return pd.DataFrame(rows).sort_values(rank_column(table)).reset_index(drop=True)


def rank_column(table: pd.DataFrame) -> str:
    return "geomean_vs_tuned" if across_gpus(table) else "geomean_us"


def choose(table: pd.DataFrame) -> dict[str, int]:
    """The launch point l2attr defaults to: the best geometric mean over the profiles."""
    best = score(table).iloc[0]
    return {k: int(best[k]) for k in KNOBS}


def indistinguishable(scored: pd.DataFrame, key: str = "geomean_us") -> pd.Series:
    """Per row of `score(table)`: True when the point is the best, or slower than the best by less
    than the larger of the two points' run-to-run spreads (the table cannot tell them apart)."""
    best = scored.iloc[0]
    gap_pct = 100.0 * (scored[key] / best[key] - 1.0)
    return gap_pct <= scored["spread_pct"].clip(lower=best["spread_pct"])


def within_spread(table: pd.DataFrame, point: dict[str, int], scored: pd.DataFrame | None = None) -> bool:
    """`indistinguishable` for one point; False for a point not measured on every profile.
    `scored`: `score(table)`, when the caller already has it."""
    s = score(table) if scored is None else scored
    mine = (s[list(KNOBS)] == pd.Series(point)).all(axis=1)
    return bool(mine.any() and indistinguishable(s, rank_column(table))[mine].iloc[0])


# -- the table's contract (read whole or refused) --------------------------------------------------

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


def chosen_point(path: Path, damage: Damage | None = None) -> dict[str, int]:
    """The launch point a tuning table chooses, through the table's contract (a damaged or cut
    table is refused, never another choice)."""
    return choose(read_tuning(path, damage or Damage()))


# -- `l2attr ladder --tuning FILE` ---------------------------------------------------------------

def tuned_flags(path: Path | None, flags: dict[str, Any]) -> dict[str, Any]:
    """The ladder's flags given, with the fast family's launch options the table chooses
    (`ladder --tuning FILE`; `flags` by argparse dest, as LadderOptions.from_flags takes them).

    A --fast-* option given as well contradicts the table and is refused, as is a run without the
    fast family (the table chooses nothing for the others)."""
    from l2attr.dlrm.declare import parse_families
    from l2attr.vocab import Family

    if path is None:
        return flags
    given = [f"--{dest.replace('_', '-')}" for dest in LADDER_FLAGS.values() if dest in flags]
    if given:
        raise UserError(f"--tuning {path} chooses the fast family's launch point; drop {', '.join(given)}")
    family = flags.get("families")      # a flag's text, or an API caller's list
    if Family.FAST not in (family if isinstance(family, (list, tuple)) else parse_families(family)):
        raise UserError(f"--tuning {path} sets the fast family's launch point, but --family {family} "
                        "does not run the fast family")
    if not Path(path).is_file():
        raise UserError(f"--tuning {path}: {'not a file' if Path(path).exists() else 'no such file'}")
    from l2attr.dlrm.measure.kernels import FAST_UNROLLS

    point = chosen_point(Path(path))
    if point["unroll"] not in FAST_UNROLLS:
        raise UserError(f"--tuning {path}: its choice has unroll {point['unroll']}, which the fast kernel is "
                        f"not built for (one of {', '.join(map(str, FAST_UNROLLS))})")
    return {**flags, **{dest: int(point[knob]) for knob, dest in LADDER_FLAGS.items()}}
