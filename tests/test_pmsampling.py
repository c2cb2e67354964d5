"""PM-sampling timeline: ncu argv, the reader on a recorded H200 range, phases, range totals, chart.

The recorded report (`range_pmsampling_pin_consume_h200.ncu-rep`) holds its own check on time:
the kernels' start/end timestamps (`profiler__timestamp_workload_*`) are on the sampler's clock,
so the reader's sample times can be compared with when the pin and the consumer really ran.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from l2attr.catalog import sampled
from l2attr.catalog import sets as msets
from l2attr.errors import UserError
from l2attr.profile import metricsets as ms
from l2attr.profile import pmsampling as pm
from l2attr.report.charts import figure_json
from l2attr.report.timeline_chart import timeline_figure

FIXTURES = Path(__file__).parent / "fixtures" / "ncu"
PM_REPORT = FIXTURES / "range_pmsampling_pin_consume_h200.ncu-rep"
EVICT_REPORT = FIXTURES / "range_evictlast_pin_consume_h200.ncu-rep"
APP_REPLAY_REPORT = FIXTURES / "pin_consume_app_replay_h200.ncu-rep"
INTERVAL_US = 1.5


@pytest.fixture(scope="module")
def report() -> pm.PmTimeline:
    return pm.read_pm_report(PM_REPORT)


@pytest.fixture(scope="module")
def found(report: pm.PmTimeline) -> pd.DataFrame:
    return pm.phases(report.samples)


# -- quantities file -----------------------------------------------------------------------------

def test_quantities_come_from_the_toml_with_verified_gh100_names():
    qs = {q.key: q for q in sampled.load_quantities()}
    assert {"l2_hit_rate_pct", "dram_read_pct_of_peak", "l2_throughput_pct_of_peak",
            "sm_inst_pct_of_peak", "ctas_launched"} <= set(qs)
    assert qs["l2_hit_rate_pct"].names_for("gh100") == (
        "LTS.TriageCompute.lts__average_t_sector_hit_rate_realtime.pct",)
    assert all("read:gh100" in q.evidence for q in qs.values())
    # an unknown chip tries every chip's names
    assert qs["dram_read_pct_of_peak"].names_for(None) == qs["dram_read_pct_of_peak"].names_for("gh100")


def test_quantities_file_is_not_a_metrics_set():
    assert "pmsampling" not in msets.available_sets()
    assert {"l2", "l2_tex", "duration"} <= set(msets.available_sets())
    with pytest.raises(UserError, match="not a metric set for --metrics"):
        ms.resolve_metrics("pmsampling", "gh100")


def test_quantities_file_is_checked(tmp_path):
    (tmp_path / "pmsampling.toml").write_text('kind = "pm_sampling"\n[[quantity]]\nkey = "a"\nunit = "%"\n')
    with pytest.raises(UserError, match="lacks label"):
        sampled.load_quantities(tmp_path)
    (tmp_path / "pmsampling.toml").write_text('[[quantity]]\nkey = "a"\nlabel = "A"\nunit = "%"\n')
    with pytest.raises(UserError, match="kind must be"):
        sampled.load_quantities(tmp_path)
    (tmp_path / "pmsampling.toml").write_text(
        'kind = "pm_sampling"\n[[quantity]]\nkey = "a"\nlabel = "A"\nunit = "%"\ngh100 = "X.Y.lts__a.pct"\n')
    assert sampled.load_quantities(tmp_path)[0].names_for("gh100") == ("X.Y.lts__a.pct",)


# -- ncu command lines ---------------------------------------------------------------------------

def test_timeline_argv_defaults_to_the_shortest_gh100_interval():
    argv = pm.timeline_ncu_argv(["python", "run.py", "--x"], Path("out/timeline.ncu-rep"), "ncu", "step1/", None)
    assert argv == [
        "ncu", "--config-file", "off", "--replay-mode", "app-range",
        "--cache-control", "none", "--clock-control", "none",
        "--nvtx", "--nvtx-include", "step1/",
        "--section", "PmSampling", "--pm-sampling-interval", "1000",
        "-o", "out/timeline", "-f", "python", "run.py", "--x",
    ]


def test_timeline_argv_interval_and_buffer():
    argv = pm.timeline_ncu_argv(["app"], "r", "/opt/ncu", "regex:^l2attr:.*/", 1500, buffer_bytes=64 << 20)
    i = argv.index("--pm-sampling-interval")
    assert argv[i + 1] == "1500"
    assert argv[argv.index("--pm-sampling-buffer-size") + 1] == str(64 << 20)
    assert argv[0] == "/opt/ncu" and argv[-3:] == ["r", "-f", "app"]


@pytest.mark.parametrize("kwargs, message", [
    ({"interval_ns": 500}, "below gh100's shortest, 1000 ns"),
    ({"chip": "ga100"}, "counts cycles"),
    ({"buffer_bytes": 0}, "positive number of bytes"),
    ({"nvtx_include": "step1"}, "trailing '/'"),
    ({"child": []}, "no child command"),
])
def test_timeline_argv_refusals(kwargs, message):
    args = {"child": ["app"], "output": "r", "ncu": "ncu", "nvtx_include": "step1/", **kwargs}
    with pytest.raises(UserError, match=message):
        pm.timeline_ncu_argv(**args)


def test_range_metrics_argv_exact():
    metrics = ["lts__t_sector_hit_rate.pct", "dram__bytes_read.sum",
               "lts__t_sectors_srcunit_tex_aperture_device_evict_last_lookup_hit.sum"]
    argv = pm.range_metrics_ncu_argv(["app", "-n", "1"], "runs/evict", "ncu", "step1/", metrics)
    assert argv == [
        "ncu", "--config-file", "off", "--replay-mode", "app-range",
        "--cache-control", "none", "--clock-control", "none",
        "--nvtx", "--nvtx-include", "step1/",
        "--metrics", ",".join(metrics),
        "-o", "runs/evict", "-f", "app", "-n", "1",
    ]
    with pytest.raises(UserError, match="no metrics"):
        pm.range_metrics_ncu_argv(["app"], "r", "ncu", "step1/", [" "])
    with pytest.raises(UserError, match="not ncu metric names: l2"):
        pm.range_metrics_ncu_argv(["app"], "r", "ncu", "step1/", ["l2"])


# -- reading the recorded PM-sampling range ------------------------------------------------------

def test_reader_gives_one_timestamped_row_per_sample_and_quantity(report):
    info = report.ranges.set_index("range").loc["step1"]
    assert info["workload"] == "range" and info["chip"] == "gh100"
    assert info["interval_ns"] == 1500       # the interval the recording asked for (its ncu command line)
    counts = report.samples.groupby("quantity").size()
    assert len(counts) == len(sampled.load_quantities())
    # every timestamped instance is one row per quantity; the untimed ones are dropped, and counted
    assert info["untimed"] >= 1 and (counts == info["instances"] - info["untimed"]).all()
    # the range's duration is the one its own range result records (another metric of the same report)
    total = pm.read_range_metrics(PM_REPORT).set_index("metric").loc["gpu__time_duration.sum", "value"]
    assert info["duration_us"] == pytest.approx(total / 1000.0)
    assert set(report.samples["range"]) == {"step1"}
    assert report.warnings == []


def test_sample_times_are_the_timestamps_1_5_us_apart(report):
    hit = report.samples[report.samples["quantity"] == "l2_hit_rate_pct"]
    t = hit["t_us"].to_numpy()
    assert t[0] == 0.0
    steps = pd.Series(t).diff().dropna().round(3)
    assert set(steps) <= {1.472, 1.504, 1.536}  # 32 ns timestamp quanta around 1,500 ns
    assert (t[-1] - t[0]) / (len(t) - 1) == pytest.approx(INTERVAL_US, abs=0.001)
    # every quantity shares the same sample times (one pass group)
    by_q = report.samples.groupby("quantity")["t_us"].apply(tuple)
    assert by_q.nunique() == 1


def test_values_in_range_and_metric_names_from_the_toml(report):
    s = report.samples
    hits = s[s["quantity"].isin(["l2_hit_rate_pct", "l2_tex_hit_rate_pct"])]["value"]
    assert hits.between(0, 100).all() and hits.max() > 30
    assert (s["value"] >= 0).all()
    dram = s[s["quantity"] == "dram_read_pct_of_peak"]["value"]
    assert 50 < dram.max() <= 100  # the pin's prefetch burst nearly saturates HBM
    names = {q.key: q.names_for("gh100")[0] for q in sampled.load_quantities()}
    assert all(s["metric"] == s["quantity"].map(names))
    assert set(s.loc[s["quantity"] == "l2_hit_rate_pct", "unit"]) == {"%"}


def test_thread_blocks_add_up_to_two_grids_of_1024(report):
    """Per-interval counts, not a running total: pin and consumer each launch 1024 blocks."""
    ctas = report.samples[report.samples["quantity"] == "ctas_launched"]
    assert ctas["value"].sum() == 2048


def test_sample_times_agree_with_the_kernels_own_timestamps(report):
    """The first blocks of each kernel show up within one interval of its recorded start."""
    k = report.kernels.sort_values("kernel")
    assert len(k) == 2                                   # the pin, then the consumer
    assert (k["start_us"] < k["end_us"]).all() and k["end_us"].iloc[0] <= k["start_us"].iloc[1]
    assert (k["end_us"] <= report.ranges["duration_us"].iloc[0]).all()
    ctas = report.samples[(report.samples["quantity"] == "ctas_launched") & (report.samples["value"] > 0)]
    for start in k["start_us"]:
        first = ctas.loc[ctas["t_us"] >= start - INTERVAL_US, "t_us"].min()
        assert abs(first - start) <= INTERVAL_US


def test_read_pm_timeline_is_the_samples_table(report):
    t = pm.read_pm_timeline(PM_REPORT)
    assert list(t.columns) == pm.SAMPLE_COLUMNS and len(t) == len(report.samples)


def test_reports_without_pm_samples_are_refused():
    with pytest.raises(UserError, match="no PM-sampling samples"):
        pm.read_pm_report(EVICT_REPORT)


def test_child_reads_without_numpy_loaded():
    """The ncu_report child never imports numpy (the 2025.3.1 crash needed numpy loaded first)."""
    for job, report in (("timeline", PM_REPORT), ("range-metrics", EVICT_REPORT)):
        res = subprocess.run([sys.executable, "-X", "importtime", "-m", "l2attr.profile.pm_child", job,
                              str(report)], capture_output=True, text=True, check=True)
        imported = [line.rsplit("|", 1)[-1].strip() for line in res.stderr.splitlines() if "|" in line]
        assert "ncu_report" in imported
        assert not [m for m in imported if m.split(".")[0] in ("numpy", "pandas")]
        assert json.loads(res.stdout)


def test_timeline_rows_drop_untimed_samples_and_warn():
    action = {"range": "r", "workload": "kernel", "chip": None, "interval_ns": 1000.0, "pass_groups": 2.0,
              "duration_ns": 5000.0, "kernels": [[1_000_500, 1_002_000]],
              "series": {"l2_hit_rate_pct": {"metric": "X.l2", "unit": "%", "ts": [0, 1_000_000, 1_001_000, 1_002_000],
                                             "values": [49.0, 10.0, 120.0, 30.0]}},
              "missing": {"dram_read_pct_of_peak": ["X.dram"]}}
    warnings: list[str] = []
    rows, kernels, info = pm._timeline_rows(action, warnings)
    assert [r["t_us"] for r in rows] == [0.0, 1.0, 2.0]
    assert kernels == [{"range": "r", "kernel": 0, "start_us": 0.5, "end_us": 2.0}]
    assert info["instances"] == 4 and info["untimed"] == 1
    assert info["duration_us"] == 5.0 and info["span_us"] == 1.5      # the kernel's own 0.5 -> 2.0 us
    text = " ".join(warnings)
    assert "1 l2_hit_rate_pct samples outside [0, 100]" in text
    assert "no PM samples for dram_read_pct_of_peak (tried X.dram)" in text
    assert "not a range one" in text and "2 passes" in text


# -- phases --------------------------------------------------------------------------------------

def test_phases_on_the_recorded_range(found, report):
    """The phases' order was read by eye on the samples (a short copy-engine blip with no SM work and no
    blocks, then the pin, the gap, the consumer); what is checked is what must hold for any recording:
    the gap spans exactly the time between the bursts, each burst meets its kernel's own timestamps."""
    rows = found.set_index("phase")
    assert list(found["phase"]) == ["other", "pin", "gap", "consumer"]
    # the gap is exactly the time between the two bursts, each phase as long as its samples say
    assert rows.loc["gap", "start_us"] == rows.loc["pin", "end_us"]
    assert rows.loc["gap", "end_us"] == rows.loc["consumer", "start_us"]
    assert (found["duration_us"] == found["end_us"] - found["start_us"]).all()
    for phase in ("pin", "gap", "consumer"):
        assert abs(rows.loc[phase, "samples"] * INTERVAL_US - rows.loc[phase, "duration_us"]) <= 2 * INTERVAL_US
    # each burst matches its kernel's own start/end to within one sampling interval
    k = report.kernels.sort_values("kernel")
    for phase, (_, kern) in zip(("pin", "consumer"), k.iterrows()):
        assert abs(rows.loc[phase, "start_us"] - kern["start_us"]) <= INTERVAL_US
        assert abs(rows.loc[phase, "end_us"] - kern["end_us"]) <= INTERVAL_US


