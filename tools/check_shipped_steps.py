"""Check every shipped step on the GPU: run it eagerly, capture it into a CUDA graph, replay, compare.

For each step of examples/steps/shipped.py (or those named): build it; run it once eagerly and
count the kernels it launches (torch.profiler's CUDA records); warm it up on a side stream,
capture it into a torch.cuda.CUDAGraph, replay the graph and count the replay's kernels; hold the
replay's output to the eager one. Then every model file's reference check (shipped.checks). A
failure is one line `FAIL <step>: <why>` and the script goes on to the next step; the exit status
is 1 when anything failed, 0 when all passed, 2 on bad input (an unknown step name, no GPU).

    python tools/check_shipped_steps.py                       # all steps, then all checks
    python tools/check_shipped_steps.py --only bert-layer-fastpath dlrm-rung-baseline
    python tools/check_shipped_steps.py --list                # names and facts (no GPU)
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "steps"))
sys.path.insert(0, str(ROOT))

NOT_KERNELS = ("Memcpy", "Memset")   # the profiler's copy and fill records: not kernel launches
REPLAY_TOLERANCE = 1e-2   # relative L2 error, graph replay vs eager (bf16 outputs: a few ulps at most)


def _leaves(out: Any) -> list[Any]:
    """The tensors of a step's output (a tensor, or nested tuples / lists / dicts of them)."""
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _leaves(o)]
    return []


def _kernels(fn: Callable[[], Any]) -> list[str]:
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if e.device_type == DeviceType.CUDA and not e.name.startswith(NOT_KERNELS)]


def _difference(got: list[Any], want: list[Any]) -> float:
    import torch

    if len(got) != len(want) or not want:
        return float("inf")
    worst = 0.0
    for a, b in zip(got, want):
        a, b = a.double(), b.double()
        if a.shape != b.shape or not torch.isfinite(a).all():
            return float("inf")
        norm = float(torch.linalg.vector_norm(b))
        diff = float(torch.linalg.vector_norm(a - b))
        worst = max(worst, diff / norm if norm else diff)
    return worst


def check_step(name: str, fn: Callable[..., Any], args: tuple[Any, ...], say: Callable[[str], None]) -> bool:
    """Eager run, capture, replay, compare; True when it all held."""
    import torch

    call = lambda: fn(*args)   # noqa: E731
    eager = [t.clone() for t in _leaves(call())]
    torch.cuda.synchronize()
    if not eager:
        say(f"FAIL {name}: the step returns no tensor to compare")
        return False
    k_eager = _kernels(call)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):                    # warm-up on a side stream, as torch's notes ask
        for _ in range(2):
            call()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static = _leaves(call())
    graph.replay()
    torch.cuda.synchronize()
    replayed = [t.clone() for t in static]
    k_graph = _kernels(graph.replay)
    e = _difference(replayed, eager)
    say(f"     {name}: kernels eager {len(k_eager)} ({len(set(k_eager))} distinct), graph replay {len(k_graph)}; "
        f"replay vs eager relative error {e:.2e}")
    if len(k_graph) != len(k_eager):
        say(f"NOTE {name}: the replay launches {len(k_graph)} kernels, the eager call {len(k_eager)}")
    del graph, static
    if not e <= REPLAY_TOLERANCE:
        say(f"FAIL {name}: graph replay differs from the eager call: relative error {e:.2e} > {REPLAY_TOLERANCE:g}")
        return False
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="these steps only (default: all)")
    ap.add_argument("--list", action="store_true", help="print the steps and their facts, build nothing")
    ap.add_argument("--no-checks", action="store_true", help="skip the model files' reference checks")
    a = ap.parse_args()
    import shipped
    from l2attr.errors import UserError

    from l2attr.gpu.runtime import require_gpu

    try:
        table = shipped.select(a.only)
        if a.list:
            for name, (module, facts) in table.items():
                print(f"{name}  [{module}]  {facts}")
            return 0
        torch, _ = require_gpu()
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    say = lambda s: print(s, flush=True)   # noqa: E731
    failed: list[str] = []
    names = list(table)
    with torch.inference_mode():
        for name in names:
            t0 = time.perf_counter()
            try:
                fn, args, facts = shipped.steps([name])[name]
                ok = check_step(name, fn, args, say)
            except Exception as exc:       # one step's failure must not hide the others'
                say(f"FAIL {name}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
                traceback.print_exc(limit=4)
                ok = False
            if not ok:
                failed.append(name)
            say(f"{'ok  ' if ok else 'FAIL'} {name} ({time.perf_counter() - t0:.1f} s)")
    if not a.no_checks:
        for module, check in shipped.checks(a.only).items():
            t0 = time.perf_counter()
            try:
                lines = check()
            except Exception as exc:
                lines = [(False, f"{module}.check raised {type(exc).__name__}: {exc}")]
                traceback.print_exc(limit=4)
            for ok, line in lines:
                say(f"{'ok  ' if ok else 'FAIL'} {line}")
                if not ok:
                    failed.append(f"{module}.check")
            say(f"     {module}.check ({time.perf_counter() - t0:.1f} s)")
    failed = list(dict.fromkeys(failed))
    if failed:
        say(f"FAILED: {len(failed)}: {', '.join(failed)}")
        return 1
    say(f"all {len(names)} steps captured, replayed and matched; every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
