"""Layer A: compile the five rungs of each kernel family, check each against PyTorch, and time
families x rungs x profiles.

Three kernel families implement the rungs: `artifact` (a re-implementation of the MICRO'24
artifact's kernels, the headline), `tuned` (l2attr's own faster consumer and per-line pin) and
`fast` (l2attr's consumer at the HBM limit, with its pin rung fast+pin).
Per table call the artifact's sequence runs: [pin -> stream sync ->] consumer. Device repeats time
the pin and the consumer with CUDA events (timer kernel); host repeats, alternating with them,
record the artifact's own timer around the consumer (timer artifact) and the host clock around the
whole call (timer wall). Every measured repeat is written to RUN_DIR/samples.csv as soon as it
exists, cell summaries to RUN_DIR/cells.csv, and `--resume RUN_DIR` skips what is already there.

examples:
  l2attr ladder                                  # artifact shape, 3 families x their rungs + torch x 4 profiles
  l2attr ladder --family artifact                # the artifact's ladder only
  l2attr ladder --rows 100000 --profiles reuse_high,random --rungs baseline,l2p_optmt
  l2attr ladder --trace reuse_medium_table_500K.txt --hot hot60k_medium.txt
  l2attr ladder --resume runs/20261129T200000Z-ladder
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from l2attr.ladders.tuning.table import tuned_flags
from l2attr.dlrm.config import WorkloadConfig, add_workload_args, config_from_flags
from l2attr.dlrm.measure.options import LadderOptions
from l2attr.errors import UserError
from l2attr.typed import add_flags, dests, parser_defaults
from l2attr.vocab import Command

# flags --resume may be given with (they do not change what is measured)
RESUME_FREE = {"resume", "quiet", "cache_dir", "_run", "command", "workers", "scheduler"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The workload's flags, then one flag per field of LadderOptions (dlrm/measure/options.py)."""
    add_workload_args(p)
    g = p.add_argument_group("ladder (the fields of LadderOptions, the manifest's measure)")
    add_flags(g, LadderOptions)
    g.add_argument("--tuning", type=Path, metavar="FILE",
                   help="fast family: the launch point this tuning table chooses (benchmarks/tune_fast.py's "
                        "fast_tuning.csv, read whole or refused; `l2attr tuning FILE` shows it) instead of "
                        "the --fast-* defaults")
    o = p.add_argument_group("output")
    o.add_argument("--out", type=Path, default=Path("runs"), help="runs folder (default ./runs)")
    o.add_argument("--name", default=Command.LADDER.value, help="run name suffix (default ladder)")
    o.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue an interrupted run")
    o.add_argument("--quiet", action="store_true", help="no progress bar")
    from l2attr.distribute.options import add_arguments as add_distribute_arguments

    add_distribute_arguments(p)


def check_output(out: Path, name: str) -> None:
    """--out is a folder of runs (made if absent); --name a plain word (RunDir.create's rule)."""
    from l2attr.outputs import check_out_folder

    check_out_folder(Path(out))
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name or ""):
        raise UserError(f"--name {name!r}: use letters, digits, '.', '_' and '-' only")


def check_resume_flags(args: argparse.Namespace) -> None:
    """`--resume RUN_DIR` continues the run with the settings in its manifest: a flag that would
    change them is refused instead of being ignored."""
    defaults = parser_defaults(add_arguments)
    given = [k for k, v in vars(args).items() if k not in RESUME_FREE and (k not in defaults or v != defaults[k])]
    if given:
        flags = ", ".join("--" + k.replace("_", "-") for k in sorted(given))
        raise UserError(f"--resume continues {args.resume} with its own settings; drop {flags} "
                        "(or start a new run)")


def options(args: argparse.Namespace) -> tuple[WorkloadConfig, LadderOptions]:
    """A new run's workload and options from its flags, every input checked before the GPU is
    looked for (files, names, numbers, conflicts)."""
    cfg = config_from_flags(vars(args))
    check_output(args.out, args.name)
    return cfg, options_from_args(args, cfg.rows)


