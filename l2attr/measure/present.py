"""Print a ladder (rows rungs, columns profiles) from a cells table: what `l2attr ladder` shows."""

from __future__ import annotations

import math

import pandas as pd
from rich.table import Table

from l2attr.ladder import LADDER_ORDER, RUNG_BY_NAME


def _median(cells: pd.DataFrame, rung: str, profile: str, quantity: str) -> float:
    m = cells[(cells.rung == rung) & (cells.profile == profile) & (cells.quantity == quantity)]
    return float(m.median_us.iloc[0]) if len(m) else math.nan


def ladder_table(cells: pd.DataFrame, title: str = "l2attr ladder") -> Table:
    """Consumer median (µs) per cell, with consumer-only / kernel-charged speedup vs baseline."""
    profiles = list(dict.fromkeys(cells.profile))
    rungs = [r for r in LADDER_ORDER if r in set(cells.rung)]
    table = Table(title=title, caption="consumer median µs  (consumer-only ×, pin-charged ×) vs baseline")
    table.add_column("rung")
    for p in profiles:
        table.add_column(p, justify="right")
    for rung in rungs:
        row = [RUNG_BY_NAME[rung].label]
        for p in profiles:
            cons = _median(cells, rung, p, "consumer")
            base = _median(cells, "baseline", p, "consumer")
            charged = _median(cells, rung, p, "kernels")
            if math.isnan(cons):
                row.append("—")
                continue
            text = f"{cons:.1f}"
            if not math.isnan(base) and rung != "baseline":
                text += f"  ({base / cons:.2f}×, {base / charged:.2f}×)"
            row.append(text)
        table.add_row(*row)
    return table
