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
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from l2attr.commands.ladder_inputs import check_ladder_inputs, check_resume_flags, options_from_args, parser_defaults
from l2attr.commands.tuning import apply_tuning
from l2attr.dlrm.config import WorkloadConfig, add_workload_args, config_from_args
from l2attr.dlrm.declare import ALL_FAMILIES, DEFAULT_MAXRREGCOUNT, PROFILES, parse_rungs
from l2attr.dlrm.measure.kernels import FAST_UNROLLS, LaunchShape
from l2attr.measure.adaptive import LADDER_DEFAULT as ADAPTIVE
from l2attr.vocab import Command, L2Condition, Pin, TimerKind

if TYPE_CHECKING:
    from l2attr.dlrm.measure.run import LadderOptions


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_workload_args(p)
    g = p.add_argument_group("ladder")
    g.add_argument("--family", default=ALL_FAMILIES,
                   help="kernel family: artifact, tuned, fast, a comma list, or all (default all: "
                        "the three, artifact first)")
    g.add_argument("--rungs", help="comma list (default: baseline,optmt,rpf_optmt,l2p_optmt,combined,torch; "
                                   "apw_optmt, the access-policy window instead of a pin, on request)")
    g.add_argument("--profiles", help=f"comma list of reuse profiles (default: {','.join(PROFILES)})")
    g.add_argument("--trace", type=Path, help="artifact-format index trace instead of a profile")
    g.add_argument("--hot", type=Path, help="hot-index file (one id per line) for the pin kernel")
    g.add_argument("--drop-out-of-range", action="store_true",
                   help="drop trace ids >= rows as the artifact's loader silently did")
    g.add_argument("--l2", dest="l2_state", default=L2Condition.NATURAL.value, metavar="STATE[,STATE...]",
                   help="cache state between calls, one or several run in turn: natural (artifact: "
                        "nothing), flush (flush L2 "
                        "before every table call), flush_after_pin (control: flush between pin "
                        "and consumer), reset_after_pin (control: cudaCtxResetPersistingL2Cache "
                        "between pin and consumer)")
    g.add_argument("--repeats", type=int, default=None,
                   help="a fixed run: this many device-timed repeats per cell, each followed by a "
                        "host-timed one (default: adaptive repeats, below)")
    g.add_argument("--target-rel", type=float, default=ADAPTIVE.target_rel,
                   help="adaptive repeats: a cell stops once its 95%% interval of the median (kernel "
                        "timer: consumer, and pin) has a half-width <= this share of its median "
                        f"(default {ADAPTIVE.target_rel})")
    g.add_argument("--min-repeats", type=int, default=ADAPTIVE.min_repeats,
                   help=f"adaptive repeats: at least this many per cell (default {ADAPTIVE.min_repeats})")
    g.add_argument("--max-repeats", type=int, default=ADAPTIVE.max_repeats,
                   help=f"adaptive repeats: at most this many; a cell stopped here is marked noisy in "
                        f"cells.csv (stopped = limit) (default {ADAPTIVE.max_repeats})")
    g.add_argument("--max-seconds", type=float, default=ADAPTIVE.max_seconds,
                   help="adaptive repeats: at most this many seconds of repeats per cell, then marked "
                        f"noisy as at --max-repeats (default {ADAPTIVE.max_seconds:g})")
    g.add_argument("--no-host-repeat", action="store_true",
                   help="skip the host-timed repeats (no artifact-timer or wall-charged figures)")
    g.add_argument("--maxrregcount", type=int, default=DEFAULT_MAXRREGCOUNT,
                   help="register cap of the OptMT rungs (default 42)")
    g.add_argument("--pin-granularity", choices=(Pin.LINE.value, Pin.ELEMENT.value), default=None,
                   help="one prefetch per 128-byte line or per element; default: each family's own "
                        "(artifact: element, the only one it has; tuned: line)")
    g.add_argument("--rpf-depth", type=int, default=2,
                   help="values in flight in the tuned family's RPF (default 2; the artifact's is 2)")
    g.add_argument("--grid", type=int, default=1024, help="consumer grid (default 1024)")
    g.add_argument("--block", default="32,8", help="consumer block x,y (default 32,8)")
    fast = LaunchShape()
    g.add_argument("--fast-warps-per-bag", type=int, default=fast.fast_warps_per_bag,
                   help=f"fast family: warps sharing one bag (default {fast.fast_warps_per_bag}, "
                        "from the committed tuning table)")
    g.add_argument("--fast-bags-per-block", type=int, default=fast.fast_bags_per_block,
                   help=f"fast family: bags per block (default {fast.fast_bags_per_block})")
    g.add_argument("--fast-unroll", type=int, default=fast.fast_unroll, choices=FAST_UNROLLS,
                   help=f"fast family: row loads in flight per lane (default {fast.fast_unroll})")
    g.add_argument("--fast-load", type=int, default=fast.fast_load, choices=(0, 1, 2),
                   help="fast family: row load form, 0 plain, 1 L1::no_allocate, 2 that + L2::256B "
                        f"(default {fast.fast_load})")
    g.add_argument("--fast-maxrregcount", type=int, default=fast.fast_maxrregcount,
                   help=f"fast family: register cap, 0 for none (default {fast.fast_maxrregcount})")
    g.add_argument("--tuning", type=Path, metavar="FILE",
                   help="fast family: the launch point this tuning table chooses (benchmarks/tune_fast.py's "
                        "fast_tuning.csv, read whole or refused; `l2attr tuning FILE` shows it) instead of "
                        "the --fast-* defaults")
    g.add_argument("--timer", choices=TimerKind.values(), default=TimerKind.BLOCKING.value,
                   help="kernel timer: blocking (default: the GPU waits on a host flag until the timed "
                        "launches are enqueued, so no launch lag reaches the interval) or spin (a GPU "
                        "spin of --spin-us before each timed kernel)")
    g.add_argument("--spin-us", type=float, default=50.0,
                   help="with --timer spin: GPU spin before each timed kernel (default 50)")
    g.add_argument("--nvtx-last", type=int, default=0,
                   help="NVTX ranges only around the last N measured calls of a cell (0: all)")
    g.add_argument("--no-bandwidth", action="store_true",
                   help="skip the warm-up and the copy / HBM-read / L2-read bandwidth measurements "
                        "(what `l2attr profile` asks of its children)")
    g.add_argument("--checks-memo", type=Path, default=None, metavar="FILE",
                   help="keep the correctness checks' verdicts in FILE and take them from there when the "
                        "same sources, workload, options and GPU checked before: how each later replay "
                        "pass of an `l2attr profile` child skips checks its first pass made")
    g.add_argument("--extra-cell", dest="extra_cells", action="append", default=[],
                   metavar="FAMILY:RUNG:PROFILE:L2_STATE",
                   help="also measure this cell (repeatable): how `l2attr profile` runs its validity "
                        "control's arms in the sweep's child")
    g.add_argument("--nvtx-calls", action="store_true",
                   help="also one NVTX range around each whole call (pin -> sync -> consumer), for "
                        "`profile --timeline`'s range replay")
    o = p.add_argument_group("output")
    o.add_argument("--out", type=Path, default=Path("runs"), help="runs folder (default ./runs)")
    o.add_argument("--name", default=Command.LADDER.value, help="run name suffix (default ladder)")
    o.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue an interrupted run")
    o.add_argument("--cache-dir", type=Path, default=None,
                   help="cache generated workloads here (default: the user's cache dir, or $L2ATTR_CACHE_DIR; see `l2attr cache info`)")
    o.add_argument("--quiet", action="store_true", help="no progress bar")
    from l2attr.distribute.options import add_arguments as add_distribute_arguments

    add_distribute_arguments(p)


