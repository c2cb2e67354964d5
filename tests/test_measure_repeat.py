"""The per-call protocol and the repeat loop on the CPU with a fake GPU that logs every operation.

The order of operations is the measurement: a flush inside a timer, a pin outside the call, or a
missing stream sync would each change what the numbers mean. These tests pin the order down for
every L2 state, for device (kernel timer) and host (artifact timer + wall clock) repeats.
"""

from __future__ import annotations

import math

import pytest

from l2attr.dlrm.config import WorkloadConfig
from l2attr.dlrm.declare import RUNG_BY_NAME, variant
from l2attr.ladders.measure.protocol import CellRunner, samples_per_repeat
from l2attr.ladders.measure.run import LadderOptions, repeat_plan
from l2attr.schema import SAMPLES


class FakeTelemetry:
    def read(self):
        return {"sm_clock_mhz": 1980.0, "mem_clock_mhz": 3201.0, "gpu_temp_c": 35.0,
                "power_w": 150.0, "clock_event_reasons": 0.0}


class FakeGpu:
    """Logs each verb; `timed` reports 10 µs for a pin and 40 µs for a consumer, lag 3 µs."""

    def __init__(self, cfg):
        self.cfg, self.log, self.clock = cfg, [], 0.0
        self.telemetry = FakeTelemetry()
        self.weights = [f"w{t}" for t in range(cfg.tables)]
        self.offsets, self.out = "offsets", "out"
        self.last_lag_us = math.nan

    def flush_l2(self):
        self.log.append("flush")

    def stream_sync(self):
        self.log.append("sync")

    def reset_l2_priority(self):
        self.log.append("reset")

    def host_clock_us(self):
        self.log.append("clock")
        self.clock += 100.0
        return self.clock

    def timed(self, launch):
        self.log.append("event_start")
        launch()
        self.log.append("event_stop")
        self.last_lag_us = 3.0
        return 10.0 if self.log[-2] == "pin" else 40.0

    def artifact_timed(self, launch):
        self.log += ["event_start"]
        launch()
        self.log += ["sync", "event_stop"]
        return 45.0


class FakeKernels:
    def __init__(self, gpu):
        self.gpu = gpu

    def launch_pin(self, weight, hot):
        self.gpu.log.append("pin")

    def launch_consumer(self, weight, idx, offsets, out):
        self.gpu.log.append("consumer")


CFG = WorkloadConfig(tables=3, rows=1000, batch_size=4, pooling=2, batches=4, warmup_batches=2, hot_rows=10)


def _runner(rung: str, l2_state: str, nvtx_last: int = 0) -> tuple[CellRunner, FakeGpu]:
    gpu = FakeGpu(CFG)
    indices = {(b, t): f"i{b}{t}" for b in range(6) for t in range(3)}
    return CellRunner(gpu, FakeKernels(gpu), variant("artifact", rung), "reuse_high", l2_state,
                      indices, "hot", nvtx_last), gpu


# (rung, l2 state, device-timed) -> the operations of one call, in order
EXPECTED = {
    ("l2p_optmt", "natural", True): ["event_start", "pin", "event_stop", "event_start", "consumer", "event_stop"],
    ("l2p_optmt", "flush", True): ["flush", "event_start", "pin", "event_stop",
                                   "event_start", "consumer", "event_stop"],
    ("l2p_optmt", "flush_after_pin", True): ["event_start", "pin", "event_stop", "flush",
                                             "event_start", "consumer", "event_stop"],
    ("l2p_optmt", "reset_after_pin", True): ["event_start", "pin", "event_stop", "reset",
                                             "event_start", "consumer", "event_stop"],
    ("optmt", "natural", True): ["event_start", "consumer", "event_stop"],
    ("optmt", "flush", True): ["flush", "event_start", "consumer", "event_stop"],
    # host repeats: the pin step (launch -> sync) is its own charge on the host clock, the
    # control between pin and consumer is outside the wall, the consumer inside the artifact's timer
    ("l2p_optmt", "natural", False): ["clock", "pin", "sync", "clock", "clock", "event_start", "consumer",
                                      "sync", "event_stop", "clock"],
    ("l2p_optmt", "flush", False): ["flush", "clock", "pin", "sync", "clock", "clock", "event_start",
                                    "consumer", "sync", "event_stop", "clock"],
    ("l2p_optmt", "flush_after_pin", False): ["clock", "pin", "sync", "clock", "flush", "clock", "event_start",
                                              "consumer", "sync", "event_stop", "clock"],
    ("l2p_optmt", "reset_after_pin", False): ["clock", "pin", "sync", "clock", "reset", "clock", "event_start",
                                              "consumer", "sync", "event_stop", "clock"],
    ("optmt", "natural", False): ["clock", "event_start", "consumer", "sync", "event_stop", "clock"],
    ("optmt", "flush", False): ["flush", "clock", "event_start", "consumer", "sync", "event_stop", "clock"],
}


