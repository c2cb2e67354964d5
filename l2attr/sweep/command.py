"""When does cross-kernel L2 residency pay? One axis per run dir, measured, not extrapolated.

Axes (both kernel families by default, OptMT consumer, kernel timer + wall clock): one declaration
each in l2attr/sweep/axes/ (`l2attr sweep --help` lists them with their options).

Every repeat of every point is appended to RUN_DIR/sweep_samples.csv as it is measured (and
listed in sweep_units.csv), point summaries go to sweep_points.csv; `--resume RUN_DIR` measures
what is missing. `l2attr report RUN_DIR` draws the sweep's chapter.

examples:
  l2attr sweep amortisation
  l2attr sweep hotset --family artifact --profiles reuse_high,random
  l2attr sweep pollution --pollute-mib 0,30,120 --repeats 2
  l2attr sweep --resume runs/20261130T220000Z-amortisation
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from l2attr.dlrm.config import WorkloadConfig, add_workload_args, config_from_flags
from l2attr.dlrm.workload.cache import default_cache_dir
from l2attr.errors import UserError
from l2attr.dlrm.declare import PROFILES, parse_families, parse_profiles
from l2attr.sweep import declare
from l2attr.vocab import Pin, Command


def add_arguments(p: argparse.ArgumentParser) -> None:
    from l2attr.sweep import axes

    names = axes.runnable()
    p.add_argument("axis", nargs="?", metavar="AXIS",
                   help="one of " + "; ".join(f"{n}: {axes.AXES[n].summary}" for n in names))
    add_workload_args(p)
    g = p.add_argument_group("sweep")
    g.add_argument("--family", default="artifact,tuned",
                   help="kernel families: artifact, tuned, fast, a comma list, or all (default "
                        "artifact,tuned: the issue's two; add fast for the consumer at the HBM limit)")
    g.add_argument("--profiles", help=f"comma list of reuse profiles (default: {','.join(PROFILES)})")
    g.add_argument("--repeats", type=int, default=None,
                   help="device-timed repeats per point and arm, each followed by a host-timed one (default 3)")
    from l2attr.sweep.measure.adaptive import SWEEP_DEFAULT as AD

    g.add_argument("--adaptive", action="store_true",
                   help="adaptive repeats, the ladder's rule: a point stops once every arm's 95%% interval of "
                        "the median (kernel timer: consumer, and pin) has a half-width <= --target-rel of it; "
                        "a point at --max-repeats or --max-seconds first is marked noisy (sweep_points.csv stopped)")
    g.add_argument("--target-rel", type=float, default=None, help=f"with --adaptive (default {AD.target_rel})")
    g.add_argument("--min-repeats", type=int, default=None, help=f"with --adaptive (default {AD.min_repeats})")
    g.add_argument("--max-repeats", type=int, default=None, help=f"with --adaptive (default {AD.max_repeats})")
    g.add_argument("--max-seconds", type=float, default=None,
                   help=f"with --adaptive: seconds of repeats per point (default {AD.max_seconds:g})")
    g.add_argument("--no-host-repeat", action="store_true", help="skip the wall-clock repeats")
    g.add_argument("--spin-us", type=float, default=50.0, help="GPU spin before each timed kernel (default 50)")
    g.add_argument("--pin-granularity", choices=(Pin.LINE.value, Pin.ELEMENT.value), default=None,
                   help="default: each family's own (artifact element, tuned line)")
    for o in axes.options():                 # each axis' own options, from its declaration
        users = [n for n in names if o in axes.AXES[n].options]
        if users:
            g.add_argument(o.flag, dest=o.dest, default=None,
                           help=f"{'/'.join(users)}: {o.help} (default {o.text(list(o.default))})")
    g.add_argument("--profile", action="store_true",
                   help="after the timing, DRAM bytes per point under Nsight Compute (a child run, one repeat, "
                        "a few calls per point; needs ncu); with --resume RUN_DIR it profiles a finished sweep")
    g.add_argument("--nvtx-ranges", action="store_true", help=argparse.SUPPRESS)   # the --profile child
    o = p.add_argument_group("output")
    o.add_argument("--out", type=Path, default=Path("runs"), help="runs folder (default ./runs)")
    o.add_argument("--name", default=None, help="run name suffix (default: the axis)")
    o.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue an interrupted sweep")
    o.add_argument("--cache-dir", type=Path, default=None,
                   help="cache generated workloads here (default: the user's cache dir, or $L2ATTR_CACHE_DIR; see `l2attr cache info`)")
    o.add_argument("--quiet", action="store_true", help="no progress bar")
    from l2attr.distribute.options import add_arguments as add_distribute_arguments

    add_distribute_arguments(p)


def options_from_args(args: argparse.Namespace) -> tuple[WorkloadConfig, declare.SweepOptions]:
    from l2attr.sweep import axes

    if not args.axis:
        raise UserError(f"give the AXIS to sweep: one of {', '.join(axes.runnable())}")
    from l2attr.typed import check_list_flags

    check_list_flags(vars(args))    # `--profiles ''` is refused as the ladder refuses it, never "all"
    from l2attr.outputs import check_out_folder

    check_out_folder(args.out)
    axis = declare.parse_axis(args.axis)
    cfg = config_from_flags(vars(args))
    values = {o.key: o.parse(text) for o in axes.options()
              if (text := getattr(args, o.dest, None)) is not None}
    opts = declare.SweepOptions(
        axis=axis, families=parse_families(args.family), profiles=parse_profiles(args.profiles),
        repeats=3 if args.repeats is None else args.repeats, host_repeat=not args.no_host_repeat, spin_us=args.spin_us,
        adaptive=adaptive_rule(args),
        pin_granularity=args.pin_granularity, cache_dir=str(args.cache_dir or default_cache_dir()),
        nvtx_ranges=args.nvtx_ranges, profile=args.profile, **values)
    declare.validate(cfg, opts)
    return cfg, opts


def adaptive_rule(args: argparse.Namespace):
    """--adaptive's rule (the defaults of sweep/measure/adaptive.py where a flag is not given), or None."""
    import math

    from l2attr.sweep.measure.adaptive import SWEEP_DEFAULT
    from l2attr.measure.adaptive import AdaptiveRule

    tuned = {k: getattr(args, k, None) for k in ("target_rel", "min_repeats", "max_repeats", "max_seconds")}
    if not getattr(args, "adaptive", False):
        given = [f"--{k.replace('_', '-')}" for k, v in tuned.items() if v is not None]
        if given:
            raise UserError(f"{', '.join(given)} set the adaptive rule: add --adaptive")
        return None
    if args.repeats is not None:
        raise UserError("--repeats is a fixed run, --adaptive stops each point on its interval: give one")
    values = {**SWEEP_DEFAULT.manifest(), **{k: v for k, v in tuned.items() if v is not None}}
    if not all(math.isfinite(float(v)) for v in values.values()):
        raise UserError("--adaptive: the rule's numbers must be finite")
    try:
        return AdaptiveRule(**values)
    except ValueError as exc:
        raise UserError(f"--adaptive: {exc}") from None


