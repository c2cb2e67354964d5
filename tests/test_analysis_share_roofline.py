"""L2 share of step time and roofline fractions, by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from helpers_rundirs import tiny_cells

from l2attr.analysis.common import why
from l2attr.ladders.analyse.ladder import latency_ladder
from l2attr.ladders.analyse.roofline import roofline_fractions
from l2attr.ladders.analyse.share import l2_share_of_step

MEDIANS = {("optmt", "consumer"): 40.0, ("optmt", "call"): 50.0,
           ("l2p_optmt", "consumer"): 35.0, ("l2p_optmt", "pin"): 15.0, ("l2p_optmt", "call"): 70.0}


def test_share_consumer_only_and_charged() -> None:
    r = l2_share_of_step(latency_ladder(tiny_cells(MEDIANS))).iloc[0]
    assert r["t_step_us"] == 50.0                                    # OptMT call wall
    assert r["share_consumer_pct"] == pytest.approx(10.0)            # (40 - 35) / 50
    assert r["share_charged_pct"] == pytest.approx(-20.0)            # (40 - 50) / 50
    assert r["share_wall_pct"] == pytest.approx(-40.0)               # (50 - 70) / 50


def test_share_without_step_time_is_missing() -> None:
    medians = {k: v for k, v in MEDIANS.items() if k != ("optmt", "call")}
    r = l2_share_of_step(latency_ladder(tiny_cells(medians))).iloc[0]
    assert math.isnan(r["share_consumer_pct"]) and "T_step" in why(r, "share_consumer_pct")


def test_roofline_uses_achieved_column_or_bytes_over_median() -> None:
    given = tiny_cells({("optmt", "consumer"): 40.0}, achieved_GBps=2000.0, bytes_per_call=1.0)
    derived = tiny_cells({("baseline", "consumer"): 50.0}, bytes_per_call=150e6)   # 150 MB / 50 us = 3000 GB/s
    roof = roofline_fractions(pd.concat([given, derived]), 4000.0).set_index("rung")
    assert roof.loc["optmt", "fraction"] == pytest.approx(0.5)
    assert roof.loc["optmt", "achieved_basis"] == "cells.csv achieved_GBps"
    assert roof.loc["baseline", "achieved_GBps"] == pytest.approx(3000.0)
    assert roof.loc["baseline", "fraction"] == pytest.approx(0.75)


def test_roofline_without_copy_bandwidth_is_missing() -> None:
    roof = roofline_fractions(tiny_cells({("optmt", "consumer"): 40.0}, achieved_GBps=2000.0), None)
    r = roof.iloc[0]
    assert math.isnan(r["fraction"]) and "hbm_copy_GBps" in why(r, "fraction")
