"""Inspect, generate and rank index traces in the artifact's format (one id per line). CPU only.

  l2attr traces stats FILE [--rows N] [--top-k K] [--hot HOT] [--drop-out-of-range] [--json]
  l2attr traces stats --profile P [--lookups N] [--seed S] [--rows N] [--top-k K] [--json]
  l2attr traces gen --profile P --out FILE [--lookups N] [--hot-out HOT] [workload flags]
  l2attr traces hot FILE --top-k K --out HOT [--rows N] [--drop-out-of-range]

Profiles: reuse_high, reuse_medium, reuse_low, random (or high, medium, low).
Reuse distance = lookups since the previous lookup of the same id (time, not stack, distance).
A --top-k above a trace's unique ids counts all of them (and says so). Outputs are written
atomically, never over an input, and only into an existing folder; `gen` says the file's size
before writing and refuses one that would not fit in memory or on the disk.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from l2attr.dlrm.config import WorkloadConfig, add_workload_args, config_from_flags
from l2attr.errors import UserError
from l2attr.outputs import check_disk, check_distinct, check_memory, check_output, human_bytes, id_file_bytes
from l2attr.dlrm.workload import profiles
from l2attr.dlrm.workload.hotset import id_counts, read_hot_file, top_k
from l2attr.dlrm.workload.stats import REUSE_DEFINITION, TraceStats, trace_stats
from l2attr.dlrm.workload.traces import read_trace, write_ids

_DEFAULTS = WorkloadConfig()  # the artifact's shape: 500,000 rows, 60,000 hot rows


def _positive(text: str) -> int:
    """argparse type: an integer > 0 (a one-line usage error otherwise)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value}")
    return value


