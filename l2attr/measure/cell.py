"""The cell protocol for any producer -> consumer pair: what runs, in which order, in one call.

One call under a condition (its line in vocab/conditions.py says what runs before and between):

    [flush]                        flush_before_call (outside every timer)
    producer -> stream sync        unless no_producer
    [flush | persisting reset]     flush_after_producer / reset_after_producer (outside every timer)
    consumer -> stream sync

timed three ways, in repeats that alternate:

* device repeat (timer `kernel`): each kernel between CUDA events behind the device's kernel timer
  (measure/timer.py: the blocking timer by default), so no host launch lag is in the interval;
* host repeat (timer `wall`): the host clock around `producer -> sync` (the producer step's whole
  cost to a caller: launch, kernel, sync) and around `consumer -> sync`; the call is their sum,
  the control's flush or reset between them is not part of it;
* profile mode (under Nsight Compute): no timers, an NVTX range around each role.

Every repeat starts from a flushed L2 with persisting lines reset (pins never un-pin: without it a
repeat inherits the one before). Warm-up calls run and are not kept, nor the first measured call.
The device is duck-typed (flush_l2, reset_persisting, sync, host_us, timer) so the order of
operations is tested on a CPU with a fake; `GpuVerbs` (below) maps a workload's Gpu onto it.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable, ContextManager

from l2attr.measure.timer import Sample
from l2attr.vocab import KEPT, Discard, L2Condition, RepeatMode, Role, cell_condition

Launch = Callable[[], Any]
Ranges = Callable[[Role, int], ContextManager[Any]]   # (role, call) -> context around a launch
NAN = float("nan")

SAMPLE_FIELDS = ("producer_time_us", "consumer_time_us", "producer_wall_us", "consumer_wall_us",
                 "call_wall_us", "producer_enqueue_us", "consumer_enqueue_us", "sm_clock_mhz",
                 "discard", "consumer_host_timer_us", "between_time_us", "prepare_wall_us")


@dataclass(frozen=True)
class CallOps:
    """What one call launches: the consumer, and the producer step when there is one.

    `prepare`: a host call right before the consumer (an access-policy window's
    cuStreamSetAttribute): outside the kernel timer, inside the consumer's wall clock, since a
    caller pays it. `consumer_host_timer`: a host-side timer the consumer runs inside in host
    repeats (the artifact's record -> launch -> sync -> record); its number is kept as
    `consumer_host_timer_us`. `between`: a kernel of other work after the producer step (timed
    as its own kernel, inside the wall); `setup`: emulation of the machine, never charged."""

    consumer: Launch
    producer: Launch | None = None
    prepare: Launch | None = None
    consumer_host_timer: Callable[[Launch], float] | None = None
    between: Launch | None = None     # other work between producer and consumer (a pollution read)
    setup: Launch | None = None       # uncharged set-up before the call, outside every timer


def _no_range(role: Role, call: int) -> ContextManager[Any]:
    return nullcontext()


def runs_producer(ops: CallOps, condition: L2Condition) -> bool:
    return ops.producer is not None and condition.producer


def _before(dev: Any, ops: CallOps, condition: L2Condition) -> None:
    """What the condition's registry line runs before the call (vocab/conditions.py: `before`)."""
    if ops.setup is not None:
        ops.setup()
    if condition.before:
        getattr(dev, condition.before)()


def _between(dev: Any, condition: L2Condition) -> None:
    """The controls (the line's `between`): the producer's lines go (flush), or only their
    evict_last mark (reset)."""
    if condition.between:
        getattr(dev, condition.between)()


def device_call(dev: Any, ops: CallOps, condition: L2Condition, call: int,
                ranges: Ranges = _no_range) -> dict[str, Any]:
    """Each kernel behind the kernel timer; the timer's sync is the producer -> consumer sync."""
    row: dict[str, Any] = {f: NAN for f in SAMPLE_FIELDS}
    discards = []
    _before(dev, ops, condition)
    if runs_producer(ops, condition):
        with ranges(Role.PRODUCER, call):
            s = dev.timer.time(ops.producer)
        row.update(producer_time_us=s.time_us, producer_enqueue_us=s.enqueue_us)
        discards.append(s.discard)
    _between(dev, condition)
    if ops.between is not None:
        with ranges(Role.POLLUTE, call):
            s = dev.timer.time(ops.between)
        row["between_time_us"] = s.time_us
        discards.append(s.discard)
    if ops.prepare is not None:
        t0 = dev.host_us()
        ops.prepare()
        row["prepare_wall_us"] = dev.host_us() - t0
    with ranges(Role.CONSUMER, call):
        s = dev.timer.time(ops.consumer)
    row.update(consumer_time_us=s.time_us, consumer_enqueue_us=s.enqueue_us, sm_clock_mhz=s.sm_clock_mhz)
    discards.append(s.discard)
    row["discard"] = next((d for d in discards if d), KEPT)
    return row


def host_call(dev: Any, ops: CallOps, condition: L2Condition, call: int,
              ranges: Ranges = _no_range) -> dict[str, Any]:
    """The host clock around producer -> sync and around consumer -> sync."""
    row: dict[str, Any] = {f: NAN for f in SAMPLE_FIELDS}
    _before(dev, ops, condition)
    producer_us = 0.0
    if runs_producer(ops, condition):
        t0 = dev.host_us()
        with ranges(Role.PRODUCER, call):
            ops.producer()
        dev.sync()
        producer_us = dev.host_us() - t0
        row["producer_wall_us"] = producer_us
    _between(dev, condition)
    t0 = dev.host_us()
    if ops.between is not None:
        ops.between()
        dev.sync()
    if ops.prepare is not None:
        ops.prepare()
    with ranges(Role.CONSUMER, call):
        if ops.consumer_host_timer is not None:   # it ends synced (the artifact's timer does)
            row["consumer_host_timer_us"] = ops.consumer_host_timer(ops.consumer)
        else:
            ops.consumer()
            dev.sync()
    row["consumer_wall_us"] = dev.host_us() - t0
    row["call_wall_us"] = producer_us + row["consumer_wall_us"]
    row["discard"] = KEPT
    return row


def profiled_call(dev: Any, ops: CallOps, condition: L2Condition, call: int,
                  ranges: Ranges = _no_range) -> dict[str, Any]:
    """Under Nsight Compute: the same order, no timers (they would be profiled as kernels)."""
    _before(dev, ops, condition)
    if runs_producer(ops, condition):
        with ranges(Role.PRODUCER, call):
            ops.producer()
        dev.sync()
    _between(dev, condition)
    if ops.between is not None:
        with ranges(Role.POLLUTE, call):
            ops.between()
        dev.sync()
    if ops.prepare is not None:
        ops.prepare()
    with ranges(Role.CONSUMER, call):
        ops.consumer()
    dev.sync()
    return {}


CALLS = {RepeatMode.DEVICE: device_call, RepeatMode.HOST: host_call, RepeatMode.PROFILE: profiled_call}


def run_repeat(dev: Any, ops_for: Callable[[int], CallOps], condition: L2Condition, mode: str,
               calls: int, warmup: int, ranges: Ranges | None = None,
               ranges_from: int = 0) -> list[dict[str, Any]]:
    """One repeat: a clean start, `warmup` calls not kept, then `calls` calls of which the first
    (cold) is dropped. Under `profile`, NVTX ranges from measured call `ranges_from` on."""
    dev.flush_l2()
    mode = RepeatMode(mode)
    fn = CALLS[mode]
    rows = []
    for i in range(warmup + calls):
        measured = i - warmup
        on = ranges is not None and measured >= ranges_from
        row = fn(dev, ops_for(i), cell_condition(condition), max(measured, 0),
                 ranges if on else _no_range)
        if measured <= 0 or mode == RepeatMode.PROFILE:
            continue
        rows.append({"call": measured, **row})
    return rows


# -- a GPU in the protocol's verbs ---------------------------------------------------------------
# dlrm/measure/gpu.Gpu (or a test's fake) in the verbs of the protocol: the ladder and the sweeps time
# through the Gpu their workload built; this adapter is the one place that maps its names (timed,
# last_lag_us, reset_l2_priority, stream_sync, host_clock_us) onto the protocol's, and keeps each
# timed kernel's host enqueue time in order (the sweep's rows need them).

class GpuVerbs:
    def __init__(self, gpu: Any) -> None:
        self.gpu, self.timer = gpu, self
        self.lags: list[float] = []

    def time(self, launch: Callable[[], Any]) -> Sample:
        us = self.gpu.timed(launch)
        self.lags.append(self.gpu.last_lag_us)
        return Sample(us, self.gpu.last_lag_us, getattr(self.gpu, "last_discard", KEPT))

    def flush_l2(self) -> None:
        self.gpu.flush_l2()

    def reset_persisting(self) -> None:
        self.gpu.reset_l2_priority()

    def sync(self) -> None:
        self.gpu.stream_sync()

    def host_us(self) -> float:
        return self.gpu.host_clock_us()