def _synthetic(busy: dict[int, float], sm: dict[int, float], n: int = 100) -> pd.DataFrame:
    """1-us samples: L2 throughput and SM issue per index, zero elsewhere."""
    rows = []
    for i in range(n):
        rows.append({"range": "s", "quantity": "l2_throughput_pct_of_peak", "t_us": float(i), "value": busy.get(i, 0.2)})
        rows.append({"range": "s", "quantity": "sm_inst_pct_of_peak", "t_us": float(i), "value": sm.get(i, 0.0)})
    return pd.DataFrame(rows).assign(unit="%", metric="m")


def test_phases_on_a_synthetic_timeline_with_known_answer():
    l2 = {**{i: 60.0 for i in range(10, 15)}, 30: 5.0, 31: 5.0, **{i: 40.0 for i in range(60, 80) if i != 70}}
    sm = {10: 20.0, **{i: 70.0 for i in range(60, 80) if i != 70}}
    got = pm.phases(_synthetic(l2, sm))
    expect = [("pin", 10, 15, 5), ("other", 30, 32, 2), ("gap", 15, 60, 45), ("consumer", 60, 80, 20)]
    expect.sort(key=lambda e: (e[1], e[0] != "gap"))
    assert [(r.phase, r.start_us, r.end_us, r.samples) for r in got.itertuples()] == expect
    # without merging, the one idle sample at 70 splits the consumer: the first half is an extra kernel
    split = pm.phases(_synthetic(l2, sm), merge_samples=0)
    assert list(split["phase"]) == ["pin", "gap", "other", "kernel", "consumer"]


