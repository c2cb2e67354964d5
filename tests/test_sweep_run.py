"""A sweep's run loop on a fake GPU with known answers: files, summaries, break-even, resume."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from helpers_sweep import LIMITS, FakeSweepDevice, sweep_manifest

from l2attr.sweep.analyse.judge import analyse_sweep
from l2attr.sweep.load import load_sweep
from l2attr.dlrm.config import WorkloadConfig
from l2attr.rundir import RunDir
from l2attr.sweep.measure.run import run_sweep
from l2attr.sweep.declare import SweepOptions
from l2attr.sweep.table import SWEEP_POINTS, SWEEP_SAMPLES, SWEEP_UNITS
from l2attr.vocab import Family, Order, SweepAxis

CFG = WorkloadConfig(tables=2, rows=1000, batch_size=4, pooling=2, batches=3, warmup_batches=1, hot_rows=10)


def _run(tmp_path, **kw) -> tuple[RunDir, SweepOptions]:
    opts = SweepOptions(**{"axis": SweepAxis.AMORTISATION, "families": [Family.ARTIFACT], "profiles": ["random"],
                           "repeats": 2, "ks": [1, 2, 4, 8], "orders": [Order.BACK_TO_BACK, Order.INTERLEAVED],
                           **kw})
    run = RunDir.create(tmp_path, opts.axis.value, sweep_manifest(CFG, opts))
    run_sweep(CFG, opts, run, LIMITS, device_factory=FakeSweepDevice, log=lambda s: None)
    return run, opts


def test_amortisation_break_even_measured_and_by_formula(tmp_path):
    run, _ = _run(tmp_path)
    an = analyse_sweep(load_sweep(run.path))
    be = an.break_even.set_index("order")
    # kernel: 30 + 40k <= 50k from k = 3: the first measured k is 4; the formula (k = 1 figures) says 3
    assert be.loc["interleaved", "measured_kernel"] == 4 and be.loc["interleaved", "formula"] == 3
    # wall: pin + sync 40, calls 50 vs 60: (40 + 50k) / k = 60 exactly at k = 4 (equal medians: within
    # noise, the break-even itself), below 60 from k = 5: the first measured k where it pays is 8
    assert be.loc["back_to_back", "even_wall"] == 4 and be.loc["back_to_back", "measured_wall"] == 8
    assert be.loc["interleaved", "even_kernel"] == 4     # k = 2: 55 vs 50, slower; k = 4: 47.5, faster
    curve = an.table.set_index(["order", "k"])
    assert curve.loc[("interleaved", 2), "speedup_kernel"] == pytest.approx(100 / 110)
    assert curve.loc[("interleaved", 8), "formula_speedup"] == pytest.approx(400 / 350)
    assert "measured 4, formula 3" in an.reading


def test_every_unit_is_on_disk_with_its_rows(tmp_path):
    run, _ = _run(tmp_path)
    units = run.read(SWEEP_UNITS)
    samples = run.read(SWEEP_SAMPLES)
    # 8 points x 2 arms x 2 repeats x 2 modes
    assert len(units) == 64 and units["rows"].sum() == len(samples)
    pts = run.read(SWEEP_POINTS)
    k8 = pts[(pts.point == "back_to_back:k8") & (pts.arm == "l2p_optmt")].set_index("quantity")["median_us"]
    assert (k8["pin"], k8["consumer_first"], k8["consumer_rest"]) == (30.0, 40.0, 40.0)
    assert k8["charged"] == pytest.approx((30 + 8 * 40) / 8)
    # one pin group per table for k = 8 (8 calls aimed at), 2 tables, 2 repeats
    assert pts[(pts.point == "back_to_back:k8") & (pts.quantity == "charged")]["n_samples"].tolist() == [4, 4]


def test_resume_remeasures_a_unit_cut_between_its_two_appends(tmp_path):
    run, opts = _run(tmp_path)
    full = run.read(SWEEP_SAMPLES)
    units = run.read(SWEEP_UNITS)
    run.write(SWEEP_UNITS, units.iloc[:-1])            # crash after the samples, before the unit row
    FakeSweepDevice.made.clear()
    run_sweep(CFG, opts, run, LIMITS, device_factory=FakeSweepDevice, log=lambda s: None)
    assert FakeSweepDevice.made[-1].units == 1
    again = run.read(SWEEP_SAMPLES)
    assert len(again) == len(full)
    keys = ["family", "profile", "point", "arm", "repeat", "mode", "group", "table", "position", "role"]
    assert not again.duplicated(keys).any()


def test_resume_with_everything_done_measures_and_loads_nothing(tmp_path):
    run, opts = _run(tmp_path)
    before = run.read(SWEEP_POINTS)
    FakeSweepDevice.made.clear()
    run_sweep(CFG, opts, run, LIMITS, device_factory=FakeSweepDevice, log=lambda s: None)
    assert FakeSweepDevice.made == []            # nothing to measure: not even the GPU is set up
    pd.testing.assert_frame_equal(before, run.read(SWEEP_POINTS))


def test_pollution_gain_left_drops_once_the_read_evicts_the_pin(tmp_path):
    run, _ = _run(tmp_path, axis=SweepAxis.POLLUTION, pollution_mib=[0.0, 30.0, 60.0])
    t = analyse_sweep(load_sweep(run.path)).table.set_index("pollute_mib")
    assert t.loc[0.0, "gain_left"] == 1.0 and t.loc[30.0, "gain_left"] == 1.0
    assert t.loc[60.0, "gain_left"] == 0.0 and t.loc[30.0, "pollute_us"] == 30.0


def test_hotset_zero_rows_is_the_optmt_reference(tmp_path):
    run, _ = _run(tmp_path, axis=SweepAxis.HOTSET, hot_rows=[0, 5, 10])
    t = analyse_sweep(load_sweep(run.path)).table.set_index("hot_rows")
    assert t.loc[0, "speedup_charged"] == 1.0 and t.loc[0, "pin_us"] == 0.0
    assert t.loc[10, "speedup_consumer"] == pytest.approx(50 / 40)
    assert t.loc[10, "speedup_charged"] == pytest.approx(50 / 70)
    assert not math.isnan(t.loc[10, "hot_mib"])


def test_formula_falls_back_to_back_to_back_k1_and_reading_says_when_no_interleaved(tmp_path):
    run, _ = _run(tmp_path, orders=[Order.BACK_TO_BACK])
    an = analyse_sweep(load_sweep(run.path))
    assert an.break_even["formula"].tolist() == [3.0]
    assert an.reading.startswith("Calls per pin to break even against OptMT (back to back, kernel-charged): "
                                 "artifact random: measured 4, formula 3")
