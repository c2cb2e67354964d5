"""What is inter-kernel L2 reuse worth in a whole step? (any PyTorch program, GPU)

Run a script whose step function is marked with `@l2attr.step_range("name")`: its first call is
captured as a CUDA graph and measured by graph surgery (every kernel with the L2 as the program
leaves it, and in copies of the graph with a flush node before every kernel node: clean, dirty,
and with --matched the write-back each kernel inherits; then the top edges by selective eviction),
then the script ends. The answer is the saving as a share of the eager step (the function called
in a loop), the graph replay and the kernel time, split into what was resident before the step
and what the step's own kernels produced; without --matched it is the clean/dirty bracket, and
says so. A step that changes between calls (a growing cache) is refused in one line; one that
cannot be captured falls back to the per-op method (a flush before each op; --eager asks for it).
Or read a step run dir.

  l2attr step --out runs -- python my_step.py
  l2attr step --eager --out runs -- python my_step.py     # the per-op method (no graph capture)
  l2attr step --ncu --ncu-metrics dram --out runs -- python my_step.py
  l2attr step --matched --out runs -- python my_step.py   # the write-back read by ncu first: the matched arm
  l2attr step --show runs/<...>-decode
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

from l2attr.errors import UserError
from l2attr.steps.declare import StepOptions
from l2attr.typed import add_flags, dests
from l2attr.vocab import Job


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD", help="-- CMD ...: the script to run")
    add_flags(p.add_argument_group("the step's options (steps/declare.py StepOptions)"), StepOptions)
    p.add_argument("--show", type=Path, metavar="RUN_DIR",
                   help="print the answer of a step run dir, its top kernels and edges")
    p.add_argument("--ncu", action="store_true",
                   help="also DRAM bytes per kernel under Nsight Compute (the captured step, application "
                        "replay, cache control none against all)")
    p.add_argument("--matched", action="store_true",
                   help="read each kernel node's inherited write-back under Nsight Compute first (the script "
                        "re-run as its child, cache control none against all), so the answer is the "
                        "write-back-matched cold arm rather than the clean/dirty bracket")
    p.add_argument("--chip", help="with --ncu: ga100 | gh100 (default: from the GPU)")
    p.add_argument("--ncu-metrics", default="l2", metavar="SET",
                   help="with --ncu: the metric set (default l2; dram: DRAM bytes only, the fewest replay passes)")
    p.add_argument("--graph", action="store_true",
                   help="ignored, kept so old command lines still parse: graph surgery is the method, --eager the "
                        "per-op one")


def summary(path: Path) -> str:
    """What `--show` prints: the answer's repr (steps/section/text.py), the same text a script's
    `print(ans)` gives."""
    from l2attr.steps.analyse.answer import StepAnswer

    return repr(StepAnswer.from_run(path))


def _write_back(command: list[str], tmp: Path, warmup: int) -> Path:
    """The matched arm's reading: the marked script re-run under ncu as its own graph child (both
    cache controls), each kernel node's inherited write-back into a CSV the measuring run reads."""
    from l2attr.steps.measure.ncu import child_env, deltas, profile_graph

    d = deltas(profile_graph(command, tmp / "ncu", 1, sets="dram", env=child_env(tmp, warmup, Job.STEP_GRAPH)))
    path = tmp / "write_back.csv"
    d.to_csv(path, index=False)
    return path


def check_flags(args: argparse.Namespace, options: StepOptions) -> None:
    """What the step's own flags must be, by the rules every command shares: a known chip, metric
    names that resolve, a folder of runs that can hold one (a typo must not cost the user's run)."""
    from l2attr.catalog.sets import check_chip
    from l2attr.outputs import check_out_folder
    from l2attr.profile.metricsets import check_metrics_text

    if args.matched and options.eager:
        raise UserError("--matched reads the write-back of the captured step's kernel nodes: it does not apply "
                        "to --eager (the per-op method)")

    check_out_folder(options.out)
    if not args.ncu and (args.chip is not None or args.ncu_metrics != "l2"):
        raise UserError("--chip and --ncu-metrics only apply with --ncu")
    if args.chip is not None:
        args.chip = check_chip(args.chip)
    check_metrics_text(args.ncu_metrics)


def run(args: argparse.Namespace) -> int:
    options = StepOptions.from_flags({k: v for k, v in vars(args).items() if k in dests(StepOptions)})
    if args.show is not None:
        if args.cmd:
            raise UserError("--show reads a run dir: give no command")
        print(summary(args.show))
        return 0
    command = [c for c in args.cmd if c != "--"]
    if not command:
        raise UserError("name the script to run after --, e.g. l2attr step -- python my_step.py")
    check_flags(args, options)               # before the user's command runs
    out = options.out
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.iterdir())
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="l2attr-step-") as tmp:
        got = {"out": out.resolve(), "program": Job.STEP_MEASURE}
        if args.matched:
            got["write_back"] = _write_back(command, Path(tmp), options.warmup)
        env = {**os.environ, **options.model_copy(update=got).to_child(Path(tmp))}
        try:
            rc = subprocess.run(command, env=env, check=False).returncode
        except FileNotFoundError:
            raise UserError(f"cannot run {command[0]!r}: not found") from None
        new = sorted(p for p in set(out.iterdir()) - before if (p / "manifest.json").is_file())
        if rc != 0 or not new:
            raise UserError(f"{' '.join(command)} ended with status {rc} and wrote no step run "
                            "(is its step function marked with @l2attr.step_range?)")
        if args.ncu:
            from l2attr.rundir import RunDir
            from l2attr.steps.measure.ncu import child_env, profile_step

            profile_step(command, RunDir.open(new[-1]), child_env(Path(tmp), options.warmup), chip=args.chip,
                         metrics=args.ncu_metrics)
    print(summary(new[-1]))
    print(f"step attribution took {time.perf_counter() - t0:.1f} s wall; run dir {new[-1]}")
    return 0
