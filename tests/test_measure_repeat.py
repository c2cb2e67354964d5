"""The repeat loop on the CPU with a fake GPU: warm-up and the cold first sample are not kept,
NVTX goes only around the last N calls, every repeat starts with an L2 flush, telemetry and the
launch lag land in the rows."""

from __future__ import annotations

import math
from types import SimpleNamespace

from l2attr.config import WorkloadConfig
from l2attr.ladder import RUNG_BY_NAME
from l2attr.measure.ladder import CellRunner, LadderOptions


class FakeTelemetry:
    def read(self):
        return {"sm_clock_mhz": 1980.0, "mem_clock_mhz": 3201.0, "gpu_temp_c": 35.0,
                "power_w": 150.0, "clock_event_reasons": 0.0}


class RecordingRunner(CellRunner):
    def __init__(self, gpu, rung):
        super().__init__(gpu, None, rung, "reuse_high", indices=None, hot=None)
        self.calls = []

    def call(self, t, b, device_timed, nvtx_on):
        self.calls.append((b, t, nvtx_on))
        return {"pin_time_us": math.nan, "consumer_time_us": 10.0 + b + t / 100,
                "call_wall_time_us": math.nan, "launch_lag_us": 3.0}


def _gpu(nvtx_last=0):
    cfg = WorkloadConfig(tables=3, rows=1000, batch_size=4, pooling=2, batches=4, warmup_batches=2,
                         hot_rows=10)
    opts = LadderOptions(rungs=[RUNG_BY_NAME["optmt"]], profiles=["reuse_high"], nvtx_last=nvtx_last)
    flushes = []
    gpu = SimpleNamespace(cfg=cfg, opts=opts, telemetry=FakeTelemetry(),
                          flush_l2=lambda: flushes.append(1))
    return gpu, flushes


def test_repeat_keeps_measured_calls_minus_the_cold_first():
    gpu, flushes = _gpu()
    runner = RecordingRunner(gpu, RUNG_BY_NAME["optmt"])
    df = runner.run_repeat(repeat=1, device_timed=True)
    assert len(runner.calls) == (2 + 4) * 3                      # warm-up batches are run
    assert len(df) == 4 * 3 - 1                                   # ... but not kept, nor the first
    assert df.batch.min() == 0 and (df.batch.astype(int) >= 0).all()
    assert not ((df.batch == 0) & (df.table == 0)).any()
    assert (df.repeat == 1).all() and (df.rung == "optmt").all()
    assert flushes == [1]                                         # one flush at the repeat start
    assert (df.launch_lag_us == 3.0).all() and (df.sm_clock_mhz == 1980.0).all()


def test_nvtx_only_around_the_last_n_measured_calls():
    gpu, _ = _gpu(nvtx_last=4)
    runner = RecordingRunner(gpu, RUNG_BY_NAME["optmt"])
    runner.run_repeat(repeat=0, device_timed=True)
    marked = [(b, t) for b, t, on in runner.calls if on]
    # 12 measured calls (b 2..5 after 2 warm-up batches); the last 4 are k = 8..11
    assert marked == [(4, 2), (5, 0), (5, 1), (5, 2)]