@pytest.mark.parametrize("key", list(EXPECTED), ids=lambda k: f"{k[0]}-{k[1]}-{'device' if k[2] else 'host'}")
def test_order_of_operations_per_call(key):
    rung, state, device = key
    runner, gpu = _runner(rung, state)
    out = runner.call(t=1, b=2, device_timed=device, nvtx_on=False)
    assert gpu.log == EXPECTED[key]
    if device:
        assert out["consumer_time_us"] == 40.0
        assert (out["pin_time_us"] == 10.0) == RUNG_BY_NAME[rung].pins
        assert math.isnan(out["call_wall_time_us"]) and math.isnan(out["consumer_artifact_time_us"])
    else:
        assert out["consumer_artifact_time_us"] == 45.0
        assert out["call_wall_time_us"] == (200.0 if RUNG_BY_NAME[rung].pins else 100.0)  # 100 µs per clock read: pin step + consumer
        assert math.isnan(out["consumer_time_us"]) and math.isnan(out["pin_time_us"])


def test_repeat_keeps_measured_calls_minus_the_cold_first():
    runner, gpu = _runner("optmt", "natural")
    df = runner.run_repeat(repeat=1, device_timed=True)
    assert gpu.log.count("consumer") == (2 + 4) * 3                 # warm-up batches are run
    assert len(df) == 4 * 3 - 1 == samples_per_repeat(CFG)          # ... but not kept, nor the first
    assert df.batch.min() == 0 and not ((df.batch == 0) & (df.table == 0)).any()
    assert (df.repeat == 1).all() and (df.rung == "optmt").all() and (df.family == "artifact").all()
    assert (df.pin == "none").all()
    assert gpu.log[0] == "flush" and gpu.log.count("flush") == 1    # one flush at the repeat start
    assert (df.launch_lag_us == 3.0).all() and (df.sm_clock_mhz == 1980.0).all()
    assert list(df.columns)[:len(SAMPLES.columns)] == list(SAMPLES.columns)


def test_nvtx_only_around_the_last_n_measured_calls(monkeypatch):
    runner, _ = _runner("optmt", "natural", nvtx_last=4)
    marked = []
    real = runner.call
    monkeypatch.setattr(runner, "call", lambda t, b, device_timed, nvtx_on: (
        marked.append((b, t)) if nvtx_on else None, real(t, b, device_timed, False))[1])
    runner.run_repeat(repeat=0, device_timed=True)
    # 12 measured calls (b 2..5 after 2 warm-up batches); the last 4 are k = 8..11
    assert marked == [(4, 2), (5, 0), (5, 1), (5, 2)]


def test_repeat_plan_alternates_device_and_host():
    opts = LadderOptions(rungs=[RUNG_BY_NAME["optmt"]], profiles=["random"], repeats=3)
    assert repeat_plan(opts) == [(0, True), (1, False), (2, True), (3, False), (4, True), (5, False)]
    opts.host_repeat = False
    assert repeat_plan(opts) == [(0, True), (1, True), (2, True)]
