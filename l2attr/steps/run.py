"""`l2attr.step(fn, *args)`: time every kernel of a step with the L2 as the program leaves it and
with the L2 made cold right before it, into a run dir.

Warm-up steps run first (allocator, autotuning, first-call compiles). Then `repeats` pairs of
steps, natural and cold alternating (which comes first alternates too, so drift and ordering touch
both alike), all inside one torch.profiler session: kernel durations are CUPTI's (no events, no
launch lag), matched to ops by step/trace.py. The op sequence must be the same in every step,
or the per-kernel pairing means nothing: a step that differs is refused.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from l2attr import atomic
from l2attr.errors import UserError
from l2attr.rundir import RunDir, command_line
from l2attr.schema import STEP_KERNELS, STEP_OPS, STEP_TIMES
from l2attr.steps.record import OpRecord, make_recorder
from l2attr.steps.trace import kernels
from l2attr.vocab import RunKind, StepCondition, TimerKind
from l2attr.names import LEGACY_PREFIX, STEP_TRACE, check_label

KIND = RunKind.STEP.value


def ops_frame(ops: list[OpRecord]) -> pd.DataFrame:
    return pd.DataFrame([{"op_index": o.index, "op": o.op, "module": o.module, "flushed_in_cold": o.flushed,
                          "inputs": json.dumps(o.inputs), "outputs": json.dumps(o.outputs)} for o in ops],
                        columns=list(STEP_OPS.columns))


def time_steps(dev: Any, fn: Callable[..., Any], args: tuple, kwargs: dict, repeats: int) -> pd.DataFrame:
    """The whole step on the GPU clock, untraced and unrecorded: blocking-timer events around the
    step's launches (no launch lag before the first kernel; the host gaps between its kernels are
    part of an eager step and stay in). What a pin on a side stream must shorten to pay."""
    from l2attr.measure.timer import BlockingTimer

    timer = BlockingTimer(dev.torch, dev.cupy, timeout_ms=2000.0)
    rows = []
    for i in range(2 * repeats + 2):
        s = timer.time(lambda: fn(*args, **kwargs))
        if i >= 2:                                       # two more warm-ups
            rows.append({"repeat": i - 2, "step_us": s.time_us, "discard": s.discard})
    timer.close()
    return pd.DataFrame(rows, columns=list(STEP_TIMES.columns))


def _same_sequence(a: list[OpRecord], b: list[OpRecord]) -> bool:
    return [o.op for o in a] == [o.op for o in b]


def run_step(fn: Callable[..., Any], *args: Any, name: str = RunKind.STEP.value, repeats: int = 10, warmup: int = 3,
             out: Path | str = "runs", log: Callable[[str], None] = print, keep_trace: bool = False,
             **kwargs: Any) -> Path:
    """Measure `fn(*args, **kwargs)` as one step; the run dir's path."""
    from l2attr.experiment.device import Device

    check_label(name, "step name")
    if repeats < 2 or warmup < 0:
        raise UserError("step: repeats must be >= 2 and warmup >= 0")
    dev = Device(TimerKind.SPIN.value, spin_us=0.0)
    torch = dev.torch
    t0 = time.perf_counter()
    for _ in range(warmup):
        fn(*args, **kwargs)
    torch.cuda.synchronize()
    first: list[OpRecord] | None = None
    cold_ops: list[OpRecord] | None = None
    plan = [(i, c) for i in range(repeats) for c in ((StepCondition.NATURAL, StepCondition.COLD) if i % 2 == 0
                                                     else (StepCondition.COLD, StepCondition.NATURAL))]
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for i, cond in plan:
            flush = dev.flush_l2 if cond == StepCondition.COLD else None
            if flush is None:
                dev.flush_l2()          # both arms start from the same clean state, outside the step
                fn(*args, **kwargs)     # a step as the program leaves L2 for the next: run once untraced
            torch.cuda.synchronize()
            rec = make_recorder(flush)
            with torch.profiler.record_function(LEGACY_PREFIX + STEP_TRACE.build(condition=cond.value, step=i)), \
                    rec.modules, rec:
                fn(*args, **kwargs)
            torch.cuda.synchronize()
            if cond == StepCondition.COLD and cold_ops is None:
                cold_ops = rec.ops         # the ops table: a cold step's, which says what was flushed
            first = first or rec.ops
            if not _same_sequence(first, rec.ops):
                raise UserError(f"step {name}: step {i} ({cond.value}) ran other ops than the first "
                                "(the step must be deterministic to pair its kernels)")
    step_times = time_steps(dev, fn, args, kwargs, repeats)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        raw = Path(path).read_bytes()
        trace = json.loads(raw)
    k = kernels(trace)
    if k.empty:
        raise UserError(f"step {name}: no kernels were traced inside the step (is it on the GPU?)")
    run = RunDir.create(Path(out), name, {"kind": KIND, "step": {"name": name, "repeats": repeats, "warmup": warmup,
                                                                 "function": f"{getattr(fn, '__module__', '?')}:"
                                                                             f"{getattr(fn, '__qualname__', '?')}"},
                                          "command": command_line(), **dev.facts(),
                                          "cold": "L2 read-flushed (2x L2) after cudaCtxResetPersistingL2Cache "
                                                  "before every op that is not a view"})
    if keep_trace:
        import gzip

        atomic.write_bytes(run.path / "trace.json.gz", gzip.compress(raw))
    run.write(STEP_OPS, ops_frame(cold_ops or []))
    run.write(STEP_TIMES, step_times)
    run.write(STEP_KERNELS, k)
    run.update_manifest(status="complete", timings={"total_s": round(time.perf_counter() - t0, 2)},
                        persisting_reset=bool(dev.reset_ok))
    dev.close()
    log(f"step {name}: {repeats} natural + {repeats} cold steps, {len(k) // (2 * repeats)} kernels each -> {run.path}")
    return run.path
