"""Print a ladder (rows rungs, columns profiles) from a cells table: what `l2attr ladder` shows.

The numbers come from l2attr.analysis.ladder, the same code the report uses.
"""

from __future__ import annotations

import math

import pandas as pd
from rich.table import Table

from l2attr.analysis.ladder import latency_ladder
from l2attr.ladder import LADDER_ORDER, RUNG_BY_NAME


def ladder_table(cells: pd.DataFrame, title: str = "l2attr ladder") -> Table:
    """Consumer median (µs) per cell, with consumer-only / pin-charged speedup vs baseline."""
    ladder = latency_ladder(cells)
    profiles = list(dict.fromkeys(cells.profile))
    rungs = [r for r in LADDER_ORDER if r in set(cells.rung)]
    table = Table(title=title,
                  caption="consumer median µs  (consumer-only ×, pin-charged ×) vs baseline")
    table.add_column("rung")
    for p in profiles:
        table.add_column(p, justify="right")
    for rung in rungs:
        row = [RUNG_BY_NAME[rung].label]
        for p in profiles:
            hit = ladder[(ladder.rung == rung) & (ladder.profile == p)]
            cons = float(hit.consumer_us.iloc[0]) if len(hit) else math.nan
            if math.isnan(cons):
                row.append("—")
                continue
            text = f"{cons:.1f}"
            speedups = (float(hit.speedup_consumer.iloc[0]), float(hit.speedup_kernels.iloc[0]))
            if rung != "baseline" and not any(math.isnan(s) for s in speedups):
                text += f"  ({speedups[0]:.2f}×, {speedups[1]:.2f}×)"
            row.append(text)
        table.add_row(*row)
    return table