def _resume(args: argparse.Namespace):
    from dataclasses import fields

    from l2attr.dlrm.measure.run import LadderOptions
    from l2attr.integrity.manifest import check_manifest
    from l2attr.rundir import open_for_resume, resumed
    from l2attr.vocab import Family

    run, m = open_for_resume(args.resume, Command.LADDER, check_manifest)   # typed (integrity/manifest.py) first
    cfg = resumed(run, "config", lambda: WorkloadConfig(**m["config"]))

    def options() -> LadderOptions:
        saved = dict(m["measure"])
        saved.pop("variants", None)
        saved["rungs"] = parse_rungs(",".join(saved["rungs"]))
        saved["families"] = [Family(f) for f in saved["families"]]
        saved["shape"] = LaunchShape(**{k: tuple(v) if isinstance(v, list) else v
                                        for k, v in saved["shape"].items()})
        for key in ("trace", "hot", "cache_dir", "checks_memo"):
            saved[key] = Path(saved[key]) if saved.get(key) else None
        return LadderOptions(**saved)

    return run, cfg, resumed(run, "measure", options, {f.name for f in fields(LadderOptions)} | {"variants"})


def head_start(cfg: WorkloadConfig, opts: "LadderOptions") -> Any:
    """A fresh run's workloads and kernels, started on threads before torch is imported (NVRTC and
    numpy release the GIL; the import holds it): dlrm/measure/prefetch.py's HeadStart, which
    run_ladder(ahead=...) takes over. Their modules are imported here, on this thread."""
    from l2attr.dlrm.measure.check import start_compile
    from l2attr.dlrm.measure.prefetch import HeadStart, WorkloadPrefetch
    from l2attr.dlrm.measure.run import _workload_bytes, ladder_profiles, workload_builder

    try:
        import platformdirs  # noqa: F401  (the default cache dir's, read by a builder)
    except ImportError:
        pass
    prefetch = WorkloadPrefetch(workload_builder(cfg, opts), ladder_profiles(opts), _workload_bytes(cfg))
    return HeadStart(prefetch, start_compile(cfg, opts))


def _one_process(args: argparse.Namespace, cfg: WorkloadConfig, opts: "LadderOptions", run_dir, console):
    """Today's path: this process, its GPU, cell after cell."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from l2attr.dlrm.measure.phases import process_age_s
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

    from l2attr.dlrm.measure.run import ladder_manifest, run_ladder
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
    timings = dict(run_dir.manifest().get("timings") or {})     # the process start's share of torch
    run_dir.update_manifest(timings={**timings, "torch_import_s": torch_import_s}, head_start=ahead is not None,
                            startup_ages_s={k: round(v, 3) for k, v in ages.items() if v == v})
    return run_dir, cells


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    t0 = time.perf_counter()
    console = Console(stderr=True)
    run_dir = None
    if args.resume:
        check_resume_flags(args, parser_defaults(add_arguments))
        run_dir, cfg, opts = _resume(args)
    else:
        cfg = config_from_args(args)
        check_ladder_inputs(args, cfg)     # files, names, numbers: before the GPU is looked for
        apply_tuning(args, parser_defaults(add_arguments))   # --tuning FILE: the table's launch point
        opts = options_from_args(args)
    from l2attr.distribute.options import from_args as distribute_from_args

    dist = distribute_from_args(args)     # --workers / --scheduler: refused before any GPU is looked for
    from l2attr.analysis.spread import describe_launch_lag, launch_lag_effect
    from l2attr.commands.show import break_even_lines, ladder_tables, spread_lines
    from l2attr.rundir import command_line
    from l2attr.schema import CELLS, SAMPLES

    if dist is not None:
        from l2attr.distribute.ladder import ladder_on_workers
        from l2attr.dlrm.measure.run import ladder_manifest

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
    return 0