def options_from_args(args: argparse.Namespace, rows: int | None = None) -> LadderOptions:
    """The options from the flags given (the model supplies the rest), --tuning's launch point
    applied; with the workload's `rows`, the trace and hot files read too."""
    given = {k: v for k, v in vars(args).items() if k in dests(LadderOptions)}
    return LadderOptions.from_flags(tuned_flags(args.tuning, given), rows)


def _resume(path: Path) -> tuple[Any, WorkloadConfig, LadderOptions]:
    """The run, its workload and its options, rebuilt from its manifest (the typed contract first)."""
    from l2attr.integrity.manifest import check_manifest
    from l2attr.rundir import open_for_resume, resumed

    run, m = open_for_resume(path, Command.LADDER, check_manifest)
    cfg = resumed(run, "config", lambda: WorkloadConfig(**m["config"]))
    known = {*LadderOptions.model_fields, "variants"}
    return run, cfg, resumed(run, "measure", lambda: LadderOptions.from_manifest(m["measure"]), known)


def head_start(cfg: WorkloadConfig, opts: LadderOptions) -> Any:
    """A fresh run's workloads and kernels, started on threads before torch is imported (NVRTC and
    numpy release the GIL; the import holds it): dlrm/measure/prefetch.py's HeadStart, which
    run_ladder(ahead=...) takes over. Their modules are imported here, on this thread."""
    from l2attr.dlrm.measure.check import start_compile
    from l2attr.dlrm.measure.prefetch import HeadStart, WorkloadPrefetch
    from l2attr.ladders.measure.run import _workload_bytes, ladder_profiles, workload_builder

    try:
        import platformdirs  # noqa: F401  (the default cache dir's, read by a builder)
    except ImportError:
        pass
    prefetch = WorkloadPrefetch(workload_builder(cfg, opts), ladder_profiles(opts), _workload_bytes(cfg))
    return HeadStart(prefetch, start_compile(cfg, opts))


