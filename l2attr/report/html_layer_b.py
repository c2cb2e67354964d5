"""The L2 attribution section (layer B) as data for reports/sections/attribution.html.j2.

Each table is None where its rows were not profiled; the template then says so.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from l2attr.analysis import calls as lb
from l2attr.analysis.common import is_missing
from l2attr.report.reads import SectionView
from l2attr.report import fmt
from l2attr.report.columns import Column, Table, key, metric, number, plain, rung, sources_of, table, text, under
from l2attr.report.html_sections import EMPTY, Section
from l2attr.vocab import Role


def _table(columns: Sequence[Column], df: pd.DataFrame) -> Table | None:
    return None if df.empty else table(columns, df)


def _times(x: float) -> str:
    return f"{x:.1f}×"


def _read_peak(df: pd.DataFrame, name: str) -> str:
    value = df.iloc[0][name] if not df.empty else None
    return "not measured" if is_missing(value) else fmt.gbps(value)


def attribution(an: SectionView) -> Section:
    if an.l2.empty:
        return EMPTY
    rate = lb.headline_rate()
    rate_label = lb.label(rate)
    dram = (
        key("Profile"), rung("Pinning rung"),
        *under("DRAM bytes read per call",
               number(Role.PIN.value, "pin_dram_read", fmt.nbytes),
               number(Role.CONSUMER.value, "consumer_dram_read", fmt.nbytes),
               number("pin + consumer", "total_dram_read", fmt.nbytes),
               number("unpinned consumer", "unpinned_dram_read", fmt.nbytes),
               number("total / unpinned", "total_over_unpinned", fmt.ratio),
               number("consumer / unpinned", "consumer_over_unpinned", fmt.ratio)),
        *under("sectors", number("consumer L2 fills", "consumer_fill_device", fmt.sectors),
               number("consumer fabric", "consumer_fabric", fmt.sectors)),
        *under(rate_label, number(Role.CONSUMER.value, f"consumer_{rate}", fmt.pct),
               number("unpinned", f"unpinned_{rate}", fmt.pct)),
    )
    evict = (
        key("Profile"), rung("Pinning rung"),
        number("sectors the pin marks evict_last", "pin_evict_last", fmt.sectors),
        number("sectors the pin fills from DRAM", "pin_fill_device", fmt.sectors),
        number("consumer hits on evict_last (share)", f"consumer_{lb.EVICT_LAST_SHARE}", fmt.pct),
    )
    measured = (
        key("Profile"), rung(), number("ncu duration", "duration_us", fmt.us),
        number("DRAM read", "dram_GBps", fmt.gbps), number("of HBM read peak", "dram_fraction", fmt.ratio),
        number("L2 delivered", "l2_GBps", fmt.gbps), number("of L2 read peak", "l2_fraction", fmt.ratio),
    )
    compare = (
        key("Profile"), rung(), rung("Comparand", "comparand"),
        *under("Consumer L2 hit rate",
               number("hit rate", "hit_rate_pct", fmt.pct), number("comparand", "comparand_hit_rate_pct", fmt.pct),
               number("gain", "hit_gain_pp", fmt.pp, 0.0)),
        *under("Consumer DRAM bytes",
               number("DRAM read", "dram_read_bytes", fmt.nbytes),
               number("comparand", "comparand_dram_read_bytes", fmt.nbytes), number("ratio", "dram_ratio", fmt.ratio)),
    )
    gradient = (
        rung(), Column("Hot → cold", lambda r: text(f"{r['hot_profile'] or 'n/a'} → {r['cold_profile'] or 'n/a'}")),
        number("hit rate hot", "hot_hit_rate_pct", fmt.pct), number("cold", "cold_hit_rate_pct", fmt.pct),
        number("gap", "hit_gap_pp", fmt.pp), number("DRAM hot", "hot_dram_read_bytes", fmt.nbytes),
        number("cold", "cold_dram_read_bytes", fmt.nbytes), number("cold / hot", "dram_ratio", _times),
    )
    pin = (
        rung(), plain("Profile", "profile"), number("calls", "n_calls", fmt.count),
        metric("dram_read", "DRAM read"), number("hot set", "hot_set_bytes", fmt.nbytes),
        number("read / hot set", "dram_over_hot_set", lambda x: f"{x:.2f}×"),
        metric("fill_device", "L2 fills (sectors)"), metric("evict_last", "evict_last sectors"),
        metric("duration", "duration (ncu)"),
    )
    cells = (
        plain("Condition", "condition"), plain("Role", "role"), rung(), plain("Profile", "profile"),
        number("calls", "n_calls", fmt.count), metric(rate),
        metric("hit_rate", "hit rate, all ops"), metric("dram_read", "DRAM read"),
        number("DRAM spread over calls", "dram_read_spread_pct", fmt.pct),
        metric("dram_write", "DRAM write"), metric("fill_device", "L2 fills"),
        metric("fabric", "fabric"), metric("evict_last", "evict_last"), metric("duration", "duration"),
    )
    return {
        "empty": False, "rate": rate, "rate_label": rate_label, "sources": sources_of(an.l2, "metrics.csv"),
        "dram": _table(dram, an.dram),
        "evict": _table(evict, an.dram),
        "measured_roofline": _table(measured, an.measured_roofline),
        "hbm_read": _read_peak(an.measured_roofline, "hbm_read_GBps"),
        "l2_read": _read_peak(an.measured_roofline, "l2_read_GBps"),
        "pin_effect": _table(compare, an.pin_effect),
        "rpf_vs_l2p": _table(compare, an.rpf_vs_l2p),
        "gradient": _table(gradient, an.gradient),
        "pin_traffic": _table(pin, an.pin_traffic),
        "cells": _table(cells, an.l2),
    }

