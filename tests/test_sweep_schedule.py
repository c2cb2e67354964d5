"""The order of calls at a sweep point, and how one call is timed (fake GPU, answers by hand)."""

from __future__ import annotations

import pytest
from helpers_sweep import FakeSweepGpu

from l2attr.sweep.measure.protocol import ArmOps, Call, run_calls, schedule
from l2attr.vocab import Order


def _short(calls: list[Call]) -> list[tuple[int, int, int, bool]]:
    return [(c.group, c.table, c.position, c.pin_first) for c in calls]


def test_back_to_back_pins_once_then_k_calls_of_the_same_table():
    calls = schedule(Order.BACK_TO_BACK, k=3, groups=1, tables=2, batches=10, warmup_groups=1)
    assert _short(calls) == [(-1, 0, 1, True), (-1, 1, 1, True),               # warm-up: the artifact's loop
                             (0, 0, 1, True), (0, 0, 2, False), (0, 0, 3, False),
                             (0, 1, 1, True), (0, 1, 2, False), (0, 1, 3, False)]
    assert [c.batch for c in calls[2:5]] == [1, 2, 3]                            # fresh batches after the warm-up


def test_interleaved_puts_the_other_tables_between_two_calls_of_one_table():
    calls = schedule(Order.INTERLEAVED, k=2, groups=2, tables=3, batches=4, warmup_groups=0)
    assert [(c.table, c.position, c.pin_first) for c in calls[:6]] == [
        (0, 1, True), (1, 1, True), (2, 1, True), (0, 2, False), (1, 2, False), (2, 2, False)]
    assert [c.batch for c in calls] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert [c.group for c in calls] == [0] * 6 + [1] * 6


def test_batches_cycle_when_k_exceeds_the_index_stream():
    calls = schedule(Order.BACK_TO_BACK, k=5, groups=1, tables=1, batches=3, warmup_groups=0)
    assert [c.batch for c in calls] == [0, 1, 2, 0, 1]


def test_k_one_is_the_artifacts_loop_in_both_orders():
    a = schedule(Order.BACK_TO_BACK, 1, 3, 4, 14)
    b = schedule(Order.INTERLEAVED, 1, 3, 4, 14)
    assert a == b


@pytest.mark.parametrize("bad", [dict(k=0), dict(tables=0), dict(batches=0)])
def test_bad_schedule_is_refused(bad):
    args = dict(order=Order.INTERLEAVED, k=1, groups=1, tables=1, batches=1) | bad
    with pytest.raises(ValueError):
        schedule(**args)


def _ops(g: FakeSweepGpu, pin=True, pollute=False, prepare=False, setup=False) -> ArmOps:
    ops = ArmOps(consumer=lambda t, b: (lambda: g.run("consumer", 40.0)))
    if pin:
        ops.pin = lambda t: (lambda: g.run("pin", 30.0))
    if pollute:
        ops.pollute = lambda: g.run("pollute", 5.0)
    if prepare:
        ops.prepare = lambda t: g.run("prepare", 2.0)
    if setup:
        ops.setup = lambda t: g.run("setup", 1000.0)
    return ops


def test_device_call_times_each_kernel_and_the_host_call_and_keeps_setup_out():
    g = FakeSweepGpu()
    calls = [Call(-1, 0, 0, 1, True), Call(0, 0, 1, 1, True), Call(0, 0, 2, 2, False)]
    rows = run_calls(g, _ops(g, pollute=True, prepare=True, setup=True), calls, device_timed=True)
    assert [(r["role"], r["timer"], r["time_us"], r["position"]) for r in rows] == [
        ("prepare", "wall", 2.0, 1), ("pin", "kernel", 30.0, 1), ("pollute", "kernel", 5.0, 1),
        ("consumer", "kernel", 40.0, 1),
        ("prepare", "wall", 2.0, 2), ("pollute", "kernel", 5.0, 2), ("consumer", "kernel", 40.0, 2)]
    # warm-up ran, not kept; the host call is the consumer's, right before it (the cell protocol's order)
    assert g.launches[:5] == ["setup", "pin", "pollute", "prepare", "consumer"]


def test_host_call_is_prepare_pin_sync_pollute_sync_consumer_sync_on_the_host_clock():
    g = FakeSweepGpu()
    rows = run_calls(g, _ops(g, pollute=True, prepare=True, setup=True),
                     [Call(0, 0, 0, 1, True), Call(0, 0, 1, 2, False)], device_timed=False)
    # 2 + (30 + 10) + (5 + 10) + (40 + 10); the 1000 µs set-up is outside the clock
    assert [(r["role"], r["timer"], r["time_us"]) for r in rows] == [("call", "wall", 107.0),
                                                                     ("call", "wall", 67.0)]
