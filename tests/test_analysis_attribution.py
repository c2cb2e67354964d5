"""Layer B by metric key: per-call sums, rates from sums, medians over calls, the DRAM-first
attribution, the pin's effect, the gradient, pin traffic, and what the warnings say."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from helpers_rundirs import tiny_metrics

from l2attr.analysis import attribution, calls
from l2attr.analysis.common import why

RH, RM = "lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_read_lookup_miss.sum"
DRAM = "dram__bytes_read.sum"
PCT = "lts__t_sector_hit_rate.pct"


def cell(l2, rung, profile, role="consumer", condition="ladder"):
    hit = l2[(l2["rung"] == rung) & (l2["profile"] == profile) & (l2["role"] == role)
             & (l2["condition"] == condition)]
    assert len(hit) == 1
    return hit.iloc[0]


def k(hit_pct: float, dram: float, **extra: float) -> dict[str, float]:
    """One kernel's counters: read hits and misses giving `hit_pct`, and DRAM bytes."""
    return {RH: hit_pct * 100, RM: (100 - hit_pct) * 100, DRAM: dram, **extra}


def test_headline_rate_is_the_read_rate_from_the_toml():
    assert calls.headline_rate() == "read_hit_rate"
    assert calls.label("read_hit_rate") == "L2 read hit rate"


def test_median_over_calls_and_n() -> None:
    m = tiny_metrics({("optmt", "random", "consumer"): [k(30, 100.0), k(34, 300.0), k(31, 200.0)]})
    r = cell(calls.l2_cells(m), "optmt", "random")
    assert r["read_hit_rate"] == pytest.approx(31.0) and r["dram_read"] == 200.0 and r["n_calls"] == 3
    assert r["dram_read_min"] == 100.0 and r["dram_read_max"] == 300.0
    assert r["dram_read_spread_pct"] == pytest.approx(100.0)          # (300 - 100) / 200
    assert r["source"] == "run-b/metrics.csv[ladder|consumer|optmt|random: 3 calls]"


def test_a_call_of_several_kernels_sums_counts_before_the_rate() -> None:
    """torch's embedding_bag launches helpers: one call, two kernels, 90 % and 10 % of very
    different sizes -> (900 + 10) / (1000 + 100) = 82.7 %, not the mean of the rates (50 %)."""
    m = tiny_metrics({("torch", "random", "consumer"): [{RH: 900.0, RM: 100.0, DRAM: 5.0},
                                                         {RH: 10.0, RM: 90.0, DRAM: 7.0}]})
    m["batch"] = 0                                                    # both kernels in one NVTX call
    m["launch"] = m.groupby(["metric"]).cumcount()
    table = calls.call_table(m)
    assert len(table) == 1 and table.iloc[0]["kernels"] == 2
    assert table.iloc[0]["read_hit_rate"] == pytest.approx(910 / 1100 * 100)
    assert table.iloc[0]["dram_read"] == 12.0


def test_ncu_pct_rates_are_not_used_for_the_headline() -> None:
    m = tiny_metrics({("optmt", "random", "consumer"): [{**k(40, 1.0), PCT: 100.16}]})
    assert cell(calls.l2_cells(m), "optmt", "random")["read_hit_rate"] == pytest.approx(40.0)
    assert any("outside [0, 100]" in w for w in calls.metric_warnings(m))


def test_missing_metric_is_nan_with_reason() -> None:
    m = tiny_metrics({("optmt", "random", "consumer"): [{RH: 1.0, RM: 1.0}]})
    r = cell(calls.l2_cells(m), "optmt", "random")
    assert "dram_read" not in r.index or math.isnan(r["dram_read"])
    assert math.isnan(r["dram_read_spread_pct"])


def test_all_zero_counter_is_missing_not_zero() -> None:
    m = tiny_metrics({("optmt", "random", "consumer"): [k(30, 0.0), k(31, 0.0)]})
    r = cell(calls.l2_cells(m), "optmt", "random")
    assert math.isnan(r["dram_read"]) and "zero on every" in why(r, "dram_read")
    assert any("zero on every profiled call" in w for w in calls.metric_warnings(m))


