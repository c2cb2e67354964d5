"""Layer B: Nsight Compute L2 attribution per role (pin vs consumer), or --import a report.

Run the ladder under ncu (application replay, no cache flush, no clock lock) and write
RUN_DIR/metrics.csv, a validity control and a summary:

  l2attr profile --metrics l2 --preset small --rungs l2p_optmt,optmt --profiles reuse_medium

Turn any existing report into the tidy metrics table (no GPU needed):

  l2attr profile --import report.ncu-rep --csv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from l2attr.dlrm.config import add_workload_args, config_from_flags
from l2attr.errors import UserError
from l2attr.dlrm.declare import ALL_FAMILIES, parse_families, parse_profiles, rung
from l2attr.profile.ncu_cmd import (APP_REPLAY_BUFFERS, APP_REPLAY_MATCHES, APP_REPLAY_MODES, CACHE_CONTROLS,
                                    CACHE_FLUSH_ACK, CLOCK_CONTROLS, KERNEL_REPLAY_ACK, REPLAY_MODES,
                                    NcuOptions)
from l2attr.vocab import (Ncu, Command, Condition, L2Condition)

if TYPE_CHECKING:
    from rich.console import Console

    from l2attr.dlrm.profile.plan import ProfileSettings
    from l2attr.profile.tools import Tools


def add_arguments(p: argparse.ArgumentParser) -> None:
    imp = p.add_argument_group("import an existing report")
    imp.add_argument("--import", dest="import_path", type=Path, metavar="REPORT",
                     help="read REPORT.ncu-rep (or an nsys .sqlite export) instead of profiling")
    imp.add_argument("--csv", action="store_true", help="with --import: print the table as CSV to stdout")
    imp.add_argument("--condition", default=Condition.LADDER.value,
                     help="with --import: condition column (default ladder)")
    imp.add_argument("--keep-all-metrics", action="store_true",
                     help="keep device__/launch__/profiler__ attributes and .avg/.min/.max rollups")
    imp.add_argument("--nvtx-include", dest="import_nvtx", action="append", default=[], metavar="EXPR",
                     help="with --import: only kernels inside matching NVTX ranges (ncu's syntax, e.g. "
                          "'regex:l2attr@consumer:.*/'; repeatable = or)")
    imp.add_argument("--kernel-name", metavar="NAME",
                     help="with --import: only kernels with this function name (or regex:PATTERN)")
    imp.add_argument("--allow-partial", action="store_true",
                     help="with --import: read a report with damaged kernels, keep the intact ones and "
                          "say at the top what was left out (default: refuse it)")

    run = p.add_argument_group("what to profile")
    run.add_argument("--metrics", default="l2",
                     help="metric sets and/or raw ncu metric names, comma-separated (default: l2)")
    run.add_argument("--family", default=ALL_FAMILIES,
                     help="kernel families to profile: artifact, tuned, fast, a comma list, or all "
                          "(default all: the three, in one sweep)")
    run.add_argument("--rungs", help="comma-separated rungs (default: the five ladder rungs)")
    run.add_argument("--profiles", help="comma-separated reuse profiles (default: all four)")
    run.add_argument("--calls-per-cell", type=int, default=None, metavar="N",
                     help="profile the last N table calls of each cell (ladder --nvtx-last N; default: "
                          "6, the fewest the per-call spread allows (docs/layer-b.md#calls-per-cell); "
                          "the number of tables profiles the whole last measured batch)")
    run.add_argument("--out", type=Path, default=Path("runs"), help="run dirs go here (default: runs)")
    run.add_argument("--name", default=Command.PROFILE.value, help="run name (default: profile)")
    run.add_argument("--chip", help="ga100 | gh100 (default: from the GPU's compute capability)")
    run.add_argument("--no-control", dest="control", action="store_false",
                     help="skip the validity control (pin vs pin+flush on l2p_optmt)")
    run.add_argument("--control-profile", help="profile of the validity control (default: hottest selected)")
    run.add_argument("--ladder-arg", dest="ladder_args", action="append", default=[], metavar="ARG",
                     help="extra argument for the child `l2attr ladder` (repeatable), e.g. --ladder-arg=--pin-granularity=element")
    run.add_argument("--dry-run", action="store_true", help="print the ncu command lines and stop")
    run.add_argument("--timeline-totals", action="store_true",
                     help="with --timeline: also replay the range once more for its totals of the l2 set")
    run.add_argument("--timeline", action="store_true",
                     help="pin -> sync -> consumer in time: nsys where it can make reports, else ncu's "
                          "range replay of one call with PM sampling (timeline.csv, phases.csv)")
    run.add_argument("--pm-max-passes", type=int, default=1, metavar="N",
                     help="with --timeline: replays ncu may spend on PM sampling (default 1: one replay "
                          "fewer than ncu's own choice, the same quantities and phases, docs/facts.md#pm-sampling; "
                          "0: ncu decides)")
    add_workload_args(p)

    ncu = p.add_argument_group("Nsight Compute settings (defaults keep the pin's L2 state)")
    ncu.add_argument("--ncu", help="ncu executable (default: ncu on PATH)")
    ncu.add_argument("--replay-mode", choices=REPLAY_MODES, default=Ncu.APPLICATION.value)
    ncu.add_argument("--app-replay-mode", choices=APP_REPLAY_MODES, default=Ncu.STRICT.value)
    ncu.add_argument("--app-replay-match", choices=APP_REPLAY_MATCHES, default=Ncu.GRID.value)
    ncu.add_argument("--app-replay-buffer", choices=APP_REPLAY_BUFFERS, default=NcuOptions.app_replay_buffer,
                     help="where ncu keeps the passes' data: file (then the report is made after the last "
                          "pass) or memory (made while profiling)")
    ncu.add_argument("--cache-control", choices=CACHE_CONTROLS, default=Ncu.NONE.value)
    ncu.add_argument("--clock-control", choices=CLOCK_CONTROLS, default=Ncu.NONE.value)
    ncu.add_argument(KERNEL_REPLAY_ACK, dest="allow_kernel_replay", action="store_true",
                     help="allow kernel replay although it restores memory and loses the pin's L2 state")
    ncu.add_argument(CACHE_FLUSH_ACK, dest="allow_cache_flush", action="store_true",
                     help="allow --cache-control all although it flushes L2 before every profiled kernel")
    ncu.add_argument("--no-validate-metrics", dest="validate_metrics", action="store_false",
                     help="do not check metric names with `ncu --query-metrics`")
    from l2attr.distribute.options import add_arguments as add_distribute_arguments

    add_distribute_arguments(p)


def _console():
    """Rich output; wide when piped (rich would wrap at 80 columns and split range names)."""
    from rich.console import Console

    return Console(highlight=False, width=None if sys.stdout.isatty() else 200)


def run(args: argparse.Namespace) -> int:
    from l2attr.commands.profile_flags import check_profile_flags
    from l2attr.typed import parser_defaults

    check_profile_flags(args, parser_defaults(add_arguments))   # contradictions: before any work
    from l2attr.distribute.options import from_flags as distribute_from_flags
    from l2attr.distribute.options import refuse_with

    refuse_with(args.workers, args.scheduler, "--timeline", bool(args.timeline), "workers split a profile run into ncu children per "
                "family x profile; --timeline profiles one call in this process: drop --workers/--scheduler")
    dist = distribute_from_flags(args.workers, args.scheduler)     # --workers / --scheduler: refused before any GPU is looked for
    if dist is not None:
        from l2attr.distribute.profile import profile_on_workers

        families = parse_families(args.family)
        return profile_and_show(_settings(args), _console(), run=lambda s, log, tools: profile_on_workers(
            s, families, dist, log, tools))
    if args.import_path is not None:
        return _run_import(args)
    if args.csv:
        raise UserError("--csv only applies to --import")
    if args.timeline:
        return _run_timeline(args)
    return _run_profile(args)


def _run_import(args: argparse.Namespace) -> int:
    path: Path = args.import_path
    if path.suffix == ".sqlite":
        if args.allow_partial:
            raise UserError(f"--allow-partial applies to .ncu-rep reports, not to {path.name}")
        from l2attr.profile.nsys import read_timeline

        df = read_timeline(path)
        if args.csv:
            df.to_csv(sys.stdout, index=False)
        else:
            _console().print(df.to_string(index=False), markup=False)
        return 0
    from l2attr.profile.ncu_import import csv_order, read_report

    res = read_report(path, condition=args.condition, keep_all=args.keep_all_metrics,
                      nvtx_include=args.import_nvtx, kernel_name=args.kernel_name,
                      allow_partial=args.allow_partial)
    if res.table.empty:  # a header-only CSV or an empty table with exit 0 would pass for data
        raise UserError(f"{path}: no profiled kernel metrics in it (empty or truncated report?)")
    if args.csv:
        for note in res.partial:   # before any data, on stderr: stdout is the CSV a script reads
            print(f"l2attr profile: partial data (--allow-partial): {note}", file=sys.stderr)
        csv_order(res.table).to_csv(sys.stdout, index=False)
        for w in res.warnings:
            print(f"l2attr profile: warning: {w}", file=sys.stderr)
        return 0
    render_import(_console(), res, path)
    return 0


def render_import(console, res, path: Path) -> None:
    """One row per profiled call (NVTX range instance): counts summed over its kernels, the
    headline hit rate from those sums (analysis.calls.call_table, as the report does)."""
    from rich.markup import escape
    from rich.table import Table

    from l2attr.analysis.calls import call_table, headline_rate, label

    df = res.table
    # l2attr's calls are (role, cell, table, batch); any other kernel is a call of its own
    own = df["table"].notna()
    calls = call_table(df.assign(kernel_call=df["launch"].where(~own, -1)),
                       extra_keys=("nvtx_range", "kernel_call"))
    rate = headline_rate()
    for note in res.partial:
        console.print(f"PARTIAL (--allow-partial): {note}; the table below leaves those kernels out",
                      markup=False, highlight=False, soft_wrap=True)   # one line, whatever the width
    table = Table(title=f"{path.name}: {df['launch'].nunique()} kernels in {len(calls)} calls, {len(df)} rows")
    for col in ("role", "NVTX range", "kernels"):
        table.add_column(col, overflow="fold")
    columns = ((rate, f"{label(rate)} %", 1.0, "{:.2f}"), ("dram_read", "DRAM read MB", 1e-6, "{:.2f}"),
               ("dram_write", "DRAM write MB", 1e-6, "{:.2f}"),
               ("evict_last", "evict-last sectors", 1.0, "{:,.0f}"), ("duration", "time µs", 1e-3, "{:.1f}"))
    for _, title, _, _ in columns:
        table.add_column(title, justify="right")
    for rec in calls.to_dict("records"):
        cells = []
        for key, _, scale, fmt in columns:
            v = rec.get(key)
            cells.append("-" if v is None or v != v else fmt.format(v * scale))
        name = rec.get("nvtx_range") or "-"
        table.add_row(escape(str(rec.get("role") or "-")), escape(str(name)), str(rec.get("kernels", "")), *cells)
    console.print(table)
    for w in res.warnings:
        console.print(f"warning: {w}", markup=False, highlight=False)


def _settings(args: argparse.Namespace):
    from l2attr.dlrm.profile.plan import DEFAULT_RUNGS, ProfileSettings, default_calls
    from l2attr.rundir import command_line

    rungs = [rung(n.strip()).name for n in args.rungs.split(",") if n.strip()] if args.rungs else list(DEFAULT_RUNGS)
    profiles = parse_profiles(args.profiles)
    if args.control_profile:
        parse_profiles(args.control_profile)  # validates the name
    opts = NcuOptions(replay_mode=args.replay_mode, cache_control=args.cache_control,
                      clock_control=args.clock_control, app_replay_match=args.app_replay_match,
                      app_replay_buffer=args.app_replay_buffer,
                      app_replay_mode=args.app_replay_mode, allow_kernel_replay=args.allow_kernel_replay,
                      allow_cache_flush=args.allow_cache_flush)
    from l2attr.catalog.sets import check_chip

    cfg = config_from_flags(vars(args))
    settings = ProfileSettings(
        cfg=cfg, metrics=args.metrics, rungs=rungs, profiles=profiles,
        calls_per_cell=default_calls(cfg) if args.calls_per_cell is None else args.calls_per_cell, out=args.out, name=args.name,
        chip=check_chip(args.chip) if args.chip else None, ncu=args.ncu, opts=opts,
        control=args.control, control_profile=args.control_profile,
        control_family=parse_families(args.family)[0].value, timeline_totals=args.timeline_totals,
        pm_max_passes=args.pm_max_passes,
        extra=["--family", args.family, *args.ladder_args],
        validate_metrics=args.validate_metrics, dry_run=args.dry_run, keep_all=args.keep_all_metrics,
        command=command_line())
    _check_child(settings)
    return settings


def _check_child(s: Any) -> None:
    """The child ladder's flags through its options model (LadderOptions) here, before ncu starts it:
    a bad --ladder-arg is this command's one line, not a child's failure under the profiler."""
    from l2attr.ladders import command as ladder
    from l2attr.dlrm.profile.plan import child_command

    argv = child_command(s.cfg, s.rungs, s.profiles, L2Condition.NATURAL.value, 1, s.out, s.name, s.extra)
    child = ladder.namespace(argv[4:], s.out, {}, prog="l2attr profile --ladder-arg")
    ladder.options_from_args(child, s.cfg.rows)


def _run_profile(args: argparse.Namespace) -> int:
    return profile_and_show(_settings(args), _console())


def profile_and_show(s: ProfileSettings, console: Console, tools: Tools | None = None, run=None) -> int:
    """Run the profile (profile.orchestrate, or `run`: the same on workers), then show what it
    found: the layer-B grid, the warnings and the validity control as analysis judges the
    metrics.csv just written."""
    from l2attr.analysis.control import describe_control, run_control
    from l2attr.analysis.load import read_run
    from l2attr.commands.profile_show import ConsoleLog, layer_b_summary
    from l2attr.dlrm.profile.orchestrate import run_profile
    from l2attr.schema import METRICS

    done = (run or run_profile)(s, ConsoleLog(console), tools)
    if done.run is None:   # --dry-run: what would run
        console.print(f"chip {done.chip}; metric set {done.metric_set.name}: {len(done.metric_set.metrics)} "
                      f"metrics; {done.validation}", markup=False, highlight=False)
        for w in done.settings_warnings:
            console.print(f"warning: {w}", markup=False, highlight=False)
        print(done.plan.describe())
        return 0
    assert done.imported is not None
    layer_b_summary(console, done.imported.table)
    for w in done.imported.warnings:
        console.print(f"warning: {w}", markup=False, highlight=False)
    control = run_control(read_run(done.run))
    if control is not None:
        console.print(describe_control(control), markup=False, highlight=False)
    console.print(f"wrote {done.run / METRICS.filename}", markup=False, highlight=False)
    return 0


def _run_timeline(args: argparse.Namespace) -> int:
    return timeline_and_show(_settings(args), _console())


def timeline_and_show(s: ProfileSettings, console: Console, tools: Tools | None = None) -> int:
    """Run the timeline (profile.timeline), then show its table, warnings and files."""
    from l2attr.commands.profile_show import ConsoleLog
    from l2attr.dlrm.profile.timeline import run_timeline

    done = run_timeline(s, ConsoleLog(console), tools)
    console.print(done.table.to_string(index=False), markup=False, highlight=False)
    for w in done.warnings:
        console.print(f"warning: {w}", markup=False, highlight=False)
    console.print(f"wrote {done.run / done.wrote[0]}" + "".join(f", {w}" for w in done.wrote[1:]),
                  markup=False, highlight=False)
    return 0