def test_phases_need_two_kernel_bursts_and_a_busy_signal():
    one = pm.phases(_synthetic({i: 50.0 for i in range(20, 30)}, {20: 10.0}))
    assert list(one["phase"]) == ["kernel"]
    assert pm.phases(_synthetic({}, {})).empty
    no_signal = _synthetic({5: 50.0}, {}).assign(quantity="l2_hit_rate_pct")
    assert pm.phases(no_signal).empty and list(pm.phases(no_signal).columns) == pm.PHASE_COLUMNS


# -- range totals --------------------------------------------------------------------------------

def test_range_metrics_of_the_evict_last_range():
    t = pm.read_range_metrics(EVICT_REPORT)
    assert set(t["range"]) == {"step1"} and set(t["action"]) == {0}
    v = t.set_index("metric")
    hits = "lts__t_sectors_srcunit_tex_aperture_device_evict_last_lookup_hit.sum"
    # the metrics the recording asked for, each with its unit, counts whole and positive, a rate in range
    assert {"dram__bytes_read.sum", "lts__t_sector_hit_rate.pct", hits} <= set(v.index)
    assert (v.loc["dram__bytes_read.sum", "unit"], v.loc["lts__t_sector_hit_rate.pct", "unit"],
            v.loc[hits, "unit"]) == ("byte", "%", "sector")
    for m in ("dram__bytes_read.sum", hits):
        assert v.loc[m, "value"] > 0 and float(v.loc[m, "value"]).is_integer()
    assert 0 < v.loc["lts__t_sector_hit_rate.pct", "value"] < 100


