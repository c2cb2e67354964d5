"""The run loop on the CPU: a fake GPU, real run-dir writers. Cells, resume, cut repeats."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from l2attr.dlrm.config import WorkloadConfig
from l2attr.dlrm.declare import RUNG_BY_NAME
from l2attr.dlrm.measure import check as checkmod
from l2attr.ladders.measure import run as runmod
from l2attr.ladders.measure.run import LadderOptions, complete_repeats, run_ladder
from l2attr.rundir import RunDir
from l2attr.schema import CELLS, SAMPLES
from l2attr.vocab import Family

CFG = WorkloadConfig(tables=2, rows=1000, batch_size=4, pooling=2, batches=3, warmup_batches=1, hot_rows=10)


class FakeGpu:
    """Consumer 40 µs, pin 10 µs, artifact timer 45 µs, host clock +100 µs per read."""

    def __init__(self, cfg, spin_us, log, timer="spin"):
        self.cfg, self.table_gen_s, self.clock = cfg, 0.0, 0.0
        self.telemetry = SimpleNamespace(available=False, read=lambda: {
            "sm_clock_mhz": 1.0, "mem_clock_mhz": 1.0, "gpu_temp_c": 1.0, "power_w": 1.0,
            "clock_event_reasons": 0.0})
        self.weights = [None] * cfg.tables
        self.offsets = self.out = None
        self.last_lag_us = 1.0
        self.priority_reset_ok = True
        self.l2_bytes = 60 << 20
        self.torch = SimpleNamespace(from_numpy=lambda a: SimpleNamespace(cuda=lambda: a))
        self.next = None

    def flush_l2(self): pass
    def reset_l2_priority(self): pass
    def stream_sync(self): pass
    def warm_up(self, seconds=0.5): pass
    def hbm_copy_GBps(self): return 4000.0
    def read_GBps(self, nbytes, passes=1): return 3800.0 if nbytes >= 1 << 30 else 9000.0
    def upload_indices(self, a): return a

    def host_clock_us(self):
        self.clock += 100.0
        return self.clock

    def timed(self, launch):
        self.next = 40.0
        launch()
        return self.next

    def artifact_timed(self, launch):
        launch()
        return 45.0


class FakeKernels:
    def __init__(self, v, *a, **k):
        self.variant, self.pin = v, object() if v.rung.pins else None
        self.gpu = None

    def resources(self):
        return {"consumer": {"registers_per_thread": 42}}

    def launch_pin(self, weight, hot):
        if FakeKernels.gpu is not None:
            FakeKernels.gpu.next = 10.0

    def launch_consumer(self, *a, **k):
        pass


@pytest.fixture
def fake(monkeypatch):
    made = {}

    def gpu(*a, **k):
        made["gpu"] = FakeGpu(*a, **k)
        FakeKernels.gpu = made["gpu"]
        return made["gpu"]

    monkeypatch.setattr(runmod, "Gpu", gpu)
    monkeypatch.setattr(checkmod, "VariantKernels", FakeKernels)
    monkeypatch.setattr(checkmod, "check_variant", lambda *a, **k: {"sum": 0.0})
    monkeypatch.setattr(checkmod, "check_real_data", lambda *a, **k: 0.0)
    from l2attr.ladders.measure import protocol
    monkeypatch.setattr(protocol, "reference_launch", lambda gpu, idx, t: (lambda: None))
    shape = (CFG.warmup_batches + CFG.batches, CFG.tables, CFG.batch_size * CFG.pooling)
    workload = SimpleNamespace(indices=np.zeros(shape, dtype=np.int64), hot=np.arange(10), source={"name": "x"})
    import l2attr.dlrm.workload as wl
    monkeypatch.setattr(wl, "build_workload", lambda *a, **k: workload)
    return made


def _opts(**kw):
    base = dict(rungs=[RUNG_BY_NAME[r] for r in ("baseline", "l2p_optmt", "torch")], profiles=["random"],
                families=[Family.ARTIFACT, Family.TUNED], repeats=2)
    base.update(kw)
    return LadderOptions(**base)


def test_cells_for_every_variant_quantity_and_timer(tmp_path, fake):
    run = RunDir.create(tmp_path, "x", {"kind": "ladder"})
    cells = run_ladder(CFG, _opts(), run, log=lambda s: None)
    per_repeat = CFG.batches * CFG.tables - 1
    samples = run.read(SAMPLES)
    assert len(samples) == 5 * 4 * per_repeat          # 2x2 rungs + torch, 2 device + 2 host repeats
    assert set(map(tuple, cells[["family", "rung", "pin"]].drop_duplicates().values)) == {
        ("artifact", "baseline", "none"), ("artifact", "l2p_optmt", "element"),
        ("tuned", "baseline", "none"), ("tuned", "l2p_optmt", "line"), ("reference", "torch", "none")}
    c = cells.set_index(["family", "rung", "quantity", "timer"])["median_us"]
    assert c[("artifact", "l2p_optmt", "pin", "kernel")] == 10.0
    assert c[("artifact", "l2p_optmt", "consumer", "kernel")] == 40.0
    assert c[("artifact", "l2p_optmt", "kernels", "kernel")] == 50.0
    assert c[("artifact", "l2p_optmt", "consumer", "artifact")] == 45.0
    assert c[("artifact", "l2p_optmt", "call", "wall")] == 200.0   # pin step + consumer, 100 µs per clock pair
    assert ("artifact", "baseline", "pin", "kernel") not in c.index
    m = run.manifest()
    assert "artifact/l2p_optmt/element" in m["variants"] and m["hbm_copy_GBps"] == 4000.0
    assert (m["hbm_read_GBps"], m["l2_read_GBps"]) == (3800.0, 9000.0)
    assert m["ptxas"]["variants"]["artifact/l2p_optmt/element"]["pin"]["sm_90"]["registers"] > 0


def test_resume_skips_complete_repeats_and_remeasures_a_cut_one(tmp_path, fake):
    run = RunDir.create(tmp_path, "x", {"kind": "ladder"})
    run_ladder(CFG, _opts(), run, log=lambda s: None)
    full = run.read(SAMPLES)
    # a crash in the middle of the last repeat's append: its rows are cut
    cut = full.iloc[:-2]
    run.write(SAMPLES, cut)
    assert len(complete_repeats(run, CFG)) == 5 * 4 - 1
    logs = []
    run_ladder(CFG, _opts(), run, log=logs.append)
    again = run.read(SAMPLES)
    assert len(again) == len(full)
    assert any("dropped" in line for line in logs)
    keys = ["family", "rung", "pin", "profile", "l2_state", "repeat", "batch", "table"]
    assert not again.duplicated(keys).any()


def test_resume_with_everything_done_measures_nothing(tmp_path, fake):
    run = RunDir.create(tmp_path, "x", {"kind": "ladder"})
    run_ladder(CFG, _opts(), run, log=lambda s: None)
    before = run.read(SAMPLES)
    run_ladder(CFG, _opts(), run, log=lambda s: None)
    pd.testing.assert_frame_equal(before, run.read(SAMPLES))
    assert len(run.read(CELLS)) == len(run.read(CELLS).drop_duplicates(["family", "rung", "pin", "quantity", "timer"]))


def test_pin_granularity_applies_where_the_family_allows_it():
    opts = _opts(pin_granularity="element")
    pins = {(v.family.value, v.pin.value) for v in opts.variants if v.rung.pins}
    assert pins == {("artifact", "element"), ("tuned", "element")}
    assert not math.isnan(len(opts.manifest()["variants"]))


def test_several_l2_states_run_in_turn_into_one_run(tmp_path, fake):
    run = RunDir.create(tmp_path, "x", {"kind": "ladder"})
    opts = _opts(rungs=[RUNG_BY_NAME["l2p_optmt"]], families=[Family.ARTIFACT],
                 l2_state="natural,flush_after_pin,reset_after_pin", repeats=1, host_repeat=False,
                 bandwidth=False)
    cells = run_ladder(CFG, opts, run, log=lambda s: None)
    assert sorted(set(cells["l2_state"])) == ["flush_after_pin", "natural", "reset_after_pin"]
    samples = run.read(SAMPLES)
    assert samples.groupby("l2_state").size().tolist() == [CFG.batches * CFG.tables - 1] * 3
    assert "hbm_copy_GBps" not in run.manifest()          # --no-bandwidth: nothing measured, nothing claimed
