"""Amortisation: speedup(k) = k*T_ref / (T_pin + k*T_cons) and the break-even call count."""

from __future__ import annotations

import math

import pytest
from helpers_rundirs import tiny_cells

from l2attr.analysis.amortise import amortised_speedup, break_even_calls, break_even_point
from l2attr.analysis.common import why
from l2attr.ladders.analyse.amortisation import amortisation_curve, amortisation_table
from l2attr.ladders.analyse.ladder import latency_ladder


def test_speedup_formula_by_hand() -> None:
    # T_ref 46.7, pin 16.2, consumer 44.5 (H200-like magnitudes, reuse_medium): k = 1 -> 46.7 / 60.7
    assert amortised_speedup(46.7, 16.2, 44.5, 1) == pytest.approx(46.7 / 60.7)
    # k = 8 -> 373.6 / (16.2 + 356.0) = 373.6 / 372.2
    assert amortised_speedup(46.7, 16.2, 44.5, 8) == pytest.approx(373.6 / 372.2)


def test_break_even_by_hand() -> None:
    # k* = 16.2 / (46.7 - 44.5) = 7.3636..., so 8 calls: speedup(7) < 1 <= speedup(8)
    assert break_even_point(46.7, 16.2, 44.5) == pytest.approx(16.2 / 2.2)
    assert break_even_calls(46.7, 16.2, 44.5) == 8
    assert amortised_speedup(46.7, 16.2, 44.5, 7) < 1 <= amortised_speedup(46.7, 16.2, 44.5, 8)


def test_exact_break_even_counts() -> None:
    # T_ref 50, pin 20, consumer 30: k* = 20 / 20 = 1 exactly, speedup(1) = 50 / 50 = 1
    assert break_even_calls(50, 20, 30) == 1
    # T_ref 40: k* = 20 / 10 = 2, speedup(2) = 80 / 80
    assert break_even_calls(40, 20, 30) == 2


def test_break_even_at_least_one_call() -> None:
    assert break_even_calls(100, 1, 10) == 1      # k* = 1/90


def test_never_when_consumer_gains_nothing() -> None:
    assert math.isinf(break_even_calls(30, 20, 30))
    assert math.isinf(break_even_calls(30, 20, 31))


def test_table_has_both_comparands_and_says_which_is_honest() -> None:
    lad = latency_ladder(tiny_cells({("baseline", "consumer"): 50.0, ("optmt", "consumer"): 40.0,
                                     ("l2p_optmt", "consumer"): 30.0, ("l2p_optmt", "pin"): 20.0}))
    table = amortisation_table(lad).set_index("comparand")
    assert table.loc["baseline", "break_even_calls"] == 1 and not table.loc["baseline", "honest"]
    assert table.loc["optmt", "break_even_calls"] == 2 and table.loc["optmt", "honest"]
    assert table.loc["optmt", "speedup_k1"] == pytest.approx(40 / 50)
    assert table.loc["optmt", "speedup_limit"] == pytest.approx(40 / 30)
    # combined vs rpf_optmt: neither measured -> no row at all
    assert "rpf_optmt" not in table.index


def test_missing_pin_gives_reason() -> None:
    lad = latency_ladder(tiny_cells({("optmt", "consumer"): 40.0, ("l2p_optmt", "consumer"): 30.0}))
    table = amortisation_table(lad)
    r = table[table["comparand"] == "optmt"].iloc[0]
    assert math.isnan(r["break_even_calls"]) and r["break_even"] == "n/a"
    assert "pin" in why(r, "break_even_calls")


def test_curve_tends_to_consumer_only_speedup() -> None:
    lad = latency_ladder(tiny_cells({("optmt", "consumer"): 40.0, ("l2p_optmt", "consumer"): 30.0,
                                     ("l2p_optmt", "pin"): 20.0}))
    curve = amortisation_curve(amortisation_table(lad), ks=(1, 2, 1000))
    assert list(curve["speedup"]) == pytest.approx([40 / 50, 80 / 80, 40000 / 30020])
