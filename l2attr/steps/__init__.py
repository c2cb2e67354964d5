"""What is inter-kernel L2 reuse worth in a whole step? Per kernel, natural against cold.

    import l2attr
    ans = l2attr.step(decode_step, x)          # a StepAnswer: .headline(), .kernels, .edges, .run_dir
    ans = l2attr.step(decode_step, x, graph=True)   # natural steps: replays of a CUDA graph of it
    @l2attr.step_range("decode")                # or mark the step and run `l2attr step -- python my_step.py`
    def decode_step(x): ...
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any, Callable

from l2attr.steps.record import ENV
from l2attr.vocab import Command


def step(fn: Callable[..., Any], *args: Any, name: str = Command.STEP.value, repeats: int = 10, warmup: int = 3,
         out: Path | str = "runs", log: Callable[[str], None] = print, edges: int = 5, graph: bool = False,
         facts: dict[str, Any] | None = None, eager: bool = False, **kwargs: Any) -> Any:
    """Measure one step of `fn` (or a torch.cuda.CUDAGraph captured with keep_graph=True): captured
    into a CUDA graph, every kernel natural against cold on its own (clean and write-back-paying
    cold arms); `eager`: the per-op method; the top `edges` edges by selective eviction. Its
    StepAnswer: .cells, .verdict, .run_dir, repr = headline."""
    from l2attr.analysis.step_load import analyse_step
    from l2attr.steps.run import run_step

    path = run_step(fn, *args, name=name, repeats=repeats, warmup=warmup, out=out, log=log, edges=edges,
                    graph=graph, facts=facts, eager=eager, **kwargs)
    from dataclasses import replace

    return replace(analyse_step(path), run_dir=path, name=name)


def step_range(name: str = Command.STEP.value, repeats: int = 10, warmup: int = 3, edges: int = 5,
               graph: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a step function. Under `l2attr step -- python script.py` its first call is measured
    (as l2attr.step would) into the run dir the command names, then the process ends; otherwise
    it is the function itself inside an NVTX range `step:<name>` of l2attr's domain. `graph`: the
    step is measured as replays of a CUDA graph captured from it (`l2attr step --graph` too)."""
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            spec = os.environ.get(ENV)
            if spec:
                from l2attr.steps.run import run_step

                s = json.loads(spec)
                if s.get("mode") == "ncu":
                    from l2attr.steps.ncu import profiled_child

                    profiled_child(fn, args, kwargs, int(s.get("warmup", warmup)))
                    raise SystemExit(0)
                run_step(fn, *args, name=s.get("name") or name, repeats=int(s.get("repeats", repeats)),
                         warmup=int(s.get("warmup", warmup)), out=s["out"],
                         edges=int(s["edges"]) if s.get("edges") is not None else edges,
                         graph=bool(s.get("graph")) or graph, eager=bool(s.get("eager")), **kwargs)
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


__all__ = [step.__name__, step_range.__name__, "ENV"]
