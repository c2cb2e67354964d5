"""The time phase of a step: the answer's denominators and the flush's non-data cost.

The natural graph's replays (blocking timer: step_times.csv), the function called on its own
(blocking timer), torch's own replay of its capture, the function in a loop as a program runs it
(host clock, nothing queued ahead: the eager step), the call's own kernels under the profiler (the
figure the natural replay's kernels are held to), and the control kernel (a read of data never
resident, after the same kernel and after the clean flush).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import pandas as pd

from l2attr.schema import STEP_TIMES
from l2attr.vocab import L2Condition


def trace_calls(torch: Any, call: Callable[[], Any], repeats: int) -> pd.DataFrame:
    """The step function called on its own (not replayed), `repeats` times under the profiler as
    the arms are: per call, the sum of its kernels' CUPTI durations and their count. The answer holds
    the natural replay's kernel time to it, so a capture that ran another program (an eager twin, a
    branch the capture froze) is seen: kernels inside one call are the program's own, the launch
    gaps between them are not counted."""
    from l2attr.steps.measure.trace import Slots, launched, profiled

    slots = Slots()
    call()                                  # the state one call leaves the next, untraced
    torch.cuda.synchronize()

    def body() -> None:
        for i in range(repeats):
            with slots.range(torch, condition=L2Condition.NATURAL, step=i):
                call()
            torch.cuda.synchronize()
    trace = profiled(torch, body)
    rows = [r for r in launched(trace, slots) if not r["graph"]]
    if not rows:
        return pd.DataFrame({"kernel_us": [], "kernels": [], "names": []})
    df = pd.DataFrame(rows).sort_values(["step", "start_us"])
    by = df.groupby("step")
    return pd.DataFrame({"kernel_us": by["duration_us"].sum(), "kernels": by.size(),
                         "names": by["kernel"].agg(list)}).reset_index()


def kernel_difference(graph: list[str], call: list[str]) -> dict[str, list[str]]:
    """The kernels one side launches that the other does not (names with multiplicity, short):
    what a reader needs when the graph and the function called on its own disagree."""
    from collections import Counter

    g, c = Counter(graph), Counter(call)
    return {"only_in_graph": sorted(n[:120] for n in (g - c).elements()),
            "only_in_call": sorted(n[:120] for n in (c - g).elements())}


CONTROL_BYTES = 1 << 20          # the control kernel's slice: a short kernel's footprint in a decode step
CONTROL_KERNEL = "reduce_kernel"  # torch's sum over a slice launches one kernel of this name


def control_cost(torch: Any, flush: Callable[[], None], repeats: int, nbytes: int = CONTROL_BYTES) -> list[float]:
    """What a flush costs a kernel besides its data (code, constants, page-table entries): a sum over
    a slice no step leaves resident, right after the same kernel over another slice (natural) and
    after the clean flush (cold); per repeat, cold minus natural in µs (CUPTI durations)."""
    from l2attr.steps.measure.trace import KINETO_KERNEL, _events, profiled

    n = nbytes // 4
    slices = 4 * repeats + 4
    buf = torch.ones(slices * n, dtype=torch.float32, device="cuda")
    out = torch.empty((), dtype=torch.float32, device="cuda")
    at = iter(range(slices))

    def read() -> None:
        i = next(at)
        torch.sum(buf[i * n:(i + 1) * n], dim=0, out=out)

    read()                                             # the kernel's first launch (code load), untraced
    flush()                                            # the slices torch.ones just wrote leave L2
    torch.cuda.synchronize()

    def body() -> None:
        for i in range(repeats):
            for cold in ((False, True) if i % 2 == 0 else (True, False)):
                read()
                if cold:
                    flush()
                read()
                torch.cuda.synchronize()
    trace = profiled(torch, body)
    d = [float(e.get("dur", 0.0)) for e in sorted(_events(trace), key=lambda e: float(e.get("ts", 0)))
         if e.get("cat") == KINETO_KERNEL and CONTROL_KERNEL in str(e.get("name", ""))]
    if len(d) != 4 * repeats:
        return []
    out_us = []
    for i in range(repeats):
        a, b = d[4 * i + 1], d[4 * i + 3]                  # the second read of each pair
        nat, cold = (a, b) if i % 2 == 0 else (b, a)
        out_us.append(round(cold - nat, 4))
    return out_us


# -- the time phase: the answer's denominators and the control ------------------------------------
EAGER_CALLS = 5          # calls per timed eager loop: one host clock reading per EAGER_CALLS steps


@dataclass(frozen=True)
class Times:
    """What the time phase measured: the natural replay's step times, the call on its own (blocking
    timer), torch's own replay, the eager loop, the call's kernels traced, the control."""

    steps: pd.DataFrame
    call_us: list[float]
    torch_graph_us: list[float]
    eager_us: list[float]
    call_kernel_us: list[float]
    call_kernels: list[int]
    control_us: list[float]
    difference: dict[str, list[str]]        # the kernels only the graph or only the call launches ({}: none)

    def facts(self) -> dict[str, Any]:
        return {"call_us": self.call_us, "torch_graph_us": self.torch_graph_us, "eager_us": self.eager_us,
                "call_kernel_us": self.call_kernel_us, "call_kernels": self.call_kernels,
                "control_us": self.control_us}


def times(dev: Any, natural: Callable[[], Any], call: Callable[[], Any] | None, graph_replay: Callable[[], Any] | None,
          repeats: int, flush: Callable[[], None], names: list[str]) -> Times:
    """The time phase, in one place: `call` None for the user's own graph (no function to call);
    `names`: the graph's kernels in node order, held against the call's."""
    torch = dev.torch
    steps = time_steps(dev, natural, repeats)
    if call is None:
        return Times(steps, [], [], [], [], [], control_cost(torch, flush, repeats), {})
    calls = trace_calls(torch, call, repeats)
    diff = kernel_difference(names, list(calls["names"].iloc[0])) if len(calls) else {}
    return Times(steps, _time_call(dev, call, repeats), _time_call(dev, graph_replay, repeats) if graph_replay else [],
                 time_eager(torch, call, repeats), [round(float(x), 3) for x in calls["kernel_us"]],
                 [int(x) for x in calls["kernels"]], control_cost(torch, flush, repeats),
                 diff if diff and (diff["only_in_graph"] or diff["only_in_call"]) else {})


def time_steps(dev: Any, step: Callable[[], Any], repeats: int) -> pd.DataFrame:
    """Blocking-timer events around the step's launches (no launch lag before the first kernel; the
    host gaps between an eager step's kernels are part of it and stay in)."""
    from l2attr.measure.timer import BlockingTimer

    timer = BlockingTimer(dev.torch, dev.cupy, timeout_ms=2000.0)
    rows = []
    for i in range(2 * repeats + 2):
        s = timer.time(step)
        if i >= 2:                                       # two more warm-ups
            rows.append({"repeat": i - 2, "step_us": s.time_us, "discard": s.discard})
    timer.close()
    return pd.DataFrame(rows, columns=list(STEP_TIMES.columns))