def _grid():
    return tiny_metrics({
        ("optmt", "reuse_high", "consumer"): [k(88.0, 12e6)],
        ("rpf_optmt", "reuse_high", "consumer"): [k(91.8, 8e6)],
        ("l2p_optmt", "reuse_high", "consumer"): [k(91.7, 7.8e6, **{"lts__d_sectors_fill_device.sum": 2e5})],
        ("l2p_optmt", "reuse_high", "pin"): [k(5.0, 31e6, **{"lts__t_sectors_aperture_device_evict_last.sum": 1.44e6})],
        ("optmt", "random", "consumer"): [k(30.0, 144e6)],
        ("rpf_optmt", "random", "consumer"): [k(30.5, 145e6)],
        ("l2p_optmt", "random", "consumer"): [k(31.0, 140.4e6)],
    })


def test_dram_attribution_pin_plus_consumer_vs_unpinned() -> None:
    att = attribution.dram_attribution(calls.l2_cells(_grid()))
    r = att[(att["profile"] == "reuse_high") & (att["rung"] == "l2p_optmt")].iloc[0]
    assert r["pin_dram_read"] == 31e6 and r["consumer_dram_read"] == 7.8e6
    assert r["total_dram_read"] == 38.8e6 and r["unpinned_dram_read"] == 12e6
    assert r["extra_dram_read"] == pytest.approx(26.8e6)
    assert r["total_over_unpinned"] == pytest.approx(38.8 / 12)
    assert r["consumer_read_hit_rate"] == pytest.approx(91.7) and r["unpinned_read_hit_rate"] == pytest.approx(88.0)
    assert r["pin_evict_last"] == 1.44e6 and r["consumer_fill_device"] == 2e5
    random = att[(att["profile"] == "random") & (att["rung"] == "l2p_optmt")].iloc[0]
    assert math.isnan(random["total_dram_read"]) and "not profiled" in random["missing"]["total_dram_read"]


def test_pin_effect_hit_gain_and_dram_ratio() -> None:
    eff = attribution.pin_effect(calls.l2_cells(_grid()))
    r = eff[(eff["profile"] == "reuse_high") & (eff["rung"] == "l2p_optmt")].iloc[0]
    assert r["hit_gain_pp"] == pytest.approx(3.7) and r["dram_ratio"] == pytest.approx(7.8 / 12)
    combined = eff[(eff["profile"] == "reuse_high") & (eff["rung"] == "combined")].iloc[0]
    assert math.isnan(combined["hit_gain_pp"]) and "not profiled" in combined["missing"]["hit_gain_pp"]


def test_rpf_vs_l2p_at_the_l2_layer() -> None:
    cmp = attribution.rpf_vs_l2p(calls.l2_cells(_grid())).set_index("profile")
    assert cmp.loc["reuse_high", "hit_gain_pp"] == pytest.approx(-0.1)
    assert cmp.loc["random", "dram_saved_bytes"] == pytest.approx(4.6e6)


def test_hotness_gradient_hot_vs_random() -> None:
    g = attribution.hotness_gradient(calls.l2_cells(_grid())).set_index("rung")
    assert g.loc["optmt", "hit_gap_pp"] == pytest.approx(58.0)
    assert g.loc["optmt", "dram_ratio"] == pytest.approx(12.0)


def test_pin_traffic_against_hot_set() -> None:
    config = {"hot_rows": 60_000, "dim": 128, "dtype": "fp32"}
    t = attribution.pin_traffic(calls.l2_cells(_grid()), config).iloc[0]
    assert t["hot_set_bytes"] == 60_000 * 128 * 4
    assert t["dram_over_hot_set"] == pytest.approx(31e6 / 30.72e6)
    assert t["evict_last"] == 1.44e6


def test_empty_metrics_give_empty_tables() -> None:
    from l2attr.schema import METRICS, empty

    l2 = calls.l2_cells(empty(METRICS).assign(run=pd.Series(dtype=object)))
    assert l2.empty
    assert attribution.pin_effect(l2).empty and attribution.hotness_gradient(l2).empty
    assert attribution.dram_attribution(l2).empty
