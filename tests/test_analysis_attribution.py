"""Layer B: metric choice, median over kernels, the pin's effect, the hotness gradient, pin traffic."""

from __future__ import annotations

import math

import pytest
from helpers_rundirs import tiny_metrics

from l2attr.analysis import attribution
from l2attr.analysis.common import why

HIT = "lts__t_sector_hit_rate.pct"
DRAM = "dram__bytes_read.sum"


def cell(l2, rung, profile, role="consumer", condition="ladder"):
    hit = l2[(l2["rung"] == rung) & (l2["profile"] == profile) & (l2["role"] == role)
             & (l2["condition"] == condition)]
    assert len(hit) == 1
    return hit.iloc[0]


def test_median_over_kernels_and_n() -> None:
    m = tiny_metrics({("optmt", "random", "consumer"): [{HIT: 30.0, DRAM: 100.0}, {HIT: 34.0, DRAM: 300.0},
                                                         {HIT: 31.0, DRAM: 200.0}]})
    r = cell(attribution.l2_cells(m), "optmt", "random")
    assert r["hit_rate_pct"] == 31.0 and r["dram_read_bytes"] == 200.0 and r["n_kernels"] == 3
    assert r["source"] == "run-b/metrics.csv[ladder|consumer|optmt|random: 3 kernels]"


def test_count_based_rate_preferred_and_computed_per_kernel() -> None:
    hits, misses = "lts__t_sectors_lookup_hit.sum", "lts__t_sectors_lookup_miss.sum"
    # kernel rates 75 % and 50 %, median 62.5; the .pct metric (100.16, cross-pass) is not used
    m = tiny_metrics({("optmt", "random", "consumer"): [{hits: 3.0, misses: 1.0, HIT: 100.16},
                                                         {hits: 1.0, misses: 1.0, HIT: 100.16}]})
    r = cell(attribution.l2_cells(m), "optmt", "random")
    assert r["hit_rate_pct"] == pytest.approx(62.5)
    assert r["metric_used"]["hit_rate_pct"].startswith("100*lts__t_sectors_lookup_hit.sum")


def test_profile_writers_derived_rate_preferred_over_ncu_pct() -> None:
    m = tiny_metrics({("optmt", "random", "consumer"): [{"derived:lts__t_sectors_hit_rate.pct": 40.0, HIT: 45.0}]})
    assert cell(attribution.l2_cells(m), "optmt", "random")["hit_rate_pct"] == 40.0


def test_missing_metric_is_nan_with_reason() -> None:
    m = tiny_metrics({("optmt", "random", "consumer"): [{HIT: 30.0}]})
    r = cell(attribution.l2_cells(m), "optmt", "random")
    assert math.isnan(r["dram_read_bytes"]) and "not collected" in why(r, "dram_read_bytes")
    assert any("DRAM bytes read" in w for w in attribution.metric_warnings(m))


def test_all_zero_counter_is_missing_not_zero() -> None:
    m = tiny_metrics({("optmt", "random", "consumer"): [{HIT: 30.0, DRAM: 0.0}, {HIT: 31.0, DRAM: 0.0}]})
    r = cell(attribution.l2_cells(m), "optmt", "random")
    assert math.isnan(r["dram_read_bytes"]) and "zero on every" in why(r, "dram_read_bytes")
    assert any("zero on every profiled kernel" in w for w in attribution.metric_warnings(m))


def test_rates_outside_0_100_are_flagged() -> None:
    m = tiny_metrics({("optmt", "random", "consumer"): [{HIT: 100.16, DRAM: 1.0}, {HIT: 99.0, DRAM: 1.0}]})
    warnings = attribution.metric_warnings(m)
    assert any("1 of 2 kernels report a rate outside [0, 100]" in w for w in warnings)


def _grid():
    return tiny_metrics({
        ("optmt", "reuse_high", "consumer"): [{HIT: 88.0, DRAM: 12e6}],
        ("rpf_optmt", "reuse_high", "consumer"): [{HIT: 91.8, DRAM: 8e6}],
        ("l2p_optmt", "reuse_high", "consumer"): [{HIT: 91.7, DRAM: 7.8e6}],
        ("l2p_optmt", "reuse_high", "pin"): [{HIT: 5.0, DRAM: 31e6, "lts__t_sectors_aperture_device_evict_last.sum": 1.44e6}],
        ("optmt", "random", "consumer"): [{HIT: 30.0, DRAM: 144e6}],
        ("rpf_optmt", "random", "consumer"): [{HIT: 30.5, DRAM: 145e6}],
        ("l2p_optmt", "random", "consumer"): [{HIT: 31.0, DRAM: 140.4e6}],
    })