def test_range_metrics_leave_out_pm_samples():
    t = pm.read_range_metrics(PM_REPORT)
    assert not t["metric"].str.contains("TriageCompute").any()
    assert t.set_index("metric").loc["gpu__time_duration.sum", "unit"] == "ns"


def test_range_metrics_refuse_kernel_results():
    with pytest.raises(UserError, match="no range results"):
        pm.read_range_metrics(APP_REPLAY_REPORT)


# -- chart ---------------------------------------------------------------------------------------

def test_timeline_figure_builds_and_serialises(report, found):
    fig = timeline_figure(report.samples, found)
    assert fig is not None
    spec = figure_json(fig)
    json.dumps(spec)
    names = [t["name"] for t in spec["data"]]
    assert names[0] == "L2 hit rate" and "DRAM read throughput" in names
    axes = {t["name"]: t.get("yaxis", "y") for t in spec["data"]}
    assert axes["L2 hit rate"] == "y" and axes["DRAM read throughput"] == "y2"
    layout = spec["layout"]
    assert len(layout["shapes"]) == len(found)
    texts = [a["text"] for a in layout["annotations"]]
    assert any(t.startswith("pin") for t in texts) and any(t.startswith("consumer") for t in texts)
    gap = found.set_index("phase").loc["gap", "duration_us"]
    assert any(t.startswith(f"gap<br>{gap:.1f} µs") for t in texts)
    lo, hi = layout["xaxis2"]["range"]
    assert lo < found["start_us"].min() and hi > found["end_us"].max()