def _time_call(dev: Any, call: Callable[[], Any], repeats: int) -> list[float]:
    """The step function called on its own (not replayed): what the user's program runs. A call
    that launches more kernels than the launch queue holds behind the blocking kernel cannot be
    timed so (the host blocks on a launch and never releases the kernel, which times out): when a
    warm-up times out it is given up at once, with no samples, rather than every repeat waiting out
    the timeout; the answer then has no call time and its other denominators stand."""
    from l2attr.measure.timer import BlockingTimer
    from l2attr.vocab import Discard

    timer = BlockingTimer(dev.torch, dev.cupy, timeout_ms=2000.0)
    out = []
    for i in range(repeats + 2):
        r = timer.time(call)
        if i < 2 and r.discard == Discard.TIMEOUT.value:
            break
        if i >= 2 and not r.discard:
            out.append(round(float(r.time_us), 3))
    timer.close()
    return out


def time_eager(torch: Any, call: Callable[[], Any], repeats: int, per: int = EAGER_CALLS) -> list[float]:
    """The step function as a program's loop runs it: `per` calls back to back between two
    synchronisations, host clock, per call in µs; no launch is queued ahead of the first (no
    blocking kernel), so host time between launches that the GPU waits for is in, as it is for
    the program."""
    call()
    torch.cuda.synchronize()
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(per):
            call()
        torch.cuda.synchronize()
        out.append(round((time.perf_counter() - t) * 1e6 / per, 3))
    return out
