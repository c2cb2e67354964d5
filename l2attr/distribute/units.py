"""Run units on a Dask cluster and hand each result to the lead as it arrives.

A unit is a picklable function and its arguments. On its worker it runs inside `execute`, which
adds where it ran (GPU, host, worker) and when; a unit that runs Nsight Compute also holds the
GPU's profiling lock (a distributed.Semaphore named after the GPU's UUID: ncu takes a per-device
lock, so two profiling children on one GPU would wait on each other or fail, while different GPUs
profile in parallel). The lead's `on_result` writes the unit's rows into the run dir before the
next result is taken: a unit is on disk whole or not at all.

A unit whose worker died is re-run on another worker by the scheduler (cluster.py), and once
more alone at the end of the run (run_units says why); one that killed every worker it met, or
raised, is reported missing, never half-written, and the run's
other units go on. A UserError raised in a unit (a wrong kernel, a workload that does not fit) is
the user's to read: the remaining units are cancelled and the error is raised in the lead.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from l2attr.distribute.cluster import GPU_RESOURCE
from l2attr.distribute.where import Where, where_am_i
from l2attr.errors import UserError

NCU_LOCK_PREFIX = "l2attr-ncu-"


@dataclass(frozen=True)
class Unit:
    """One independent piece of a run: `key` names it in units.csv and in the scheduler."""

    key: str
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    ncu: bool = False            # runs Nsight Compute: one such unit per GPU at a time


@dataclass
class Arrived:
    """A unit's value as it came back from its worker, and where and when it was measured."""

    key: str
    value: Any
    where: Where
    started_utc: str
    wall_s: float

    def units_row(self) -> dict[str, Any]:
        """The row of schema.UNITS for this unit."""
        return {"unit": self.key, **self.where.columns(), "worker": self.where.worker,
                "started_utc": self.started_utc, "wall_s": round(self.wall_s, 3)}


@dataclass
class Outcome:
    done: list[str] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)    # unit key -> why

    def describe_missing(self) -> str:
        return "; ".join(f"{k} ({why})" for k, why in self.missing.items())


def execute(fn: Callable[..., Any], args: tuple[Any, ...], ncu: bool) -> tuple[Any, Where, str, float]:
    """What a worker runs for a unit (module-level so it pickles by reference)."""
    where = where_am_i()
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    if ncu:
        from distributed import Semaphore

        with Semaphore(max_leases=1, name=NCU_LOCK_PREFIX + where.gpu_uuid):
            value = fn(*args)
    else:
        value = fn(*args)
    return value, where, started, time.perf_counter() - t0


def gpu_slots(client: Any) -> int:
    """How many units the cluster runs at once: the GPU resources its workers offer."""
    workers = client.scheduler_info(n_workers=-1)["workers"].values()
    return max(1, int(sum((w.get("resources") or {}).get(GPU_RESOURCE, 0) for w in workers)))


def run_units(client: Any, units: list[Unit], on_result: Callable[[Arrived], None],
              log: Callable[[str], None] = print, tag: str = "") -> Outcome:
    """Run every unit (GPU=1 each), calling `on_result` in this process for each as it arrives.

    Units are handed out as GPUs free up, never queued on a worker ahead of time: when a worker
    dies the scheduler counts a failure against every unit assigned to it. That cannot be made
    airtight while several units are in flight: after one death fewer workers than units remain,
    so a rescheduled unit may wait behind a unit that kills its worker too, or finish there and
    lose its result with the worker before the lead has fetched it. So every unit lost with a
    worker (KilledWorker) is tried once more at the end, alone on the cluster: what is then
    missing killed the worker it ran on by itself."""
    out = Outcome()
    if not units:
        return out
    keys = [u.key for u in units]
    if len(set(keys)) != len(keys):
        raise ValueError(f"unit keys repeat: {sorted(k for k in set(keys) if keys.count(k) > 1)}")
    stamp = tag or f"{time.time_ns():x}"
    lost = _round(client, units, gpu_slots(client), f"@{stamp}", on_result, out)
    if lost:
        log(f"{len(lost)} unit(s) lost with a worker; each tried once more, alone: {', '.join(u.key for u in lost)}")
        for u in lost:
            del out.missing[u.key]
        _round(client, lost, 1, f"@{stamp}-alone", on_result, out)
    for key, why in out.missing.items():
        log(f"unit {key}: missing ({why})")
    return out


def _round(client: Any, units: list[Unit], slots: int, suffix: str,
           on_result: Callable[[Arrived], None], out: Outcome) -> list[Unit]:
    """One pass over `units` with at most `slots` in flight; returns those lost with a worker."""
    from collections import deque

    from distributed import KilledWorker, as_completed

    pending = deque(units)
    in_flight: dict[Any, Unit] = {}
    lost: list[Unit] = []
    done = as_completed()

    def submit_next() -> None:
        u = pending.popleft()
        fut = client.submit(execute, u.fn, u.args, u.ncu, key=u.key + suffix, pure=False,
                            resources={GPU_RESOURCE: 1})
        in_flight[fut] = u
        done.add(fut)

    for _ in range(min(slots, len(pending))):
        submit_next()
    try:
        for fut in done:
            unit = in_flight.pop(fut)
            try:
                value, where, started, wall = fut.result()
            except UserError:
                raise
            except Exception as exc:   # KilledWorker (lost workers), or the unit's own failure
                why = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
                out.missing[unit.key] = why[:300]
                if isinstance(exc, KilledWorker):
                    lost.append(unit)
            else:
                on_result(Arrived(unit.key, value, where, started, wall))
                out.done.append(unit.key)
            fut.release()
            if pending:
                submit_next()
    except BaseException:
        client.cancel(list(in_flight))
        raise
    return lost


class Counter:
    """The lead's one line per arrived unit: how far the run is, where the unit ran, how long."""

    def __init__(self, total: int, log: Callable[[str], None]) -> None:
        self.total, self.log, self.n = total, log, 0

    def said(self, a: Arrived) -> None:
        self.n += 1
        self.log(f"[{self.n}/{self.total}] {a.key}: {a.where.gpu_uuid} on {a.where.host}, {a.wall_s:.1f} s")


def missing_error(outcome: Outcome, run: Any, what: str = "units") -> UserError:
    """The one line a run with missing units ends with: which, why, and how to finish it."""
    return UserError(f"{len(outcome.missing)} {what} missing, nothing of them written: "
                     f"{outcome.describe_missing()}; the other units are in {run}; measure the missing ones "
                     f"with --resume {run}")