def test_timeline_figure_blanks_hit_rate_while_l2_is_idle(report):
    fig = timeline_figure(report.samples)
    hit = next(t for t in figure_json(fig)["data"] if t["name"] == "L2 hit rate")
    l2 = report.samples[report.samples["quantity"] == "l2_throughput_pct_of_peak"]
    idle = int((l2["value"] < sampled.BUSY_PCT).sum())
    assert sum(v is None for v in hit["y"]) == idle
    assert 0 < idle < len(hit["y"])


def test_timeline_figure_absent_data():
    assert timeline_figure(None) is None
    assert timeline_figure(pd.DataFrame(columns=pm.SAMPLE_COLUMNS)) is None
    only_sm = _synthetic({}, {1: 5.0})
    assert timeline_figure(only_sm[only_sm["quantity"] == "sm_inst_pct_of_peak"]) is None


def test_a_range_spans_its_kernels_first_start_to_last_end_and_needs_no_duration():
    """The one-replay section records no range duration: the span comes from the kernels' own
    timestamps (two kernels, 0.5 -> 2.0 and 3.0 -> 4.25 us after the first sample), or is None."""
    action = {"range": "r", "workload": "range", "chip": "gh100", "interval_ns": 1000.0, "pass_groups": 1.0,
              "duration_ns": None, "kernels": [[1_003_000, 1_004_250], [1_000_500, 1_002_000]],
              "series": {"l2_hit_rate_pct": {"metric": "X.l2", "unit": "%", "ts": [1_000_000, 1_001_000],
                                             "values": [1.0, 2.0]}}, "missing": {}}
    _, _, info = pm._timeline_rows(action, [])
    assert info["duration_us"] is None and info["span_us"] == 3.75
    _, _, bare = pm._timeline_rows({**action, "kernels": []}, [])
    assert bare["span_us"] is None


def test_the_recorded_ranges_span_lies_within_its_ncu_duration(report):
    info = report.ranges.iloc[0]
    k = report.kernels
    assert info["span_us"] == pytest.approx(k["end_us"].max() - k["start_us"].min())
    assert 0 < info["span_us"] <= info["duration_us"]


def test_the_reports_range_line_names_which_length_it_shows():
    from l2attr.report.provenance import ranges

    old = ranges([{"range": "r", "duration_us": 860.5, "span_us": 800.0, "interval_ns": 1500.0}])
    new = ranges([{"range": "r", "duration_us": None, "span_us": 775.2, "interval_ns": 1500.0}])
    assert old == "r: 860 µs (ncu's range duration), PM sampling every 1.5 µs"
    assert new == "r: 775 µs (first kernel start to last kernel end), PM sampling every 1.5 µs"
    assert "no duration recorded" in ranges([{"range": "r", "interval_ns": None}])
