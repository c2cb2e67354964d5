"""What the report's study-wide sections show, as data for their templates (reports/sections/):
the kernel families side by side, the timeline, the caveats and the runs compared.

As in report/html_sections.py (the per-series sections): every number comes from l2attr.analysis,
every table is a tuple of columns (report/columns.py) that the Markdown page draws too.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from l2attr.analysis.common import is_missing
from l2attr.report.reads import AnalysisLike, SectionView
from l2attr.report import families as fam
from l2attr.report import fmt
from l2attr.report.columns import Cell, Column, Table, dash, key, num, number, plain, table, text, under
from l2attr.report.compare import pairs as compare_pairs, quantity_label
from l2attr.report.html_sections import EMPTY, Section, judged, says


# -- the kernel families side by side ----------------------------------------------------------

def _family_num(an: AnalysisLike, field: str, formatter: Any, good_above: float | None = None) -> Any:
    """A number of a family row; a dash with the reason as its tooltip when missing."""
    def cell(r: dict[str, Any]) -> Cell:
        if is_missing(r.get(field)):
            return dash(fam.why_missing(an, r, field), "num")
        return num(r, field, formatter, good_above)
    return cell


def _dram(an: AnalysisLike) -> Any:
    def cell(r: dict[str, Any]) -> Cell:
        if is_missing(r.get("dram_fraction")):
            return dash(fam.why_missing(an, r, "dram_fraction"), "num")
        read = r["dram_GBps"] / r["dram_fraction"] if r["dram_fraction"] else None
        return Cell(fam.dram_percent(r["dram_fraction"]), "num",
                    f"{fmt.gbps(r['dram_GBps'])} of {fmt.gbps(read)} measured read-only" if read else "")
    return cell


def family_columns(an: AnalysisLike) -> tuple[Column, ...]:
    us = (lambda v: f"{v:,.1f}")  # noqa: E731  (the unit is in the header)
    return (
        Column("Family", lambda r: Cell(r["title"], "key", strong="(headline)" if r["headline_family"] else "")),
        *under("Consumer without a pin",
               Column("name", lambda r: text(r["unpinned"])),
               Column("median, µs", _family_num(an, "consumer_us", us), "num"),
               Column("× tuned OptMT", _family_num(an, "vs_tuned", fmt.times), "num"),
               Column("DRAM, % of read-only HBM", _dram(an), "num")),
        *under("With the pin (L2P)",
               Column("consumer, µs",
                      lambda r: _family_num(an, "pinned_consumer_us", us)(r).but(title=r["pinned"]), "num"),
               Column("pin kernel, µs", _family_num(an, "pin_us", us), "num")),
        *under("Speedup of the pin",
               Column("pin charged", lambda r: _family_num(an, "pin_speedup_charged", fmt.times)(r) if is_missing(
                   r.get("pin_speedup_charged")) else judged("", "pin_speedup_charged",
                                                             "pin_judgement_charged").cell(r), "num"),
               Column("pin free", _family_num(an, "pin_speedup_consumer", fmt.times), "num")),
    )


def family_table(an: AnalysisLike, profile: str) -> Table:
    """One profile's families side by side: the card's table and the Markdown page's."""
    return table(family_columns(an), fam.rows(an, profile))


def families(an: SectionView) -> Section | None:
    """The three families per profile (study.families): a table per profile, its sentences."""
    if not fam.shown(an):
        return None
    per_profile = []
    for profile in fam.profiles(an):
        recs = fam.rows(an, profile)
        per_profile.append({
            "profile": profile,
            "table": family_table(an, profile),
            "sentences": [says(r["sentence"]) for r in recs],
        })
    return {"lead": fam.LEAD, "state": an.state, "measured": fam.families(an),
            "not_measured": fam.not_measured(an), "not_measured_what": fam.not_measured_text(an),
            "profiles": per_profile}


# -- whole study --------------------------------------------------------------------------------

PHASE_COLUMNS = (
    key("Phase", "phase"), number("start", "start_us", fmt.us), number("end", "end_us", fmt.us),
    number("duration", "duration_us", fmt.us), number("samples", "samples", fmt.count),
)


def timeline(an: SectionView) -> Section:
    tl, ph = an.timeline, an.phases
    if tl.empty:
        return EMPTY
    return {"empty": False, "sources": list(dict.fromkeys(tl["run"] + "/timeline.csv")),
            "phases": None if ph.empty else table(PHASE_COLUMNS, ph.assign(source=ph["run"] + "/phases.csv"))}


def gpu_spread_table(gpu_spread: pd.DataFrame) -> Table:
    return table(GPU_SPREAD_COLUMNS, gpu_spread)


def settings_table(settings: pd.DataFrame) -> Table:
    return table(SETTING_COLUMNS, settings)


def caveats(an: SectionView) -> Section:
    return {"caveats": an.caveats}


COMPARE_COLUMNS = (
    Column("Cell", lambda r: text("/".join(str(r[k]) for k in ("family", "rung", "pin", "profile", "l2_state")),
                                  "key")),
    Column("Quantity", lambda r: text(quantity_label(r["quantity"], r["timer"]))),
    number("median, used run", "used_median_us", fmt.us),
    number("median, other run", "median_us", fmt.us),
    number("difference", "diff_pct", fmt.pct_signed),
    number("larger repeat spread", "spread_pct", fmt.pct),
    Column("beyond the spread?", lambda r: text("—" if r["exceeds_spread"] is None else
                                                  "yes" if r["exceeds_spread"] else "no")),
)
SETTING_COLUMNS = (plain("Setting", "setting"), plain("used run", "used_value"), plain("other run", "value"))
GPU_SPREAD_COLUMNS = (
    Column("Cell", lambda r: text("/".join(str(r[k]) for k in ("family", "rung", "pin", "profile", "l2_state")),
                                  "key")),
    Column("Quantity", lambda r: text(quantity_label(r["quantity"], r["timer"]))),
    plain("GPUs", "n_gpus"),
    plain("median per GPU", "gpus"),
    number("spread (max - min) / median", "spread_pct", fmt.pct),
)


def compare(an: SectionView) -> Section | None:
    """Runs that measured the same cells (analysis.compare): per pair of runs, one sentence per
    timer (report.compare's wording), the settings in which they differ, every cell in a fold."""
    if an.compare.empty:
        return None
    pairs = [{"title": p.title, "sentences": p.sentences,
              "settings": settings_table(p.settings) if not p.settings.empty else None,
              "cells": table(COMPARE_COLUMNS, p.cells), "n": len(p.cells), "one_sided": p.one_sided}
             for p in compare_pairs(an)]
    gpus = gpu_spread_table(an.gpu_spread) if not an.gpu_spread.empty else None
    return {"pairs": pairs, "gpus": gpus}
