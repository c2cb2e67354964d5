"""The Python API, every verb in one place: `l2attr.Experiment` (experiment/api.py: the frozen
declaration of experiment/declare.py with its verbs, time and profile), `l2attr.ladder`, `l2attr.step`,
`l2attr.write_back` (the matched arm's input) and `l2attr.step_range`.

Why a module at the top floor: each verb returns a judged result (analysis/), and the engines under
l2attr/experiment, l2attr/dlrm and l2attr/steps never import the readers; the verbs join the two here.
"""

from __future__ import annotations

import functools
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping

from l2attr.experiment.api import Experiment
from l2attr.steps.analyse.answer import StepAnswer
from l2attr.steps.declare import StepOptions, WriteBackGiven, node_bytes
from l2attr.steps.measure.record import ENV as STEP_ENV
from l2attr.steps.measure.run import StepSpec
from l2attr.study.result import LadderResult
from l2attr.vocab import Command, Job, TimerKind

_STEP = StepOptions()     # the step's defaults: the signatures below show the model's, never their own


def ladder(*flags: str, out: Path | str = "runs", **options: Any) -> LadderResult:
    """Run the ladder in this process and judge its run dir: `l2attr.ladder(families="artifact",
    repeats=3)` (or the command's flags, `l2attr.ladder("--family", "artifact")`) returns a
    `LadderResult` (`.cells`, `.verdict`, `.run_dir`, and a repr that prints the headline with its
    interval).

    Keyword arguments are the command's flags by name (`l2attr ladder -h`; their dests): the
    ladder's options (dlrm/measure/options.py LadderOptions, validated there: a bad value is one
    UserError line), the workload's (rows=100_000, preset="small") and the command's (name, quiet,
    tuning, resume=RUN_DIR, workers)."""
    from l2attr.ladders.command import measure, namespace

    return LadderResult.from_run(measure(namespace(flags, out, options)).path)


# -- a whole step: l2attr.step, l2attr.step_range --------------------------------------------------

def step(fn: Callable[..., Any], *args: Any, kwargs: Mapping[str, Any] | None = None,
         setup: Callable[[], Any] | None = None, name: str = _STEP.name, repeats: int = _STEP.repeats,
         warmup: int = _STEP.warmup, out: Path | str = _STEP.out, log: Callable[[str], None] = print,
         edges: int = _STEP.edges, write_back: WriteBackGiven = None, facts: Mapping[str, Any] | None = None,
         eager: bool = _STEP.eager, keep_trace: bool = _STEP.keep_trace, device: Any = None,
         rewarm: bool = _STEP.rewarm, until_decided: bool = _STEP.until_decided,
         max_repeats: int = _STEP.max_repeats) -> StepAnswer:
    """Measure one step of `fn(*args, **kwargs)` (or a torch.cuda.CUDAGraph captured with keep_graph=True):
    captured into a CUDA graph, every kernel natural against its cold arms; the top `edges` edges
    measured apart. Returns its `StepAnswer` (`.headline()`, `.kernels`, `.run_dir`; repr = headline).

    Args:
        fn: the step. The step's own keyword arguments go in `kwargs` (a dict), never beside l2attr's,
            so a step that takes `name` or `out` is measured as it is.
        setup: called once the GPU answers, returns the step's inputs (a tuple of positional
            arguments, appended to `args`; anything else is one argument): inputs made at
            measurement time, so a script on a machine without a GPU stops at one line.
        write_back: per kernel node, the DRAM bytes its natural run writes back for its predecessors
            (steps/measure/ncu.py `profile_graph` then `deltas`, or a mapping node -> bytes, or one number for
            every node; steps/declare.py node_bytes): the matched cold arm, the answer's. Without it
            the answer is the clean/dirty bracket, and says so.
        name, repeats, warmup, out, edges, facts, eager, keep_trace, rewarm, until_decided,
        max_repeats: the step's options (steps/declare.py StepOptions, validated there: a bad value
            is one UserError line). eager: the per-op method on purpose (a flush before every op; later
            kernels of an op stay warm). rewarm: the rewarmed arms (every kernel's inputs read back,
            with and without the flush): the flush's non-data cost per kernel node and the headroom
            (docs/step-method.md). until_decided: trace `repeats` more at a time until the activations'
            share of the eager step is above or below the study's 0.65 % or known to ± 0.15 pp, at most
            `max_repeats` in all.
    """
    options = StepOptions.from_api({"name": name, "repeats": repeats, "warmup": warmup, "out": out, "edges": edges,
                                    "facts": dict(facts or {}), "eager": eager, "keep_trace": keep_trace,
                                    "rewarm": rewarm, "until_decided": until_decided, "max_repeats": max_repeats})
    spec = StepSpec(fn, tuple(args), dict(kwargs or {}), options, node_bytes(write_back), _until(until_decided))
    return StepAnswer.from_run(_measured(spec, log, device, setup))


def _until(until_decided: bool) -> Callable[[Any, Any], bool] | None:
    """The stopping rule `until_decided` asks for: the study's claim decided (steps/analyse/split.py)."""
    if not until_decided:
        return None
    from l2attr.steps.analyse.reading import STUDY_CLAIM
    from l2attr.steps.analyse.split import decided

    return lambda k, ctx: decided(k, ctx, STUDY_CLAIM)


