"""`l2attr.step(fn, *args)`: time every kernel of a step with the L2 as the program leaves it and
with the L2 made cold right before it, into a run dir; then the top edges, measured apart.

Warm-up steps run first (allocator, autotuning, first-call compiles). Then `repeats` pairs of
steps, natural and cold alternating (which comes first alternates too, so drift and ordering touch
both alike), all inside one torch.profiler session: kernel durations are CUPTI's (no events, no
launch lag), matched to ops by step/trace.py. The op sequence must be the same in every step,
or the per-kernel pairing means nothing: a step that differs is refused. With `graph=True` the
natural steps are replays of a CUDA graph captured from the function (steps/graph.py says how
the arms are made then). With `edges=N` the N top producer -> consumer edges are measured by
selective eviction (steps/edges.py) into step_edges.csv.
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
from l2attr.schema import STEP_EDGES, STEP_KERNELS, STEP_OPS, STEP_TIMES
from l2attr.steps.record import OpRecord, make_recorder
from l2attr.steps.surgery_run import time_steps
from l2attr.steps.trace import kernels
from l2attr.vocab import Command, L2Condition, StepMode, TimerKind
from l2attr.names import LEGACY_PREFIX, STEP_TRACE, check_label
from l2attr.analysis.step_load import COMPLETE

KIND = Command.STEP.value
SURGERY_COLD = ("every kernel node of the captured graph after its own flush node (clean: un-pin, demote, "
                "read of 2x L2; dirty: then one L2 written)")
COLD_METHOD = "L2 read-flushed (2x L2) after cudaCtxResetPersistingL2Cache before every op that is not a view"
NO_OPS = ("the step dispatched no aten op (does it replay a CUDA graph? pass the function the graph "
          "captures with graph=True: l2attr captures it and replays it)")


def ops_frame(ops: list[OpRecord]) -> pd.DataFrame:
    return pd.DataFrame([{"op_index": o.index, "op": o.op, "module": o.module, "flushed_in_cold": o.flushed,
                          "inputs": json.dumps(o.inputs), "outputs": json.dumps(o.outputs), "view": o.view}
                         for o in ops], columns=[*STEP_OPS.columns, *STEP_OPS.optional])


def _traced(dev: Any, fn: Callable[..., Any], args: tuple, kwargs: dict, repeats: int, name: str,
            replay: Callable[[], Any] | None) -> tuple[bytes, list[OpRecord]]:
    """The natural and cold steps in one profiler session: (the kineto trace, a cold step's ops)."""
    torch = dev.torch
    first: list[OpRecord] | None = None
    cold_ops: list[OpRecord] | None = None
    plan = [(i, c) for i in range(repeats) for c in ((L2Condition.NATURAL, L2Condition.COLD) if i % 2 == 0
                                                     else (L2Condition.COLD, L2Condition.NATURAL))]
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for i, cond in plan:
            label = LEGACY_PREFIX + STEP_TRACE.build(condition=cond.value, step=i)
            if cond == L2Condition.NATURAL:
                dev.flush_l2()          # both arms start from the same clean state, outside the step
                (replay or (lambda: fn(*args, **kwargs)))()     # a step leaves L2 for the next: once untraced
                if replay is not None:
                    torch.cuda.synchronize()
                    with torch.profiler.record_function(label):
                        replay()
                    torch.cuda.synchronize()
                    continue
            torch.cuda.synchronize()
            rec = make_recorder(dev.flush_l2 if cond == L2Condition.COLD else None)
            with torch.profiler.record_function(label), rec.modules, rec:
                fn(*args, **kwargs)
            torch.cuda.synchronize()
            if not rec.ops:
                raise UserError(f"step {name}: {NO_OPS}")
            if cond == L2Condition.COLD and cold_ops is None:
                cold_ops = rec.ops         # the ops table: a cold step's, which says what was flushed
            first = first or rec.ops
            if [o.op for o in first] != [o.op for o in rec.ops]:
                raise UserError(f"step {name}: step {i} ({cond.value}) ran other ops than the first "
                                "(the step must be deterministic to pair its kernels)")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        raw = Path(path).read_bytes()
    return raw, cold_ops or []


def _edges(dev: Any, fn: Callable[..., Any], args: tuple, kwargs: dict, k: pd.DataFrame, ops: list[OpRecord],
           n: int, repeats: int) -> pd.DataFrame | None:
    """The top `n` edges of the step, measured by selective eviction (None: no edge to measure)."""
    from l2attr.analysis.step import answer
    from l2attr.analysis.step_edges import candidates
    from l2attr.steps.edges import EdgePlan, measure_edges

    frame = ops_frame(ops)
    cand = candidates(answer(k, frame).edges, frame, k[k["op_index"] >= 0], n)
    plans = [EdgePlan(int(r.producer), int(r.consumer), int(r.bytes)) for r in cand.itertuples()]
    if not plans:
        return None
    return measure_edges(dev, fn, args, kwargs, plans, repeats, [o.op for o in ops])


def run_step(fn: Callable[..., Any], *args: Any, name: str = Command.STEP.value, repeats: int = 10, warmup: int = 3,
             out: Path | str = "runs", log: Callable[[str], None] = print, keep_trace: bool = False,
             edges: int = 5, graph: bool = False, facts: dict[str, Any] | None = None, eager: bool = False,
             **kwargs: Any) -> Path:
    """Measure `fn(*args, **kwargs)` as one step; the run dir's path. By default the step is captured
    into a CUDA graph and every kernel is made cold on its own (steps/surgery_run.py); a step that
    cannot be captured falls back to the per-op eager method, and its run says why. `eager`: the
    per-op method on purpose; `graph`: kept for old callers (surgery is the graph method now);
    `edges`: how many of the top edges to measure apart (0: none); `facts`: what the step is."""
    from l2attr.experiment.device import Device

    check_label(name, "step name")
    if repeats < 2 or warmup < 0 or edges < 0:
        raise UserError("step: repeats must be >= 2, warmup >= 0 and edges >= 0")
    check_inputs(args, kwargs)
    dev = Device(TimerKind.SPIN.value, spin_us=0.0)
    fallback = ""
    if not eager:
        from l2attr.steps.surgery import UncapturableStep
        from l2attr.steps.surgery_run import measure

        t0 = time.perf_counter()
        try:
            got = measure(dev, fn, args, kwargs, repeats, warmup, log, edges)
        except UncapturableStep as exc:
            fallback = str(exc)
            log(f"step {name}: cannot be captured into a CUDA graph ({fallback}): per-op eager method")
        else:
            return _write_surgery(dev, fn, args, kwargs, got, name, repeats, warmup, out, log, edges, facts, t0)
    if callable(fn) is False:
        raise UserError("step: the step must be a function (or a torch.cuda.CUDAGraph)")
    return _run_eager(dev, fn, args, kwargs, name, repeats, warmup, out, log, keep_trace, edges, graph,
                      facts, fallback)


def check_inputs(args: tuple, kwargs: dict) -> None:
    """A CPU tensor among the step's inputs: one clear line before anything runs."""
    try:
        import torch
    except ImportError:
        return
    for i, a in enumerate([*args, *kwargs.values()]):
        if isinstance(a, torch.Tensor) and not a.is_cuda:
            raise UserError(f"step: input {i} is a {a.device} tensor: a step's tensors must be on the GPU "
                            "(move it with .cuda())")


def _write_surgery(dev: Any, fn: Callable[..., Any], args: tuple, kwargs: dict, got: dict[str, Any], name: str,
                   repeats: int, warmup: int, out: Path | str, log: Callable[[str], None], edges: int,
                   facts: dict[str, Any] | None, t0: float) -> Path:
    k = got["kernels"]
    run = RunDir.create(Path(out), name, {
        "kind": KIND, "step": {"name": name, "repeats": repeats, "warmup": warmup, "mode": StepMode.SURGERY.value,
                               "edges": edges, "facts": facts or {},
                               "function": f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', '?')}"},
        "command": command_line(), **dev.facts(), "cold": SURGERY_COLD, "surgery": got["facts"]})
    run.write(STEP_OPS, ops_frame(got["ops"]))
    run.write(STEP_TIMES, got["times"])
    run.write(STEP_KERNELS, k[[*STEP_KERNELS.columns, "node"]])
    t_main = time.perf_counter() - t0
    if edges and got.get("edges") is not None:
        from l2attr.steps import graph_edges
        from l2attr.schema import KERNEL_EDGES

        run.write(STEP_EDGES, got["edges"])
        edge_note = {"edges_method": graph_edges.METHOD, "edges_level": graph_edges.LEVEL, KERNEL_EDGES: True}
    else:
        edge_note = _edges_into(run, dev, fn, args, kwargs, k, got["ops"], edges, repeats, name, log,
                                op_level=True) if edges and got["ops"] else (
            {"edges_error": "no eager op was recorded: the step has no op-level edges"} if edges else {})
        if edges and got.get("edges_why"):
            edge_note["kernel_edges_error"] = got["edges_why"]
        if edges:
            from l2attr.schema import KERNEL_EDGES

            edge_note[KERNEL_EDGES] = False
    total = time.perf_counter() - t0
    run.update_manifest(status=COMPLETE, timings={"total_s": round(total, 2), "main_s": round(t_main, 2),
                                                    "edges_s": round(total - t_main, 2)},
                        persisting_reset=False, **edge_note)
    dev.close()
    log(f"step {name} (graph surgery): {repeats} replays of each of {', '.join(sorted(k['condition'].unique()))}, "
        f"{k['node'].nunique()} kernels each -> {run.path}")
    return run.path


def _edges_into(run: RunDir, dev: Any, fn: Callable[..., Any], args: tuple, kwargs: dict, k: pd.DataFrame,
                ops: list[OpRecord], edges: int, repeats: int, name: str, log: Callable[[str], None],
                op_level: bool = False) -> dict[str, Any]:
    """Measure the top edges apart into step_edges.csv; the manifest note (method, or why not)."""
    from l2attr.steps.edges import METHOD as EDGE_METHOD

    cols = [c for c in STEP_KERNELS.columns]
    kk = k[k["op_index"] >= -1][cols] if op_level else k
    try:         # the step's own answer is written: an edge that cannot be measured says so, and loses nothing
        rows = _edges(dev, fn, args, kwargs, kk, ops, edges, repeats)
    except (UserError, RuntimeError) as exc:
        note = {"edges_error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
        log(f"step {name}: edges not measured: {note['edges_error']}")
        return note
    if rows is None:
        return {}
    run.write(STEP_EDGES, rows)
    return {"edges_method": EDGE_METHOD, **({"edges_level": "op-level: measured on eager re-execution of the "
                                                            "step's ops"} if op_level else {})}


def _run_eager(dev: Any, fn: Callable[..., Any], args: tuple, kwargs: dict, name: str, repeats: int, warmup: int,
               out: Path | str, log: Callable[[str], None], keep_trace: bool, edges: int, graph: bool,
               facts: dict[str, Any] | None, fallback: str) -> Path:
    """The per-op eager method: a read flush before every op (its later kernels stay warm)."""
    torch = dev.torch
    t0 = time.perf_counter()
    replay, capture_ops, counts = None, None, {}
    if graph:
        from l2attr.steps.graph import capture

        g, capture_ops = capture(torch, fn, args, kwargs, warmup)
        replay = g.replay
    else:
        for _ in range(warmup):
            fn(*args, **kwargs)
    torch.cuda.synchronize()
    raw, cold_ops = _traced(dev, fn, args, kwargs, repeats, name, replay)
    k = kernels(json.loads(raw), graph=graph)
    if graph:
        from l2attr.steps.graph import align

        k, counts = align(k)
        counts["capture_ops_same"] = [o.op for o in capture_ops or []] == [o.op for o in cold_ops]
    if k.empty:
        raise UserError(f"step {name}: no kernels were traced inside the step (is it on the GPU?)")
    step_times = time_steps(dev, replay or (lambda: fn(*args, **kwargs)), repeats)
    t_main = time.perf_counter() - t0
    from l2attr.steps.graph import METHOD as GRAPH_METHOD

    mode = StepMode.GRAPH if graph else StepMode.EAGER
    run = RunDir.create(Path(out), name, {
        "kind": KIND, "step": {"name": name, "repeats": repeats, "warmup": warmup, "mode": mode.value,
                               "edges": edges, "facts": facts or {},
                               "function": f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', '?')}"},
        "command": command_line(), **dev.facts(), "cold": COLD_METHOD,
        **({"graph": {**GRAPH_METHOD, **counts}} if graph else {}),
        **({"fallback": fallback} if fallback else {})})
    if keep_trace:
        import gzip

        atomic.write_bytes(run.path / "trace.json.gz", gzip.compress(raw))
    run.write(STEP_OPS, ops_frame(cold_ops))
    run.write(STEP_TIMES, step_times)
    run.write(STEP_KERNELS, k)
    edge_note = _edges_into(run, dev, fn, args, kwargs, k, cold_ops, edges, repeats, name, log) if edges else {}
    total = time.perf_counter() - t0
    run.update_manifest(status=COMPLETE, timings={"total_s": round(total, 2), "main_s": round(t_main, 2),
                                                    "edges_s": round(total - t_main, 2)},
                        persisting_reset=bool(dev.reset_ok), **edge_note)
    dev.close()
    n_nat = int(k[k["condition"] == L2Condition.NATURAL.value].groupby("step").size().median())
    measured = f", edges: {edge_note.get('edges_error', 'measured')}" if edges else ""
    log(f"step {name} ({mode.value}): {repeats} natural + {repeats} cold steps, {n_nat} kernels each{measured}"
        f" -> {run.path}")
    return run.path
