"""How one sweep call is timed, on the verbs of measure/gpu.py (or a fake on a CPU).

Device mode (timer `kernel`): the pin, the polluting read and the consumer are each timed with
CUDA events behind a GPU spin (Gpu.timed, the ladder's kernel timer; every timed kernel ends in a
sync, so the pin -> sync -> consumer order is the artifact's); a host call before the consumer
(the window's cuStreamSetAttribute) is timed on the host clock.
Host mode (timer `wall`): the whole call on the host clock, what a caller waits for:
[prepare] [pin -> stream sync] [pollute -> stream sync] consumer -> stream sync.
Set-up that emulates the machine rather than costing the caller (the capacity sweep's occupied
L2) runs before each call, outside every timer.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable

from l2attr.sweep.schedule import Call
from l2attr.vocab import SweepRole, Timer

Launch = Callable[[], None]


@dataclass
class ArmOps:
    """What one arm does around the consumer; None where it does nothing."""

    consumer: Callable[[int, int], Launch]            # (table, batch) -> launch
    pin: Callable[[int], Launch] | None = None        # (table) -> launch of its pin kernel
    pollute: Launch | None = None                     # streaming read of unrelated data
    prepare: Callable[[int], None] | None = None      # charged host call before the consumer
    setup: Callable[[int], None] | None = None        # uncharged, outside timers (it syncs itself)


Ranges = Callable[[Call, SweepRole], Any]    # -> a context manager around one kernel's launch


def _no_range(c: Call, role: SweepRole) -> Any:
    return nullcontext()


def run_calls(gpu: Any, ops: ArmOps, calls: list[Call], device_timed: bool,
              ranges: Ranges | None = None) -> list[dict[str, Any]]:
    """Run the calls in order; rows (one per timed thing) of the measured ones. `ranges` puts an
    NVTX range around kernels (device mode) for the profiler (sweep/dram.py)."""
    rows: list[dict[str, Any]] = []
    for c in calls:
        timed = _device_call(gpu, ops, c, ranges or _no_range) if device_timed else _host_call(gpu, ops, c)
        if c.warmup:
            continue
        for role, timer, value, lag in timed:
            rows.append({"group": c.group, "table": c.table, "batch": c.batch, "position": c.position,
                         "role": role.value, "timer": timer.value, "time_us": value, "launch_lag_us": lag})
    return rows


Timed = list[tuple[SweepRole, Timer, float, float]]


def _device_call(gpu: Any, ops: ArmOps, c: Call, ranges: Ranges) -> Timed:
    nan = float("nan")
    out: Timed = []
    if ops.setup is not None:
        ops.setup(c.table)
    if ops.prepare is not None:
        t0 = gpu.host_clock_us()
        ops.prepare(c.table)
        out.append((SweepRole.PREPARE, Timer.WALL, gpu.host_clock_us() - t0, nan))
    if ops.pin is not None and c.pin_first:
        with ranges(c, SweepRole.PIN):
            out.append((SweepRole.PIN, Timer.KERNEL, gpu.timed(ops.pin(c.table)), gpu.last_lag_us))
    if ops.pollute is not None:
        with ranges(c, SweepRole.POLLUTE):
            out.append((SweepRole.POLLUTE, Timer.KERNEL, gpu.timed(ops.pollute), gpu.last_lag_us))
    with ranges(c, SweepRole.CONSUMER):
        out.append((SweepRole.CONSUMER, Timer.KERNEL, gpu.timed(ops.consumer(c.table, c.batch)),
                    gpu.last_lag_us))
    return out


def _host_call(gpu: Any, ops: ArmOps, c: Call) -> Timed:
    if ops.setup is not None:
        ops.setup(c.table)
    consumer = ops.consumer(c.table, c.batch)
    pin = ops.pin(c.table) if ops.pin is not None and c.pin_first else None
    t0 = gpu.host_clock_us()
    if ops.prepare is not None:
        ops.prepare(c.table)
    if pin is not None:
        pin()
        gpu.stream_sync()
    if ops.pollute is not None:
        ops.pollute()
        gpu.stream_sync()
    consumer()
    gpu.stream_sync()
    return [(SweepRole.CALL, Timer.WALL, gpu.host_clock_us() - t0, float("nan"))]
