"""Layer B as text: the one wording of the consumer grid, the DRAM lines and the control.

`l2attr profile` prints them, the Markdown report and the README's results carry them: every
place calls these functions on analysis.attribution's tables, so one cell reads the same
everywhere (one hit-rate definition, one aggregation, one rounding).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from l2attr.analysis.attribution import dram_attribution
from l2attr.analysis.calls import headline_rate, label
from l2attr.dlrm.declare import PROFILES, RUNGS
from l2attr.vocab import Condition, Family, Role, RungId


def _ok(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def consumer_cell(row: pd.Series | dict[str, Any]) -> str:
    """'82.0 % / 7.7 MB': the headline hit rate and DRAM bytes read per call (medians over calls)."""
    hit, dram = row.get(headline_rate()), row.get("dram_read")
    return (f"{f'{hit:.1f} %' if _ok(hit) else 'n/a'} / "
            f"{f'{dram / 1e6:.1f} MB' if _ok(dram) else 'n/a'}")


def grid_title() -> str:
    return f"consumer per call: {label(headline_rate())} / DRAM read (median over calls)"


def consumer_grid(l2: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """(profiles, rows of [rung, cell per profile]) for the ladder condition's consumer cells.

    Empty unless a pinned rung was profiled: a series whose pin was never profiled (the tuned
    family with the element pin, say) shares only its unpinned rungs with another series, and
    a grid of those would pass for its own layer B."""
    if l2.empty:
        return [], []
    grid = l2[(l2["role"] == Role.CONSUMER) & (l2["condition"] == Condition.LADDER)]
    if not any(r.pins for r in RUNGS if r.name in set(grid["rung"])):
        return [], []
    profiles = [p for p in PROFILES if p in set(grid["profile"])]
    rows = []
    for rung in [r.name for r in RUNGS if r.name in set(grid["rung"])]:
        cells = []
        for p in profiles:
            hit = grid[(grid["rung"] == rung) & (grid["profile"] == p)]
            cells.append("-" if hit.empty else consumer_cell(hit.iloc[0]))
        rows.append([rung, *cells])
    return profiles, rows


def dram_lines(l2: pd.DataFrame) -> list[str]:
    """One line per profile: what pin + consumer read from DRAM per call against OptMT alone."""
    att = dram_attribution(l2)
    alone = "OptMT"
    if not l2.empty and "family" in l2.columns:   # the family's own name for its OptMT slot
        from l2attr.study.families import rung_name

        families = set(l2["family"].astype(str)) - {Family.REFERENCE.value}
        if len(families) == 1:
            alone = rung_name(families.pop(), RungId.OPTMT)
    out = []
    for rec in att.to_dict("records") if not att.empty else []:
        if rec["rung"] != RungId.L2P_OPTMT or not _ok(rec["total_dram_read"]) or not _ok(rec["unpinned_dram_read"]):
            continue
        out.append(f"{rec['profile']}: pin {rec['pin_dram_read'] / 1e6:.1f} MB + consumer "
                   f"{rec['consumer_dram_read'] / 1e6:.1f} MB = {rec['total_dram_read'] / 1e6:.1f} MB DRAM "
                   f"per call vs {rec['unpinned_dram_read'] / 1e6:.1f} MB for {alone} alone")
    return out
