"""What `l2attr ladder` prints beside the files it writes: rich tables of analysed numbers.

The ladder (rows rungs, columns profiles, one table per series), the break-even lines and the
spread lines. The numbers come from the ladder's analyse/ and l2attr.analysis, the same code the
report uses; only the layout is here.
"""

from __future__ import annotations

import math

import pandas as pd
from rich.table import Table

from l2attr.ladders.analyse.ladder import latency_ladder
from l2attr.analysis.series import find_series, series_frame
from l2attr.dlrm.declare import LADDER_ORDER, RUNG_BY_NAME
from l2attr.vocab import Quantity, RungId


def ladder_tables(cells: pd.DataFrame) -> list[Table]:
    """One table per series (family x pin granularity), the headline family first."""
    return [ladder_table(series_frame(cells, s), f"l2attr ladder · {s.title}") for s in find_series(cells)]


def ladder_table(cells: pd.DataFrame, title: str = "l2attr ladder") -> Table:
    """Consumer median (µs) per cell, with speedups vs baseline: pin free (artifact's timer) and
    pin charged (pin + consumer kernels)."""
    ladder = latency_ladder(cells)
    profiles = list(dict.fromkeys(cells.profile))
    rungs = [r for r in LADDER_ORDER if r in set(cells.rung)]
    table = Table(title=title,
                  caption="consumer kernel median µs  (× vs baseline: artifact's timer, pin free / "
                          "pin + consumer kernels, pin charged)")
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
            if rung != RungId.BASELINE and len(hit):
                free, charged = float(hit.speedup_artifact.iloc[0]), float(hit.speedup_kernels.iloc[0])
                shown = [f"{x:.2f}×" if not math.isnan(x) else "—" for x in (free, charged)]
                text += f"  ({shown[0]} / {shown[1]})"
            row.append(text)
        table.add_row(*row)
    return table


def break_even_lines(cells: pd.DataFrame, samples: pd.DataFrame) -> list[str]:
    """Per series and profile: the calls one pin must serve against OptMT, kernel-charged and
    wall-charged (the pin step's host launch + sync, per call), with that charge (analysis)."""
    from l2attr.ladders.analyse.amortisation import amortisation_table
    from l2attr.ladders.analyse.charges import host_charges, with_charges

    lines = []
    for s in find_series(cells):
        bare = latency_ladder(series_frame(cells, s))
        ladder = with_charges(bare, host_charges(series_frame(samples, s), bare))
        am = amortisation_table(ladder)
        if am.empty:
            continue
        mine = am[(am["rung"] == RungId.L2P_OPTMT) & (am["comparand"] == RungId.OPTMT)]
        said = [f"{r['profile']} {r['break_even']} / {r['break_even_wall']}"
                + (f" ({r['pin_host_us']:.1f} µs)" if not math.isnan(r["pin_host_us"]) else "")
                for r in mine.to_dict("records")]
        if said:
            lines.append(f"{s.title}: calls per pin to break even vs OptMT, kernel-charged / wall-charged "
                         f"(the pin step's host launch + sync per call): " + "; ".join(said))
    return lines


def spread_lines(samples: pd.DataFrame) -> list[str]:
    """Per kernel-timed quantity: analysis.spread.spread_summary in a line, with the repeats the
    cells actually took (an adaptive run stops each on its own, so the count is a range) and the
    one-repeat cells named, not counted as 0 %."""
    from l2attr.analysis.spread import TIMED_COLUMNS, spread_summary

    summary = spread_summary(samples)
    rows = summary.set_index("timer").to_dict("index") if not summary.empty else {}
    lines = []
    for what, column in ((Quantity.CONSUMER, "consumer_time_us"), (Quantity.PIN, "pin_time_us")):
        label = next(k for k, v in TIMED_COLUMNS.items() if v == column)
        r = rows.get(label)
        if r is None:
            if column in samples and samples[column].notna().any():
                lines.append(f"spread of {what} medians between repeats (this process): none, every cell took one repeat")
            continue
        lo, hi = r["min_repeats"], r["repeats"]
        taken = f"{lo} repeats" if lo == hi else f"{lo}–{hi} repeats per cell"
        cells = r["cells"] + r["single_cells"]
        alone = (f"; {r['single_cells']} of {cells} cells took one repeat: no spread of their own"
                 if r["single_cells"] else "")
        lines.append(f"spread of {what} medians between {taken} (this process{alone}): "
                     f"median {r['median_spread_pct']:.2f} %, worst {r['worst_spread_pct']:.2f} % "
                     f"({r['worst_cell']}, {r['worst_repeats']} repeats)")
    return lines