def _one_process(args: argparse.Namespace, cfg: WorkloadConfig, opts: LadderOptions, run_dir: Any, console: Any):
    """Today's path: this process, its GPU, cell after cell."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from l2attr.ladders.measure.run import process_age_s
    from l2attr.gpu.runtime import require_gpu

    ages = {"command_s": process_age_s()}     # the process's age at each step of its start
    require_gpu(import_torch=False)  # before any run dir is made: no GPU -> one line, exit 2
    ages["gpu_seen_s"] = process_age_s()
    if any(r.window for r in opts.rungs):   # APW+OptMT: the window must fit
        from l2attr.gpu.persisting import device_limits
        from l2attr.dlrm.measure.residency import check_window_fits

        check_window_fits(cfg, device_limits())
    from l2attr.dlrm.measure.gpu import check_fits

    check_fits(cfg)  # refuse a workload that does not fit, before allocating or writing
    ahead = head_start(cfg, opts) if run_dir is None else None   # beside the import of torch (seconds)
    facts = None
    if run_dir is None:   # the manifest's facts (git, nvidia-smi, ncu --version: subprocesses) meanwhile
        from concurrent.futures import ThreadPoolExecutor

        from l2attr.gpu.device import gpu_facts, tool_versions

        def aged(fn: Any, key: str) -> Any:     # the process's age when a fact was in
            out = fn()
            ages[key] = process_age_s()
            return out

        pool = ThreadPoolExecutor(max_workers=2)
        facts = (pool.submit(aged, tool_versions, "tool_versions_s"), pool.submit(aged, gpu_facts, "gpu_facts_s"))
        pool.shutdown(wait=False)
    ages["threads_started_s"] = process_age_s()
    t0 = time.perf_counter()
    require_gpu()
    torch_import_s = time.perf_counter() - t0
    ages["torch_s"] = process_age_s()

    from l2attr.ladders.measure.run import ladder_manifest, run_ladder
    from l2attr.manifest_model import recorded
    from l2attr.gpu.device import module_versions
    from l2attr.rundir import RunDir, command_line

    if run_dir is None:
        run_dir = RunDir.create(args.out, args.name,
                                ladder_manifest(cfg, opts, command_line(), {**facts[0].result(), **module_versions()},
                                                facts[1].result()))
    ages["run_dir_s"] = process_age_s()        # after the facts (git, ncu --version, nvidia-smi)
    console.print(f"run dir: {run_dir.path}")
    progress = None if args.quiet else Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} repeats"),
        TimeElapsedColumn(), console=console)
    if progress is not None:
        with progress:
            cells = run_ladder(cfg, opts, run_dir, log=console.print, progress=progress, ahead=ahead)
    else:
        cells = run_ladder(cfg, opts, run_dir, log=console.print, ahead=ahead)
    source = f"{run_dir.path}/manifest.json"
    timings = dict(recorded(run_dir.manifest(), "timings", source=source) or {})   # the process start's share of torch
    run_dir.update_manifest(timings={**timings, "torch_import_s": torch_import_s}, head_start=ahead is not None,
                            startup_ages_s={k: round(v, 3) for k, v in ages.items() if v == v})
    return run_dir, cells


def measure(args: argparse.Namespace) -> Any:
    """The ladder of these flags (new or resumed), its tables printed: the run dir."""
    from rich.console import Console

    t0 = time.perf_counter()
    console = Console(stderr=True)
    run_dir = None
    if args.resume:
        check_resume_flags(args)
        run_dir, cfg, opts = _resume(args.resume)
    else:
        cfg, opts = options(args)
    from l2attr.distribute.options import from_flags as distribute_from_flags

    dist = distribute_from_flags(args.workers, args.scheduler)     # refused before any GPU is looked for
    from l2attr.analysis.spread import describe_launch_lag, launch_lag_effect
    from l2attr.ladders.section import break_even_lines, ladder_tables, spread_lines
    from l2attr.rundir import command_line
    from l2attr.schema import CELLS, SAMPLES

    if dist is not None:
        from l2attr.ladders.measure.distribute import ladder_on_workers
        from l2attr.ladders.measure.run import ladder_manifest

        run_dir = ladder_on_workers(cfg, opts, run_dir, dist, args.out, args.name,
                                    lambda versions, gpu: ladder_manifest(cfg, opts, command_line(), versions, gpu),
                                    log=console.print)
        cells = run_dir.read(CELLS)
    else:
        run_dir, cells = _one_process(args, cfg, opts, run_dir, console)
    for t in ladder_tables(cells):
        Console().print(t)
    samples = run_dir.read(SAMPLES)
    wall = time.perf_counter() - t0
    run_dir.update_manifest(process_wall_s=wall)
    for line in break_even_lines(cells, samples):
        console.print(line, markup=False, highlight=False)
    for line in spread_lines(samples):
        console.print(line, markup=False, highlight=False)
    lag = launch_lag_effect(samples, opts.spin_us, opts.timer)
    if lag is not None:
        console.print(describe_launch_lag(lag, opts.spin_us, opts.timer), markup=False, highlight=False)
    console.print(f"ladder finished in {wall:.1f} s wall (this process, compile + data + checks "
                  f"+ timing); results in {run_dir.path}")
    return run_dir


def run(args: argparse.Namespace) -> int:
    measure(args)
    return 0


class _KeywordParser(argparse.ArgumentParser):
    """The ladder's flags for `l2attr.ladder(...)`: a mistake is a UserError, not an exit."""

    def error(self, message: str) -> Any:
        raise UserError(f"{self.prog}: {message}")


def namespace(flags: Sequence[str], out: Path | str, keywords: Mapping[str, Any],
              prog: str = "l2attr.ladder") -> argparse.Namespace:
    """`l2attr.ladder(*flags, out=..., **keywords)` as the command's flags: `flags` parsed as on the
    command line, each keyword argument a flag by its dest (families="artifact", repeats=3,
    rows=100_000, resume=RUN_DIR), checked as the flag is (LadderOptions, WorkloadConfig)."""
    p = _KeywordParser(prog=prog, add_help=False)
    add_arguments(p)
    args = p.parse_args(list(flags))
    known = sorted({a.dest for a in p._actions} - {"help"})
    unknown = sorted(set(keywords) - set(known))
    if unknown:
        raise UserError(f"{prog}: no option {', '.join(unknown)}; the options are {', '.join(known)}")
    for key, value in keywords.items():
        setattr(args, key, value)
    if args.resume is None:          # a resumed run stays where it is
        args.out = Path(out)
    return args
