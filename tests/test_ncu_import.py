"""Reading .ncu-rep files into the METRICS table: values identical to what ncu_report returns."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from conftest import KERNEL_REPLAY_REPORT

from l2attr.errors import UserError
from l2attr.profile.ncu_file import check_complete_report
from l2attr.profile.ncu_import import control_condition, csv_order, quality_warnings, read_report
from l2attr.schema import METRICS

APP_REPORT = Path(__file__).parent / "fixtures" / "ncu" / "pin_consume_app_replay_h200.ncu-rep"


def _direct(path: Path) -> list[dict]:
    """Every action straight from ncu_report: name, innermost range, metric values and units."""
    import ncu_report

    ctx = ncu_report.load_report(str(path))
    out = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            act = rng.action_by_idx(a)
            state = act.nvtx_state()
            ranges = [x for d in state.domains() for x in state.domain_by_id(d).push_pop_ranges()]
            metrics = {n: (act.metric_by_name(n).as_double(), act.metric_by_name(n).unit())
                       for n in act.metric_names()
                       if act.metric_by_name(n).kind() != ncu_report.IMetric.ValueKind_STRING}
            out.append({"kernel": act.name(), "range": ranges[-1] if ranges else "", "metrics": metrics})
    return out


_CACHE: dict = {}


def _read_once(path: Path, **kw):
    """Reading starts a child process: once per file and options is enough."""
    key = (path, tuple(sorted(kw.items())))
    if key not in _CACHE:
        _CACHE[key] = read_report(path, **kw)
    return _CACHE[key]


@pytest.fixture
def shared_table():
    """The kernel-replay report with the older range names (fixtures/ncu/README.md)."""
    return KERNEL_REPLAY_REPORT, _read_once(KERNEL_REPLAY_REPORT)


@pytest.fixture
def app_table():
    return _read_once(APP_REPORT, condition=control_condition)


def test_brief_values_of_the_shared_fixture(shared_table):
    _, res = shared_table
    df = res.table
    consumer = df[(df["nvtx_range"] == "l2attr:consumer:nopin") & (df["metric"] == "dram__bytes_read.sum")]
    assert consumer["value"].tolist() == [57602048.0]
    assert consumer["unit"].tolist() == ["byte"]
    pin = df[(df["role"] == "pin") & (df["metric"] == "lts__t_sectors_aperture_device_evict_last.sum")]
    assert pin["value"].tolist() == [1438544.0]
    assert pin["unit"].tolist() == ["sector"]
    assert res.chip == "gh100"


def test_every_value_equals_ncu_report(shared_table):
    path, res = shared_table
    df = res.table
    direct = _direct(path)
    assert df["launch"].nunique() == len(direct)
    for launch, act in enumerate(direct):
        rows = df[(df["launch"] == launch) & ~df["metric"].str.startswith("derived:")]
        assert set(rows["kernel"]) == {act["kernel"]}
        assert set(rows["nvtx_range"]) == {act["range"]}
        for _, row in rows.iterrows():
            assert (row["value"], row["unit"]) == act["metrics"][row["metric"]]


def test_schema_columns_and_legacy_names(shared_table):
    _, res = shared_table
    df = res.table
    assert list(df.columns[: len(METRICS.columns)]) == list(METRICS.columns)
    by_range = df.drop_duplicates("launch").set_index("nvtx_range")
    assert by_range.loc["l2attr:pin", "role"] == "pin"
    assert by_range.loc["l2attr:consumer:pin", "role"] == "consumer"
    assert by_range.loc["l2attr:consumer:nopin", "role"] == "consumer"
    assert set(df["cell"]) == {""} and set(df["rung"]) == {""} and df["table"].isna().all()
    assert set(df["condition"]) == {"ladder"}


def test_attribute_noise_and_rollups_are_skipped_by_default(shared_table):
    path, res = shared_table
    metrics = set(res.table["metric"])
    assert not any(m.startswith(("device__", "launch__", "nvlink__", "numa__")) for m in metrics)
    assert "profiler__replayer_passes" in metrics
    assert "dram__bytes_read.sum" in metrics and "dram__bytes_read.avg" not in metrics
    everything = read_report(path, keep_all=True).table
    assert "device__attribute_l2_cache_size" in set(everything["metric"])
    assert "dram__bytes_read.avg" in set(everything["metric"])
    # string attributes are never rows
    assert "device__attribute_display_name" not in set(everything["metric"])
    asked = read_report(path, keep=["launch__grid_size", "dram__bytes_read.max"]).table
    assert {"launch__grid_size", "dram__bytes_read.max"} <= set(asked["metric"])


def test_in_process_reader_gives_the_same_table(shared_table):
    path, res = shared_table
    pd.testing.assert_frame_equal(read_report(path, isolate=False).table, res.table)


def test_all_zero_hit_miss_pair_is_a_warning_not_a_rate(shared_table):
    _, res = shared_table
    assert not res.table["metric"].str.startswith("derived:").any()
    assert any("srcunit_l1_op_read" in w and "zero on every kernel" in w for w in res.warnings)


def test_current_range_names_fill_the_identity_columns(app_table):
    df = app_table.table
    first = df.drop_duplicates("launch").sort_values("launch")
    assert len(first) == 8
    row = first[first["nvtx_range"] == "l2attr:consumer:l2p_optmt:reuse_high:flush_after_pin:t1:b0"].iloc[0]
    assert (row["role"], row["rung"], row["profile"], row["l2_state"]) == ("consumer", "l2p_optmt", "reuse_high", "flush_after_pin")
    assert (row["table"], row["batch"]) == (1, 0)
    assert row["cell"] == "tuned:l2p_optmt::reuse_high:flush_after_pin"   # pre-family name: tuned, pin unknown
    assert (row["family"], row["pin"]) == ("tuned", "")
    assert row["condition"] == "control_after_flush"
    assert set(first.loc[first["l2_state"] == "natural", "condition"]) == {"control_after_pin"}


def test_derived_rate_equals_hits_over_lookups(app_table):
    df = app_table.table
    for launch, g in df.groupby("launch"):
        v = dict(zip(g["metric"], g["value"]))
        hit, miss = v["lts__t_sectors_op_read_lookup_hit.sum"], v["lts__t_sectors_op_read_lookup_miss.sum"]
        assert v["derived:lts__t_sectors_op_read_hit_rate.pct"] == pytest.approx(100 * hit / (hit + miss))


def test_a_rate_is_derived_exactly_where_its_counts_are_not_both_zero(app_table, shared_table):
    from l2attr.catalog.sets import derived_specs

    seen = set()
    for df in (app_table.table, shared_table[1].table):
        for launch, g in df.groupby("launch"):
            v = dict(zip(g["metric"], g["value"]))
            for spec in derived_specs(v):
                has_lookups = v[spec.hits] + v[spec.misses] > 0
                assert (spec.name in v) == has_lookups, (launch, spec.name)
                seen.add(has_lookups)
    assert seen == {True, False}     # the fixtures hold both cases (kernel replay: l1 counts all 0)


def test_control_condition():
    assert control_condition("natural") == "control_after_pin"
    assert control_condition("flush_after_pin") == "control_after_flush"


def _frame(rows):
    base = {c: "" for c in METRICS.columns}
    return pd.DataFrame([{**base, "kernel": "k", "nvtx_range": "r", **r} for r in rows])


def test_quality_warnings():
    df = _frame([
        {"metric": "lts__t_sector_hit_rate.pct", "value": 100.16, "unit": "%"},
        {"metric": "dram__bytes_read.sum", "value": 0.0, "unit": "byte"},
        {"metric": "lts__t_sector_op_read_hit_rate.pct", "value": 50.0, "unit": "%"},
    ])
    w = quality_warnings(df, ["dram__bytes_read.sum", "lts__t_sectors_lookup_hit.sum"])
    assert any("lts__t_sectors_lookup_hit.sum: missing" in x for x in w)
    assert any("dram__bytes_read.sum: zero on every kernel" in x for x in w)
    assert any("100.16" in x and "outside [0, 100]" in x for x in w)
    assert not any("op_read_hit_rate" in x for x in w)
    assert quality_warnings(_frame([]).iloc[0:0]) == ["the report holds no profiled kernels"]


def test_csv_order_puts_the_five_first(shared_table):
    _, res = shared_table
    assert list(csv_order(res.table).columns[:5]) == ["kernel", "nvtx_range", "metric", "value", "unit"]


@pytest.mark.parametrize("content, message", [(None, "report not found"), (b"hello", "not an Nsight Compute report"),
                                              (b"", "not an Nsight Compute report")])
def test_bad_files_are_user_errors(tmp_path, content, message):
    f = tmp_path / "x.ncu-rep"
    if content is not None:
        f.write_bytes(content)
    with pytest.raises(UserError, match=message):
        read_report(f)
    with pytest.raises(UserError, match="is not a file"):
        read_report(tmp_path)


# Block ends of the application-replay fixture, read with a throwaway protobuf walker while
# making this test (16 blocks; blocks with a kernel hold ~108 KB): a cut anywhere else is inside
# a block. The file is 889,130 bytes.
APP_BLOCK_ENDS = (10, 145, 120_038, 120_111, 120_182, 120_304, 128_781, 128_834, 129_022, 129_956,
                  238_407, 346_861, 455_320, 563_766, 672_217, 780_671, 889_130)


def test_truncated_report_is_a_user_error(tmp_path):
    f = tmp_path / "cut.ncu-rep"
    f.write_bytes(APP_REPORT.read_bytes()[:444_000])      # ncu_report alone reads 3 of 8 kernels
    with pytest.raises(UserError) as err:
        read_report(f)
    assert str(err.value) == (f"{f}: the report is cut short (a block ends at byte 455,320, the file "
                              "has 444,000 bytes); copy it again or re-run ncu")


def test_every_cut_inside_a_block_is_refused_and_the_whole_file_passes(tmp_path):
    data = APP_REPORT.read_bytes()
    assert len(data) == APP_BLOCK_ENDS[-1]
    check_complete_report(APP_REPORT)
    f = tmp_path / "cut.ncu-rep"
    cuts = sorted({5, 9, 11, 144, 146, 100_000, 455_319, 455_321, 889_129, *range(1_000, 889_000, 37_003)})
    for n in cuts:
        f.write_bytes(data[:n])
        with pytest.raises(UserError, match="the report is cut short"):
            check_complete_report(f)


def test_a_cut_at_a_block_end_reads_as_a_shorter_report(tmp_path):
    """The limit of the size check: a report cut exactly between blocks is a valid shorter report."""
    f = tmp_path / "cut.ncu-rep"
    f.write_bytes(APP_REPORT.read_bytes()[:455_320])
    check_complete_report(f)
    assert _read_once(f).table["launch"].nunique() == 4