def _resume(args: argparse.Namespace):
    from l2attr.integrity.manifest import check_manifest
    from l2attr.rundir import open_for_resume, resumed

    run, m = open_for_resume(args.resume, Command.SWEEP, check_manifest)     # typed (integrity/manifest.py) first
    if args.axis and args.axis != m["sweep"].get("axis"):
        raise UserError(f"{args.resume} is a {m['sweep']['axis']} sweep, not {args.axis}")
    cfg = resumed(run, "config", lambda: WorkloadConfig(**m["config"]))
    opts = resumed(run, Command.SWEEP.value, lambda: declare.SweepOptions.from_manifest(m["sweep"]))
    opts.profile = opts.profile or args.profile
    resumed(run, Command.SWEEP.value, lambda: declare.validate(cfg, opts))
    return run, cfg, opts


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    t0 = time.perf_counter()
    console = Console(stderr=True)
    if args.resume:
        run_dir, cfg, opts = _resume(args)
    else:
        cfg, opts = options_from_args(args)
    from l2attr.distribute.options import from_flags as distribute_from_flags
    from l2attr.distribute.options import refuse_with

    refuse_with(args.workers, args.scheduler, "--profile", bool(opts.profile), "--profile is not run on workers; measure with --workers, "
                "then profile the finished sweep on one GPU: l2attr sweep --resume RUN_DIR --profile")
    dist = distribute_from_flags(args.workers, args.scheduler)     # --workers / --scheduler: refused before any GPU is looked for
    if dist is not None:
        from l2attr.sweep.measure.distribute import sweep_on_workers
        from l2attr.rundir import command_line

        run_dir = sweep_on_workers(cfg, opts, run_dir if args.resume else None, dist, args.out,
                                   args.name or str(opts.axis), command_line(), log=console.print)
        return _finish(run_dir, opts, time.perf_counter() - t0, console)
    from l2attr.gpu.runtime import require_gpu

    if opts.profile:
        from l2attr.sweep.measure.dram import require_ncu

        require_ncu()
    require_gpu()   # no GPU: one line, exit 2, nothing written
    from l2attr.gpu.persisting import device_limits

    limits = device_limits()
    declare.validate_device(cfg, opts, limits)
    from l2attr.dlrm.measure.gpu import check_fits

    check_fits(cfg)
    from l2attr.gpu.device import gpu_facts, software_versions
    from l2attr.rundir import RunDir, command_line
    from l2attr.sweep.measure.run import run_sweep

    if not args.resume:
        run_dir = RunDir.create(args.out, args.name or str(opts.axis), {
            "kind": Command.SWEEP.value, "command": command_line(), "config": cfg.to_dict(), "sweep": opts.manifest(),
            "versions": software_versions(), "gpu": gpu_facts()})
    console.print(f"run dir: {run_dir.path}")
    progress = None
    if not args.quiet:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                            TextColumn("{task.completed}/{task.total} units"), TimeElapsedColumn(), console=console)
    if progress is not None:
        with progress:
            run_sweep(cfg, opts, run_dir, limits, log=console.print, progress=progress)
    else:
        run_sweep(cfg, opts, run_dir, limits, log=console.print)
    wall = time.perf_counter() - t0
    if opts.profile:
        from l2attr.sweep.measure.dram import profile_dram

        t1 = time.perf_counter()
        profile_dram(run_dir.path, cfg, opts, log=console.print)
        run_dir.update_manifest(profile_wall_s=time.perf_counter() - t1)
    return _finish(run_dir, opts, wall, console)


def _finish(run_dir, opts: declare.SweepOptions, wall: float, console) -> int:
    """The sweep's summary lines, from the run dir just written (one process or workers alike)."""
    run_dir.update_manifest(process_wall_s=wall)
    from l2attr.sweep.load import load_sweep
    from l2attr.sweep.section.text import summary_lines

    for line in summary_lines(load_sweep(run_dir.path)):
        print(line)
    console.print(f"sweep {opts.axis} finished in {wall:.1f} s wall; results in {run_dir.path}")
    return 0


__all__ = ["add_arguments", "run", "options_from_args"]