def _measured(spec: StepSpec, log: Callable[[str], None] = print, device: Any = None,
              setup: Callable[[], Any] | None = None) -> Path:
    """Both routes' measurement (l2attr.step, a marked step under `l2attr step`): the spec checked
    before the GPU is touched, then run; the run dir's path."""
    from l2attr.steps.measure.run import run_step

    spec.check()                           # the inputs, the rule: before the GPU is touched
    if setup is not None:
        from l2attr.measure.verbs import Device

        device = device or Device(TimerKind.SPIN.value, spin_us=0.0)
        made = setup()
        spec = replace(spec, args=spec.args + (made if isinstance(made, tuple) else (made,)))
    return run_step(spec, log=log, choose_edges=choose_op_edges, device=device)


def write_back(target: str, out: Path | str = "runs/write-back", replays: int = 3,
               log: Callable[[str], None] = print) -> Any:
    """Each kernel node's inherited write-back, read by Nsight Compute: what `step(write_back=)` takes.

    Nsight Compute profiles a process it starts, so the step is built anew in a child from
    `target`, FILE.py:FACTORY, where FACTORY() returns the step as `(fn, args)` (or a list of
    `(name, fn, args)` for several steps of one build). There it is captured as `step` captures it,
    replayed once unprofiled, then `replays` times under cache control none and again under all
    (the two DRAM counters only: one pass each). Reports go under `out`.

    Returns:
        steps/measure/ncu.py `deltas` per kernel node (write_none_b - write_all_b is the matched arm's D_j,
        docs/step-method.md), or, for a list of steps, a dict step name -> that table.
    """
    from l2attr.errors import UserError
    from l2attr.steps.measure.ncu import deltas, profile_graph

    path, _, factory = str(target).rpartition(":")
    if not path or not factory.isidentifier() or not Path(path).is_file():
        raise UserError(f"write_back: {target!r}: give FILE.py:FACTORY, a file that exists and the name of "
                        "a function in it that returns the step as (fn, args)")
    if int(replays) < 1:
        raise UserError(f"write_back: replays must be at least 1, not {replays}")
    import shutil

    if shutil.which("ncu") is None:
        raise UserError("write_back: Nsight Compute (ncu) is not on PATH, and it reads the write-back; without it, "
                        "call l2attr.step without write_back= (the answer is then the clean/dirty bracket)")
    frame = profile_graph(f"{Path(path).resolve()}:{factory}", Path(out), int(replays), sets="dram", log=log)
    steps = sorted(set(frame["step"]))
    if steps == [Command.STEP.value]:
        return deltas(frame)
    return {name: deltas(g) for name, g in frame.groupby("step")}


def choose_op_edges(kernels: Any, ops: Any, n: int) -> list[tuple[int, int, int]]:
    """The op-level edges worth measuring apart: the top `n` by attributed saving (steps/analyse/edges.py)."""
    from l2attr.steps.analyse.answer import answer
    from l2attr.steps.analyse.edges import candidates

    cand = candidates(answer(kernels, ops).edges, ops, kernels[kernels["op_index"] >= 0], n)
    return [(int(r.producer), int(r.consumer), int(r.bytes)) for r in cand.itertuples()]


def step_range(name: str = _STEP.name, repeats: int = _STEP.repeats, warmup: int = _STEP.warmup,
               edges: int = _STEP.edges) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a step function. Under `l2attr step -- python script.py` its first call is what the
    command's options file (steps/declare.py: the path in $L2ATTR_STEP_OPTIONS) says: measured as
    l2attr.step would into the run dir the command names (its flags over these arguments), or an
    Nsight Compute child (`program`); then the process ends. Otherwise it is the function itself
    inside an NVTX range `step:<name>` of l2attr's domain."""
    own = StepOptions.from_api({"name": name, "repeats": repeats, "warmup": warmup, "edges": edges}, "step_range")

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            path = os.environ.get(STEP_ENV)
            if path:
                _child(fn, args, kwargs, StepOptions.from_child(path, own.model_dump(exclude_unset=True)))
                raise SystemExit(0)
            try:
                import nvtx
            except ImportError:
                return fn(*args, **kwargs)
            from l2attr.names import NVTX_DOMAIN, STEP_MARK
            with nvtx.annotate(STEP_MARK.build(name=name), domain=NVTX_DOMAIN):
                return fn(*args, **kwargs)
        return inner
    return wrap


def _child(fn: Callable[..., Any], args: tuple, kwargs: dict, options: StepOptions) -> None:
    """A marked step in a child of `l2attr step`: the program its options name."""
    if options.program == Job.STEP_OPS:
        from l2attr.steps.measure.ncu import profiled_child

        profiled_child(fn, args, kwargs, options.warmup)
    elif options.program == Job.STEP_GRAPH:         # the matched arm's write-back, per kernel node
        from l2attr.steps.measure.ncu import replay_steps

        replay_steps([(options.name, fn, args, kwargs)], options.replays, options.warmup)
    else:
        _measured(StepSpec(fn, args, kwargs, options, node_bytes(options.write_back),
                           _until(options.until_decided)))
