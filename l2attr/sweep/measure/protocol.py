"""In which order a sweep point's table calls run, and how one call is timed: the sweep's arms on
the one cell protocol (measure/cell.py). Why one module: the order is the protocol's first half
(which table, which batch, whether a pin comes first); the timing its second.

Device mode (timer `kernel`): the pin (the producer), the polluting read (`between`) and the
consumer are each timed behind the run's kernel timer (Gpu.timed; every timed kernel ends in a
sync, so the pin -> sync -> consumer order is the artifact's); the host call right before the
consumer (the window's cuStreamSetAttribute, `prepare`) is timed on the host clock.
Host mode (timer `wall`): the whole call on the host clock, what a caller waits for:
[pin -> stream sync] [pollute -> stream sync] [prepare] consumer -> stream sync.
Set-up that changes the machine's state rather than costing the caller (the occupy sweep's held
L2) runs before each call, outside every timer.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable

from l2attr.measure.cell import CallOps, GpuVerbs, device_call, host_call
from l2attr.vocab import L2Condition, Order, Role, Timer


# -- the order of table calls at one point -------------------------------------------------------
# Pure data, so the order can be checked by hand on a CPU. A *group* is one pin and the k consumer
# calls it serves, per table. Back to back, table t's k calls follow its pin directly; interleaved
# (the artifact's loop), batch after batch over all tables, each table pinned before its first call
# of the group, so the other tables' pins and calls run between two calls of one table. With k = 1
# both are the artifact's loop.

@dataclass(frozen=True)
class Call:
    group: int        # pin group (warm-up groups are negative)
    table: int
    batch: int        # row of the uploaded index stream (cycled when k * groups exceeds it)
    position: int     # 1..k: which call after the pin
    pin_first: bool   # a pinning arm pins this table right before this call

    @property
    def warmup(self) -> bool:
        return self.group < 0


def schedule(order: Order, k: int, groups: int, tables: int, batches: int,
             warmup_groups: int = 1) -> list[Call]:
    """Calls in run order: `warmup_groups` artifact-loop batches (k = 1, not kept), then `groups`
    measured groups of k calls per table. Batches cycle through the `batches` uploaded ones,
    measured calls starting after the warm-up's."""
    if k < 1 or groups < 0 or tables < 1 or batches < 1:
        raise ValueError(f"bad schedule: k={k} groups={groups} tables={tables} batches={batches}")
    calls = [Call(g - warmup_groups, t, g % batches, 1, True)
             for g in range(warmup_groups) for t in range(tables)]
    first = warmup_groups
    for g in range(groups):
        base = first + g * k
        if order == Order.BACK_TO_BACK:
            calls += [Call(g, t, (base + j) % batches, j + 1, j == 0)
                      for t in range(tables) for j in range(k)]
        else:
            calls += [Call(g, t, (base + j) % batches, j + 1, j == 0)
                      for j in range(k) for t in range(tables)]
    return calls



# -- one call, timed -----------------------------------------------------------------------------

Launch = Callable[[], None]


@dataclass
class ArmOps:
    """What one arm does around the consumer; None where it does nothing."""

    consumer: Callable[[int, int], Launch]            # (table, batch) -> launch
    pin: Callable[[int], Launch] | None = None        # (table) -> launch of its pin kernel
    pollute: Launch | None = None                     # streaming read of unrelated data
    prepare: Callable[[int], None] | None = None      # charged host call before the consumer
    setup: Callable[[int], None] | None = None        # uncharged, outside timers (it syncs itself)


Ranges = Callable[[Call, Role], Any]    # -> a context manager around one kernel's launch


def _no_range(c: Call, role: Role) -> Any:
    return nullcontext()


def run_calls(gpu: Any, ops: ArmOps, calls: list[Call], device_timed: bool,
              ranges: Ranges | None = None) -> list[dict[str, Any]]:
    """Run the calls in order; rows (one per timed thing) of the measured ones. `ranges` puts an
    NVTX range around kernels (device mode) for the profiler (sweep/measure/dram.py). Each call goes
    through the one cell protocol (measure/cell.py): pin = producer, pollute = between."""
    rows: list[dict[str, Any]] = []
    verbs = GpuVerbs(gpu)
    for c in calls:
        timed = _device_call(verbs, ops, c, ranges or _no_range) if device_timed else _host_call(verbs, ops, c)
        if c.warmup:
            continue
        for role, timer, value, lag in timed:
            rows.append({"group": c.group, "table": c.table, "batch": c.batch, "position": c.position,
                         "role": role.value, "timer": timer.value, "time_us": value, "launch_lag_us": lag})
    return rows


Timed = list[tuple[Role, Timer, float, float]]
ROLE_OF = {Role.PRODUCER: Role.PIN, Role.POLLUTE: Role.POLLUTE, Role.CONSUMER: Role.CONSUMER}


def _cell_ops(ops: ArmOps, c: Call) -> CallOps:
    table = c.table
    return CallOps(consumer=ops.consumer(c.table, c.batch),
                   producer=ops.pin(table) if ops.pin is not None and c.pin_first else None,
                   prepare=(lambda: ops.prepare(table)) if ops.prepare is not None else None,
                   between=ops.pollute, setup=(lambda: ops.setup(table)) if ops.setup is not None else None)


def _device_call(verbs: GpuVerbs, ops: ArmOps, c: Call, ranges: Ranges) -> Timed:
    nan = float("nan")
    verbs.lags = []
    cell_ops = _cell_ops(ops, c)
    r = device_call(verbs, cell_ops, L2Condition.NATURAL, c.position,
                    lambda role, call: ranges(c, ROLE_OF.get(role, Role.CONSUMER)))
    lags = iter(verbs.lags)
    out: Timed = []
    if cell_ops.prepare is not None:
        out.append((Role.PREPARE, Timer.WALL, r["prepare_wall_us"], nan))
    for present, role, key in ((cell_ops.producer, Role.PIN, "producer_time_us"),
                               (cell_ops.between, Role.POLLUTE, "between_time_us"),
                               (cell_ops.consumer, Role.CONSUMER, "consumer_time_us")):
        if present is not None:
            out.append((role, Timer.KERNEL, r[key], next(lags)))
    return out


def _host_call(verbs: GpuVerbs, ops: ArmOps, c: Call) -> Timed:
    r = host_call(verbs, _cell_ops(ops, c), L2Condition.NATURAL, c.position)
    return [(Role.CALL, Timer.WALL, r["call_wall_us"], float("nan"))]
