"""Metric sets: per-chip selection, --metrics parsing, derived rates, query-metrics parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from l2attr.catalog import sets as catalog_sets
from l2attr.catalog import keys as mkeys
from l2attr.catalog import sets as msets
from l2attr.errors import UserError
from l2attr.profile import metricsets as ms

FIXTURES = Path(__file__).parent / "fixtures" / "ncu"

L2_NAMES = {
    "lts__t_sectors_lookup_hit.sum", "lts__t_sectors_lookup_miss.sum",
    "lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_read_lookup_miss.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__d_sectors_fill_device.sum",
    "gpu__time_duration.sum", "lts__t_sectors_aperture_device_evict_last_lookup_hit.sum",
    "lts__t_sectors_aperture_device_evict_last_lookup_miss.sum",
}


def test_a_total_fills_its_key_from_its_parts_only_where_not_collected():
    """evict_last = evict_last_lookup_hit + evict_last_lookup_miss for a call that did not collect
    it; a call that did keeps its own reading."""
    import pandas as pd

    from l2attr.analysis.calls import call_table

    hit, miss = "lts__t_sectors_aperture_device_evict_last_lookup_hit.sum", \
        "lts__t_sectors_aperture_device_evict_last_lookup_miss.sum"
    own = "lts__t_sectors_aperture_device_evict_last.sum"
    rows = []
    for table, metric, value in ((0, hit, 300.0), (0, miss, 700.0), (1, hit, 10.0), (1, miss, 20.0),
                                 (1, own, 31.0)):
        rows.append({"run": "r", "report": "x", "condition": "ladder", "role": "pin", "family": "tuned",
                     "rung": "l2p_optmt", "pin": "line", "profile": "random", "l2_state": "natural",
                     "table": table, "batch": 0, "kernel": "pin_l2_lines", "launch": table,
                     "metric": metric, "value": value})
    t = call_table(pd.DataFrame(rows)).sort_values("table")
    assert list(t["evict_last"]) == [1000.0, 31.0]


def test_uncollected_metric_stays_in_the_vocabulary():
    cat = mkeys.catalog()
    assert cat.key_of("lts__t_sectors_aperture_device_evict_last.sum") == "evict_last"
    assert "lts__t_sectors_aperture_device_evict_last.sum" not in msets.load_metric_set("l2", "gh100").metrics


@pytest.mark.parametrize("cc, chip", [((8, 0), "ga100"), ((9, 0), "gh100")])
def test_compute_capability_selects_chip(cc, chip):
    assert catalog_sets.chip_for_compute_capability(*cc) == chip


def test_unknown_compute_capability_lists_known_chips():
    with pytest.raises(UserError) as exc:
        catalog_sets.chip_for_compute_capability(8, 6)
    assert "8.6" in str(exc.value) and "ga100" in str(exc.value) and "gh100" in str(exc.value)
    assert "--chip" in str(exc.value)


@pytest.mark.parametrize("chip", ["ga100", "gh100"])
def test_l2_set_has_the_briefed_quantities_on_both_chips(chip):
    s = msets.load_metric_set("l2", chip)
    assert s.chip == chip
    assert set(s.metrics) == L2_NAMES
    assert len(s.metrics) == len(set(s.metrics))
    assert s.labels["dram__bytes_read.sum"] == "DRAM bytes read"
    assert all(spec.verified for spec in s.specs)


def test_l2_set_derives_rates_from_same_pass_counts():
    s = msets.load_metric_set("l2", "gh100")
    derived = {d.name: d for d in s.derived}
    assert set(derived) == {"derived:lts__t_sectors_hit_rate.pct", "derived:lts__t_sectors_op_read_hit_rate.pct",
                            "derived:lts__t_sectors_aperture_device_evict_last_hit_rate.pct"}
    d = derived["derived:lts__t_sectors_hit_rate.pct"]
    assert (d.hits, d.misses) == ("lts__t_sectors_lookup_hit.sum", "lts__t_sectors_lookup_miss.sum")
    assert d.compute(3, 1) == 75.0
    assert d.compute(0, 0) is None


def test_chip_without_a_name_skips_the_quantity(tmp_path):
    (tmp_path / "x.toml").write_text(
        'name = "x"\n[[metric]]\nkey = "a"\nlabel = "A"\nunit = "sector"\ngh100 = "lts__a.sum"\n'
        '[[metric]]\nkey = "b"\nlabel = "B"\nunit = "byte"\nga100 = "dram__b.sum"\ngh100 = "dram__b.sum"\n')
    assert msets.load_metric_set("x", "ga100", tmp_path).metrics == ["dram__b.sum"]
    assert msets.load_metric_set("x", "gh100", tmp_path).metrics == ["lts__a.sum", "dram__b.sum"]


def test_bad_set_file_is_a_user_error(tmp_path):
    (tmp_path / "bad.toml").write_text("name = \n")
    with pytest.raises(UserError, match="not valid TOML"):
        msets.load_metric_set("bad", "gh100", tmp_path)
    (tmp_path / "nolabel.toml").write_text('[[metric]]\nkey = "a"\ngh100 = "x__y.sum"\n')
    with pytest.raises(UserError, match="lacks label"):
        msets.load_metric_set("nolabel", "gh100", tmp_path)


def test_resolve_mixes_sets_and_raw_names_without_duplicates():
    s = ms.resolve_metrics("l2, dram__bytes_read.sum, sm__cycles_elapsed.avg,l2_tex", "gh100")
    assert s.metrics[: len(L2_NAMES)] == msets.load_metric_set("l2", "gh100").metrics
    assert s.metrics.count("dram__bytes_read.sum") == 1
    assert "sm__cycles_elapsed.avg" in s.metrics
    assert "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum" in s.metrics
    assert "derived:lts__t_sectors_srcunit_tex_op_read_hit_rate.pct" in {d.name for d in s.derived}


def test_resolve_refuses_unknown_sets_and_derived_names():
    with pytest.raises(UserError, match="unknown metric set 'l3'.*available: .*l2"):
        ms.resolve_metrics("l3", "gh100")
    with pytest.raises(UserError, match="computed by l2attr"):
        ms.resolve_metrics("derived:lts__t_sectors_hit_rate.pct", "gh100")
    with pytest.raises(UserError, match="empty"):
        ms.resolve_metrics(" , ", "gh100")
    with pytest.raises(UserError, match="unknown chip"):
        ms.resolve_metrics("l2", "gb200")


def test_raw_metric_detection():
    assert ms.is_raw_metric("dram__bytes_read.sum")
    assert not ms.is_raw_metric("l2")
    assert not ms.is_raw_metric("derived:lts__t_sectors_hit_rate.pct")


@pytest.mark.parametrize("chip", ["gh100", "ga100"])
def test_query_metrics_parser_on_captured_output(chip):
    text = (FIXTURES / f"query_metrics_{chip}_excerpt.txt").read_text()
    names = ms.parse_query_metrics(text)
    assert "lts__t_sectors_lookup_hit" in names
    assert "dram__bytes_read" in names
    # headers, rules, the chip line and wrapped description lines are not metrics
    assert not {"Metric", "Chip", chip, "(HMMA/HFMA2.MMA/HGMMA/QGMMA"} & names
    assert all("__" in n for n in names)
    assert ms.unknown_metrics(msets.load_metric_set("l2", chip).metrics, names) == []
    assert ms.unknown_metrics(["lts__bogus.sum", "profiler__replayer_passes"], names) == ["lts__bogus.sum"]


def test_query_metrics_parser_accepts_grouped_names():
    names = ms.parse_query_metrics((FIXTURES / "query_metrics_gh100_excerpt.txt").read_text())
    assert "CTC.TriageCompute.ctc__rx_bytes" in names and "ctc__rx_bytes" in names


def test_query_metrics_parser_older_two_column_format():
    text = ("Device NVIDIA A100\n-------- --------\nMetric Name   Metric Description\n"
            "-------- --------\ndram__bytes_read    # of bytes read from DRAM\n")
    assert ms.parse_query_metrics(text) == {"dram__bytes_read"}


def test_base_name():
    assert ms.base_name("lts__t_sector_hit_rate.pct") == "lts__t_sector_hit_rate"
    assert ms.base_name("sm__throughput.avg.pct_of_peak_sustained_elapsed") == "sm__throughput"
