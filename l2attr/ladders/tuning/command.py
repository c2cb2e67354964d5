"""Read a fast-family tuning table (benchmarks/tune_fast.py's fast_tuning.csv): the launch point
it chooses, the best point of each profile with its run-to-run spread, the points it cannot tell
from the choice, and how l2attr's defaults stand against it. Read whole or refused (damaged rows,
a cut file): a damaged table would choose another launch point without a word.

examples:
  l2attr tuning examples/tuning/fast_tuning.csv
  l2attr ladder --family fast --tuning examples/tuning/fast_tuning.csv   # run the table's choice
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.errors import Damage, UserError
from l2attr.ladders.tuning.table import LADDER_FLAGS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("table", type=Path, metavar="FILE", help="a tuning table (fast_tuning.csv)")
    p.add_argument("--allow-partial", action="store_true",
                   help="read a damaged table: leave its bad rows out and say so first (the choice is "
                        "then made from what is left)")
    p.add_argument("--top", type=int, default=5, help="points listed that the table cannot tell from "
                                                      "the choice (default 5)")


def point_text(point: dict[str, Any]) -> str:
    return ", ".join(f"{k} {int(point[k])}" for k in LADDER_FLAGS)


def ladder_flags(point: dict[str, Any]) -> str:
    return " ".join(f"--{LADDER_FLAGS[k].replace('_', '-')} {int(point[k])}" for k in LADDER_FLAGS)


def describe(table: pd.DataFrame, name: str, top: int) -> list[str]:
    """The lines `l2attr tuning` prints for a table that passed its contract."""
    from l2attr.dlrm.declare import FAST_DEFAULT
    from l2attr.ladders.tuning.table import KNOBS, indistinguishable, score, within_spread

    scored = score(table)
    profiles = sorted(table["profile"].astype(str).unique())
    best = {k: int(scored.iloc[0][k]) for k in KNOBS}     # choose(table), without scoring twice
    first = scored.iloc[0]
    lines = [f"{name}: {len(scored)} launch points x {len(profiles)} profiles ({', '.join(profiles)})",
             f"chosen (smallest geometric mean of the consumer medians over the profiles): {point_text(best)}",
             f"  geometric mean {first['geomean_us']:.2f} us, largest per-repeat spread {first['spread_pct']:.1f} %"]
    for p in profiles:
        row = table[(table["profile"].astype(str) == p)
                    & (table[list(KNOBS)] == pd.Series(best)).all(axis=1)].iloc[0]
        lines.append(f"  {p}: median {row['median_us']:.2f} us, per-repeat spread {row['spread_pct']:.1f} %")
    lines.append("best point of each profile:")
    for p in profiles:
        mine = table[table["profile"].astype(str) == p].sort_values("median_us").iloc[0]
        lines.append(f"  {p}: {point_text(mine)}: median {mine['median_us']:.2f} us, "
                     f"per-repeat spread {mine['spread_pct']:.1f} %")
    ties = scored[indistinguishable(scored)].iloc[1:].to_dict("records")
    lines.append(f"{len(ties)} other points are slower than the choice by less than the larger of the two "
                 "spreads (the table cannot order them)" + (":" if ties else ""))
    for r in ties[:top]:
        gap = 100.0 * (r["geomean_us"] / first["geomean_us"] - 1.0)
        lines.append(f"  {point_text(r)}: geometric mean {r['geomean_us']:.2f} us (+{gap:.1f} %)")
    default = {k: getattr(FAST_DEFAULT, k) for k in KNOBS}
    if default == best:
        stand = "the table's choice"
    elif within_spread(table, default, scored):
        stand = "not the choice, but one the table cannot tell from it"
    elif ((scored[list(KNOBS)] == pd.Series(default)).all(axis=1)).any():
        stand = "slower than the choice by more than the spreads: this table would change the defaults"
    else:
        stand = "not measured on every profile of this table"
    lines.append(f"l2attr's defaults ({point_text(default)}): {stand}")
    lines.append(f"run the choice: l2attr ladder --family fast --tuning {name}  (or {ladder_flags(best)})")
    return lines


def run(args: argparse.Namespace) -> int:
    from l2attr.ladders.tuning.table import read_tuning

    if args.top < 0:
        raise UserError(f"--top must be >= 0, got {args.top}")
    if not args.table.is_file():
        raise UserError(f"{args.table}: {'not a file' if args.table.exists() else 'no such file'}")
    damage = Damage(args.allow_partial)
    table = read_tuning(args.table, damage)
    if table.empty:
        raise UserError(f"{args.table}: no launch point left to choose from")
    for note in damage.messages:
        print(f"PARTIAL (--allow-partial): {note}; the choice below is made without those rows")
    for line in describe(table, str(args.table), args.top):
        print(line)
    sys.stdout.flush()
    return 0