def _add_stats(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("stats", help="lookups, unique ids, top-K / hot-file coverage, reuse distance",
                       description="Statistics of a trace file or of a built-in profile.")
    p.add_argument("file", nargs="?", type=Path, help="trace file (one id per line)")
    p.add_argument("--profile", help="a built-in profile instead of a file")
    p.add_argument("--lookups", type=_positive,
                   help="with --profile: the first N ids of the generating process "
                        "(default: one period of the profile; random: 429,951)")
    p.add_argument("--seed", type=int, default=_DEFAULTS.seed, help="with --profile (default 0)")
    p.add_argument("--rows", type=_positive, default=_DEFAULTS.rows,
                   help=f"rows per table; ids must be below it (default {_DEFAULTS.rows})")
    p.add_argument("--top-k", type=_positive, default=_DEFAULTS.hot_rows,
                   help=f"K for top-K coverage (default {_DEFAULTS.hot_rows})")
    p.add_argument("--hot", type=Path, metavar="HOT", help="hot-index file: report its coverage")
    p.add_argument("--drop-out-of-range", action="store_true",
                   help="drop ids >= rows (as the artifact's loader silently did) instead of failing")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(_action=_run_stats)


def _add_gen(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gen", help="write a built-in profile as a trace file",
                       description="Write a profile's ids in the artifact's format (atomically).")
    p.add_argument("--profile", required=True, help="reuse_high|reuse_medium|reuse_low|random")
    p.add_argument("--out", type=Path, required=True, metavar="FILE", help="trace file to write")
    p.add_argument("--lookups", type=_positive,
                   help="write the first N ids of the generating process (default: one "
                        "period of the profile, which the workload replays circularly; for "
                        "random, every lookup of the workload)")
    p.add_argument("--hot-out", type=Path, metavar="HOT",
                   help="also write the top --hot-rows ids of the written trace")
    add_workload_args(p)
    p.set_defaults(_action=_run_gen)


def _add_hot(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("hot", help="write the top-K ids of a trace as a hot-index file",
                       description="Top-K ids by count (ties: smaller id first), hottest first.")
    p.add_argument("file", type=Path, help="trace file (one id per line)")
    p.add_argument("--top-k", type=_positive, default=_DEFAULTS.hot_rows,
                   help=f"K (default {_DEFAULTS.hot_rows})")
    p.add_argument("--out", type=Path, required=True, metavar="HOT", help="hot file to write")
    p.add_argument("--rows", type=_positive, default=_DEFAULTS.rows,
                   help=f"rows per table (default {_DEFAULTS.rows})")
    p.add_argument("--drop-out-of-range", action="store_true",
                   help="drop ids >= rows instead of failing")
    p.set_defaults(_action=_run_hot)


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="traces_action", metavar="ACTION", required=True)
    _add_stats(sub)
    _add_gen(sub)
    _add_hot(sub)


def run(args: argparse.Namespace) -> int:
    return args._action(args)


# --- stats ---------------------------------------------------------------------------------

_INT64 = 8
_SHRINK = "use fewer --rows or --lookups"


def _stats_memory(lookups: int, rows: int) -> int:
    """Peak bytes of trace_stats, roughly: the ids and four lookup-sized temporaries of the reuse
    distances, plus the per-row counts and the top-K argsort (negated copy, order, work space)."""
    return 5 * _INT64 * lookups + 4 * _INT64 * rows


def _stats_of_profile(args: argparse.Namespace) -> TraceStats:
    name = profiles.canonical_profile(args.profile)
    n = args.lookups or profiles.period(name, args.rows) or profiles.PARAMS["reuse_medium"].period
    check_memory(_stats_memory(n, args.rows) + _INT64 * args.rows,
                 f"statistics of {n:,} lookups over {args.rows:,} rows", _SHRINK)
    ids = profiles.generate(name, n, args.rows, args.seed)
    hot = read_hot_file(args.hot, args.rows) if args.hot else None
    return trace_stats(ids, args.rows, args.top_k, name=f"{name} (seed {args.seed})", hot=hot,
                       hot_name=args.hot.name if args.hot else None)


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # read_trace says why it cannot be read


def _stats_of_file(args: argparse.Namespace) -> TraceStats:
    # the rows part before reading (the file itself is on disk), the lookups part once known
    check_memory(_stats_memory(0, args.rows) + _file_size(args.file),
                 f"statistics of {args.file} over {args.rows:,} rows", _SHRINK)
    trace = read_trace(args.file, args.rows, args.drop_out_of_range)
    check_memory(_stats_memory(trace.ids.size, args.rows),
                 f"statistics of {trace.ids.size:,} lookups over {args.rows:,} rows", _SHRINK)
    hot = read_hot_file(args.hot, args.rows) if args.hot else None
    return trace_stats(trace.ids, args.rows, args.top_k, name=str(args.file), hot=hot,
                       hot_name=args.hot.name if args.hot else None, dropped=trace.dropped)


def _fmt_distance(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} lookups"


def _stats_table(s: TraceStats) -> Table:
    table = Table(title=f"trace stats: {s.name}", show_header=False, title_justify="left")
    table.add_column("measure", style="bold")
    table.add_column("value", justify="right")
    table.add_column("note", style="dim")
    table.add_row("lookups", f"{s.lookups:,}",
                  f"{s.dropped:,} out-of-range ids dropped" if s.dropped else "")
    table.add_row("unique ids", f"{s.unique:,}", f"{100 * s.unique / s.rows:.1f} % of {s.rows:,} rows")
    table.add_row(f"top-{s.top_k:,} coverage", f"{100 * s.top_k_coverage:.1f} %",
                  "share of lookups hitting the K most frequent ids"
                  if s.top_k == s.top_k_requested else
                  f"all unique ids: --top-k {s.top_k_requested:,} exceeds them")
    if s.hot_coverage is not None:
        table.add_row("hot file coverage", f"{100 * s.hot_coverage:.1f} %",
                      f"{s.hot_name}, {s.hot_size:,} ids")
    table.add_row("reuses", f"{s.reuses:,}", "lookups that repeat an earlier id")
    table.add_row("reuse distance median", _fmt_distance(s.reuse_median), "")
    table.add_row("reuse distance p90", _fmt_distance(s.reuse_p90), "")
    table.caption = REUSE_DEFINITION
    return table


def _run_stats(args: argparse.Namespace) -> int:
    if (args.file is None) == (args.profile is None):
        raise UserError("give a trace FILE or --profile P (exactly one)")
    if args.file is None and args.drop_out_of_range:
        raise UserError("--drop-out-of-range applies to a trace FILE, not to --profile")
    if args.file is not None and args.lookups:
        raise UserError("--lookups applies to --profile; a FILE is read whole")
    if args.seed < 0:
        raise UserError(f"--seed must be >= 0, got {args.seed}")
    s = _stats_of_profile(args) if args.profile is not None else _stats_of_file(args)
    if args.json:
        print(json.dumps(s.to_dict(), indent=2))
    else:
        Console(width=max(100, Console().width)).print(_stats_table(s))
    return 0


# --- gen / hot -----------------------------------------------------------------------------

def _total_lookups(cfg: WorkloadConfig) -> int:
    return (cfg.warmup_batches + cfg.batches) * cfg.tables * cfg.lookups_per_batch


def _gen_memory(name: str, n: int, rows: int, hot: bool) -> int:
    """Peak bytes of `gen`: the ids, the seeded permutation of the rows (all but random), and
    for --hot-out the per-row counts with their argsort."""
    uniform = profiles.PARAMS[name].period is None
    return _INT64 * n + (0 if uniform else _INT64 * rows) + (3 * _INT64 * rows if hot else 0)


def _run_gen(args: argparse.Namespace) -> int:
    check_distinct({"--out": args.out, "--hot-out": args.hot_out})
    for flag, path in (("--out", args.out), ("--hot-out", args.hot_out)):
        if path is not None:
            check_output(path, flag, inputs=[args.config])
    cfg = config_from_flags(vars(args))
    name = profiles.canonical_profile(args.profile)
    n = args.lookups or profiles.period(name, cfg.rows) or _total_lookups(cfg)
    size = id_file_bytes(n, cfg.rows)
    check_memory(_gen_memory(name, n, cfg.rows, args.hot_out is not None),
                 f"generating {n:,} ids over {cfg.rows:,} rows", _SHRINK)
    check_disk(size, args.out, "use fewer --lookups or write elsewhere")
    print(f"writing {n:,} ids (up to {human_bytes(size)}) to {args.out} ...", flush=True)
    ids = profiles.generate(name, n, cfg.rows, cfg.seed)
    write_ids(args.out, ids)
    print(f"wrote {n:,} ids of {name} (seed {cfg.seed}, rows {cfg.rows:,}) to {args.out}")
    if args.hot_out:
        hot = top_k(id_counts(ids, cfg.rows), cfg.hot_rows, what=f"the generated {name} trace")
        write_ids(args.hot_out, hot)
        print(f"wrote the top {hot.size:,} ids to {args.hot_out}")
    return 0


def _run_hot(args: argparse.Namespace) -> int:
    check_output(args.out, "--out", inputs=[args.file])
    check_memory(3 * _INT64 * args.rows + 2 * _file_size(args.file),
                 f"ranking the ids of {args.file} over {args.rows:,} rows", "use fewer --rows")
    trace = read_trace(args.file, args.rows, args.drop_out_of_range)
    counts = id_counts(trace.ids, args.rows)
    unique = int(np.count_nonzero(counts))
    hot = top_k(counts, min(args.top_k, unique), what=str(args.file))
    write_ids(args.out, hot)
    share = float(counts[hot].sum()) / trace.ids.size
    note = (f"; that is every unique id, fewer than --top-k {args.top_k:,}"
            if args.top_k > unique else "")
    print(f"wrote the top {hot.size:,} ids of {args.file} to {args.out} "
          f"({100 * share:.1f} % of its lookups{note})")
    return 0
