"""The APW+OptMT rung in the ladder's per-call protocol (fake GPU): remapped tables, the window set
before every consumer (outside the kernel timer, inside the wall clock), inside its stream and
set-aside for the whole repeat."""

from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

import pytest
from test_measure_repeat import CFG, FakeGpu, FakeKernels

from l2attr.dlrm.declare import APW, LADDER_ORDER, RUNG_BY_NAME, parse_rungs, variant
from l2attr.ladders.measure.protocol import CellRunner
from l2attr.vocab import Family


class FakeWindow:
    def __init__(self, gpu: FakeGpu) -> None:
        self.gpu = gpu
        self.remap = SimpleNamespace(weights=[f"r{t}" for t in range(CFG.tables)],
                                     indices={(b, t): f"ri{b}{t}" for b in range(8) for t in range(CFG.tables)})
        self.remap.indices = _Grid(self.remap.indices)

    @contextmanager
    def active(self):
        self.gpu.log.append("window_on")
        yield
        self.gpu.log.append("window_off")

    def set(self, t: int) -> None:
        self.gpu.log.append(f"set_window t{t}")


class _Grid:
    def __init__(self, d):
        self.d = d

    def __getitem__(self, key):
        return self.d[key]


class LoggingKernels(FakeKernels):
    def launch_consumer(self, weight, idx, offsets, out):
        self.gpu.log.append(f"consumer {weight}")


def _runner() -> tuple[CellRunner, FakeGpu]:
    gpu = FakeGpu(CFG)
    indices = _Grid({(b, t): f"i{b}{t}" for b in range(8) for t in range(CFG.tables)})
    v = variant(Family.ARTIFACT, APW)
    return CellRunner(gpu, LoggingKernels(gpu), v, "random", "natural", indices, "hot",
                      window=FakeWindow(gpu)), gpu


def test_the_rung_is_opt_in_and_ordered_before_torch():
    assert APW.name not in [r.name for r in parse_rungs(None)]
    assert parse_rungs("optmt,apw_optmt")[1] is RUNG_BY_NAME["apw_optmt"]
    assert LADDER_ORDER.index("apw_optmt") == LADDER_ORDER.index("torch") - 1
    assert APW.below == "optmt" and APW.register_cap and not APW.pins


def test_device_repeat_sets_the_window_outside_the_timer_on_the_remapped_table():
    runner, gpu = _runner()
    rows = runner.run_repeat(0, device_timed=True)
    assert gpu.log[:2] == ["window_on", "flush"] and gpu.log[-1] == "window_off"
    first = gpu.log.index("set_window t0")
    # the window's host call is timed on the host clock (its own charge), outside the kernel timer
    assert gpu.log[first - 1:first + 5] == ["clock", "set_window t0", "clock", "event_start", "consumer r0", "event_stop"]
    assert "pin" not in gpu.log and rows["pin_time_us"].isna().all()


def test_host_repeat_charges_the_window_call_to_the_wall_clock():
    runner, gpu = _runner()
    runner.run_repeat(0, device_timed=False)
    first = gpu.log.index("set_window t1")
    assert gpu.log[first - 1] == "clock" and gpu.log[first + 1] == "event_start"


def test_without_a_window_the_rung_refuses_to_run():
    gpu = FakeGpu(CFG)
    with pytest.raises(ValueError, match="needs the remapped tables"):
        CellRunner(gpu, FakeKernels(gpu), variant(Family.TUNED, APW), "random", "natural", {}, "hot")
