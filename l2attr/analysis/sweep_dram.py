"""DRAM bytes per point (sweep_dram.csv, written by `l2attr sweep --profile`): medians per
(family, profile, point, arm, role), added to a sweep's table as MiB per kernel call.

DRAM bytes, not hit rates, are the comparison that holds across profiles on the H200 (an L2 miss is
not a DRAM read: docs/facts.md#miss-is-not-dram): the pin's own DRAM read belongs beside the consumer's.
"""

from __future__ import annotations

import pandas as pd

MiB = 1 << 20


def medians(dram: pd.DataFrame | None) -> dict[tuple[str, str, str, str, str], float]:
    if dram is None or dram.empty:
        return {}
    g = dram.groupby(["family", "profile", "point", "arm", "role"])["dram_read_bytes"].median() / MiB
    return {tuple(str(x) for x in k): float(v) for k, v in g.items()}


def add_columns(table: pd.DataFrame, med: dict, columns: dict[str, tuple[str | None, str]]) -> pd.DataFrame:
    """columns: new column -> (arm, role); arm None = the row's own `arm`. Rows need family,
    profile, point (and arm when it is None). Nothing is added without DRAM data."""
    if not med or table.empty:
        return table
    table = table.copy()
    for column, (arm, role) in columns.items():
        table[column] = [med.get((r["family"], r["profile"], r["point"], arm or r["arm"], role), float("nan"))
                         for r in table.to_dict("records")]
    return table