def test_pin_effect_hit_gain_and_dram_ratio() -> None:
    eff = attribution.pin_effect(attribution.l2_cells(_grid()))
    r = eff[(eff["profile"] == "reuse_high") & (eff["rung"] == "l2p_optmt")].iloc[0]
    assert r["hit_gain_pp"] == pytest.approx(3.7)                # 91.7 - 88.0
    assert r["dram_ratio"] == pytest.approx(7.8 / 12)            # 0.65
    assert r["dram_saved_bytes"] == pytest.approx(4.2e6)
    combined = eff[(eff["profile"] == "reuse_high") & (eff["rung"] == "combined")].iloc[0]
    assert math.isnan(combined["hit_gain_pp"]) and "not profiled" in why(combined, "hit_gain_pp")


def test_rpf_vs_l2p_at_the_l2_layer() -> None:
    cmp = attribution.rpf_vs_l2p(attribution.l2_cells(_grid())).set_index("profile")
    assert cmp.loc["reuse_high", "hit_gain_pp"] == pytest.approx(-0.1)     # 91.7 - 91.8
    assert cmp.loc["random", "dram_ratio"] == pytest.approx(140.4 / 145)


def test_hotness_gradient_hot_vs_random() -> None:
    g = attribution.hotness_gradient(attribution.l2_cells(_grid())).set_index("rung")
    assert g.loc["l2p_optmt", "hit_gap_pp"] == pytest.approx(60.7)         # 91.7 - 31.0
    assert g.loc["l2p_optmt", "dram_ratio"] == pytest.approx(18.0)         # 140.4 / 7.8
    assert g.loc["optmt", "hot_profile"] == "reuse_high"


def test_hotness_gradient_falls_back_to_hottest_measured_profile() -> None:
    m = tiny_metrics({("optmt", "reuse_medium", "consumer"): [{HIT: 60.0, DRAM: 40e6}],
                      ("optmt", "random", "consumer"): [{HIT: 30.0, DRAM: 144e6}]})
    g = attribution.hotness_gradient(attribution.l2_cells(m)).iloc[0]
    assert g["hot_profile"] == "reuse_medium" and g["hit_gap_pp"] == pytest.approx(30.0)


def test_pin_traffic_against_hot_set() -> None:
    config = {"hot_rows": 60_000, "dim": 128, "dtype": "fp32"}
    t = attribution.pin_traffic(attribution.l2_cells(_grid()), config).iloc[0]
    assert t["hot_set_bytes"] == 60_000 * 128 * 4                     # 30.72 MB
    assert t["dram_over_hot_set"] == pytest.approx(31e6 / 30.72e6)
    assert t["evict_last_sectors"] == 1.44e6


def test_no_metrics_means_empty_tables() -> None:
    import pandas as pd
    from l2attr.schema import METRICS, empty
    l2 = attribution.l2_cells(empty(METRICS).assign(run=pd.Series(dtype=object)))
    assert l2.empty
    assert attribution.pin_effect(l2).empty and attribution.hotness_gradient(l2).empty


def test_a_rate_outside_0_100_reaches_the_report_caveats(tmp_path) -> None:
    """ncu's .pct can exceed 100 when its inputs come from different passes: the report must say so."""
    from helpers_rundirs import metric_rows, write_profile_run

    from l2attr.analysis import analyse, load_runs

    rows = metric_rows({("optmt", "random", "consumer"): {HIT: 100.0, DRAM: 1e6}}, spread=(1.0, 1.0, 1.0, 1.0))
    rows.loc[rows["metric"] == HIT, "value"] = [100.16, 99.0, 98.0, 97.0]
    an = analyse(load_runs([write_profile_run(tmp_path, metrics=rows, control=None)]))
    assert any("1 of 4 kernels report a rate outside [0, 100]" in c.text for c in an.caveats)
    fine = rows.assign(value=rows["value"].where(rows["value"] <= 100, 100.0))
    an = analyse(load_runs([write_profile_run(tmp_path / "b", metrics=fine, control=None)]))
    assert not any("outside [0, 100]" in c.text for c in an.caveats)
