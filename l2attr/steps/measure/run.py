"""Measure one step into a run dir: one spec in, one writer out, whichever method measured it.

The spec (`StepSpec`, frozen) says what to run and how often; `run_step` measures it by graph
surgery (steps/measure/surgery_run.py: every kernel node of the captured step natural against its cold
arms) or, where the step cannot be captured or eager is asked for, per op (a read flush before
every op under the dispatch-mode recorder; its later kernels stay warm, and the run says so).
Both give a `SurgeryRun`-shaped record that one writer turns into the run dir; the top edges are
then measured apart. Which edges is the reader's question (steps/analyse/edges.py), so the caller
passes the choice in (`choose_edges`): this producer never imports the analysis layer.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import pandas as pd

from l2attr import atomic
from l2attr.errors import UserError
from l2attr.rundir import COMPLETE, RunDir, command_line
from l2attr.schema import KERNEL_EDGES, STEP_EDGES, STEP_KERNELS, STEP_OPS, STEP_TIMES
from l2attr.steps.declare import NodeBytes, StepOptions
from l2attr.steps.measure.record import OpRecord, make_recorder
from l2attr.steps.measure.trace import SLOTS_KEY
from l2attr.steps.measure.timing import time_steps
from l2attr.steps.measure.surgery_run import SurgeryRun
from l2attr.vocab import Command, L2Condition, StepMode, TimerKind

KIND = Command.STEP.value
WRITE_BACK_CSV = "step_write_back.csv"      # per kernel node: the write-back the matched arm writes
SURGERY_COLD = ("every kernel node of the captured graph after its own flush node (clean: un-pin, demote, "
                "read of 2x L2; matched: then the kernel's own inherited write-back; dirty: then one L2 written)")
COLD_METHOD = "L2 read-flushed (2x L2) after cudaCtxResetPersistingL2Cache before every op that is not a view"
NO_OPS = ("the step dispatched no aten op (does it replay a CUDA graph? pass the torch.cuda.CUDAGraph itself, "
          "captured with keep_graph=True)")
# (kernels, ops table, n) -> [(producer, consumer, bytes)]: the op-level edges to measure apart
EdgeChooser = Callable[[pd.DataFrame, pd.DataFrame, int], list[tuple[int, int, int]]]


@dataclass(frozen=True)
class StepSpec:
    """What to measure: the step and its inputs, how (its options: steps/declare.py), and what else
    the answer needs (the write-back per kernel node for the matched arm; a stopping rule)."""

    fn: Callable[..., Any]
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    options: StepOptions = field(default_factory=StepOptions)
    write_back: NodeBytes | None = None     # steps/declare.py node_bytes: the matched arm's input
    until: Any = None              # a stopping rule (surgery_run.StopRule): more repeats while undecided

    def check(self) -> None:
        """What the options cannot say alone (each option was checked by its model)."""
        if self.until is not None and not callable(self.until):
            raise UserError("step: until must be a stopping rule (a function of the kernels so far), or None")
        if (self.until is not None) != self.options.until_decided:
            raise UserError("step: a stopping rule (until) goes with until_decided, and only with it")
        check_inputs(self.args, dict(self.kwargs))


def ops_frame(ops: list[OpRecord]) -> pd.DataFrame:
    return pd.DataFrame([{"op_index": o.index, "op": o.op, "module": o.module, "flushed_in_cold": o.flushed,
                          "inputs": json.dumps(o.inputs), "outputs": json.dumps(o.outputs), "view": o.view}
                         for o in ops], columns=[*STEP_OPS.columns, *STEP_OPS.optional])


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


def run_step(spec: StepSpec, log: Callable[[str], None] = print, choose_edges: EdgeChooser | None = None,
             device: Any = None) -> Path:
    """Measure `spec` into a new run dir under its options' `out`; the run dir's path."""
    spec.check()
    o = spec.options
    if device is None:
        from l2attr.measure.verbs import Device

        device = Device(TimerKind.SPIN.value, spin_us=0.0)
    t0 = time.perf_counter()
    fallback = ""
    if not o.eager:
        from l2attr.steps.measure.surgery import UncapturableStep
        from l2attr.steps.measure.surgery_run import measure

        try:
            got = measure(device, spec.fn, spec.args, dict(spec.kwargs), o.repeats, o.warmup, log,
                          o.edges, spec.write_back, o.rewarm, spec.until, o.max_repeats if spec.until else 0)
        except UncapturableStep as exc:
            fallback = str(exc)
            log(f"step {o.name}: cannot be captured into a CUDA graph ({fallback}): per-op eager method")
        else:
            return _write(device, spec, StepMode.SURGERY, got, log, choose_edges, t0)
    if not callable(spec.fn):
        raise UserError("step: the step must be a function (or a torch.cuda.CUDAGraph)")
    return _write(device, spec, StepMode.EAGER, _measure_eager(device, spec, fallback), log, choose_edges, t0)


def _write(dev: Any, spec: StepSpec, mode: StepMode, got: SurgeryRun, log: Callable[[str], None],
           choose_edges: EdgeChooser | None, t0: float) -> Path:
    """The one writer: manifest, tables, then the edges (a failed edge measurement loses nothing)."""
    surgery = mode == StepMode.SURGERY
    facts = dict(got.facts)
    trace = facts.pop("_trace", None)
    o = spec.options
    done = int(facts.pop("repeats_done", o.repeats))
    rule = {"repeats_asked": o.repeats, "rounds": int(facts.get("rounds", 1))} if spec.until is not None else {}
    written = o.model_copy(update={"repeats": done, **rule, "mode": mode, "facts": dict(o.facts), "function":
                                   f"{getattr(spec.fn, '__module__', '?')}:{getattr(spec.fn, '__qualname__', '?')}"})
    run = RunDir.create(Path(o.out), o.name, {
        "kind": KIND, "step": written.manifest(),
        "command": command_line(), **dev.facts(), "cold": SURGERY_COLD if surgery else COLD_METHOD,
        **({"surgery": facts} if surgery else facts)})
    if o.keep_trace and trace is not None:
        import gzip

        atomic.write_bytes(run.path / "trace.json.gz", gzip.compress(trace))
    run.write(STEP_OPS, ops_frame(got.ops))
    run.write(STEP_TIMES, got.times)
    k = got.kernels
    run.write(STEP_KERNELS, k[[*STEP_KERNELS.columns, "node"]] if surgery else k)
    if len(got.write_back):
        atomic.write_text(run.path / WRITE_BACK_CSV, got.write_back.to_csv(index=False))
    t_main = time.perf_counter() - t0
    note: dict[str, Any] = {}
    if o.edges and surgery and got.edges is not None:
        from l2attr.steps.measure import graph_edges

        run.write(STEP_EDGES, got.edges)
        note = {"edges_method": graph_edges.METHOD, "edges_level": graph_edges.LEVEL, KERNEL_EDGES: True}
    elif o.edges:
        note = _op_edges(run, dev, spec, k[k["op_index"] >= -1][list(STEP_KERNELS.columns)] if surgery else k,
                         got.ops, log, choose_edges, op_level=surgery) if got.ops else {
            "edges_error": "no eager op was recorded: the step has no op-level edges"}
        if surgery:
            note[KERNEL_EDGES] = False
            if got.edges_why:
                note["kernel_edges_error"] = got.edges_why
    total = time.perf_counter() - t0
    run.update_manifest(status=COMPLETE, timings={"total_s": round(total, 2), "main_s": round(t_main, 2),
                                                    "edges_s": round(total - t_main, 2)},
                        persisting_reset=False if surgery else bool(dev.reset_ok), **note)
    dev.close()
    arms = ", ".join(sorted(k["condition"].unique()))
    per = k["node"].nunique() if surgery else int(k[k["condition"] == L2Condition.NATURAL.value].groupby("step").size().median())
    log(f"step {o.name} ({'graph surgery' if surgery else mode.value}): {o.repeats} replays of each of {arms}, "
        f"{per} kernels each -> {run.path}")
    return run.path


def _op_edges(run: RunDir, dev: Any, spec: StepSpec, k: pd.DataFrame, ops: list[OpRecord],
              log: Callable[[str], None], choose: EdgeChooser | None, op_level: bool = False) -> dict[str, Any]:
    """Measure the chosen op-level edges apart into step_edges.csv; the manifest note (method, or why not)."""
    from l2attr.steps.measure.edges import METHOD as EDGE_METHOD, EdgePlan, measure_edges

    if choose is None:
        return {"edges_error": "no edge chooser was given (l2attr.step passes the analysis layer's)"}
    try:         # the step's own answer is written: an edge that cannot be measured says so, and loses nothing
        plans = [EdgePlan(p, c, b) for p, c, b in choose(k, ops_frame(ops), spec.options.edges)]
        rows = measure_edges(dev, spec.fn, spec.args, dict(spec.kwargs), plans, spec.options.repeats,
                             [o.op for o in ops]) if plans else None
    except (UserError, RuntimeError) as exc:
        note = {"edges_error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
        log(f"step {spec.options.name}: edges not measured: {note['edges_error']}")
        return note
    if rows is None:
        return {}
    run.write(STEP_EDGES, rows)
    return {"edges_method": EDGE_METHOD, **({"edges_level": "op-level: measured on eager re-execution of the "
                                                            "step's ops"} if op_level else {})}


def _measure_eager(dev: Any, spec: StepSpec, fallback: str) -> SurgeryRun:
    """The per-op method: a read flush before every op (its later kernels stay warm), natural and
    cold steps alternating inside one profiler session."""
    from l2attr.steps.measure.trace import Slots, kernels, profiled

    torch, fn, args, kwargs, o = dev.torch, spec.fn, spec.args, dict(spec.kwargs), spec.options
    slots = Slots()
    for _ in range(o.warmup):
        fn(*args, **kwargs)
    torch.cuda.synchronize()
    first: list[OpRecord] = []
    cold_ops: list[OpRecord] = []
    plan = [(i, c) for i in range(o.repeats) for c in ((L2Condition.NATURAL, L2Condition.COLD) if i % 2 == 0
                                                          else (L2Condition.COLD, L2Condition.NATURAL))]

    def body() -> None:
        nonlocal first, cold_ops
        for i, cond in plan:
            if cond == L2Condition.NATURAL:
                dev.flush_l2()          # both arms start from the same clean state, outside the step
                fn(*args, **kwargs)     # a step leaves L2 for the next: once untraced
            torch.cuda.synchronize()
            rec = make_recorder(dev.flush_l2 if cond == L2Condition.COLD else None)
            with slots.range(torch, condition=cond, step=i), rec.modules, rec:
                fn(*args, **kwargs)
            torch.cuda.synchronize()
            if not rec.ops:
                raise UserError(f"step {o.name}: {NO_OPS}")
            if cond == L2Condition.COLD and not cold_ops:
                cold_ops = rec.ops         # the ops table: a cold step's, which says what was flushed
            first = first or rec.ops
            if [o.op for o in first] != [o.op for o in rec.ops]:
                raise UserError(f"step {o.name}: step {i} ({cond.value}) ran other ops than the first "
                                "(the step must be deterministic to pair its kernels)")
    trace = profiled(torch, body)
    k = kernels(trace, slots)
    if k.empty:
        raise UserError(f"step {o.name}: no kernels were traced inside the step (is it on the GPU?)")
    facts: dict[str, Any] = {"fallback": fallback} if fallback else {}
    if o.keep_trace:
        facts["_trace"] = json.dumps({**trace, SLOTS_KEY: slots.table()}).encode()
    return SurgeryRun(k, cold_ops, time_steps(dev, lambda: fn(*args, **kwargs), o.repeats), facts)
