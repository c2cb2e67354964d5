"""Every ladder input checked before the GPU is looked for: files, names, numbers, conflicts; and
the ladder's options made from its flags (`options_from_args`), the last of those checks.

Why: `l2attr ladder --trace BAD` used to stop at "torch is not installed" on a CPU machine and
only find the bad trace on the GPU machine, after the workload build; a run's flags should be
checkable anywhere. An empty list flag (`--profiles ''`) meant "the default" silently; it is an
error now, as is `--resume` with settings the run did not use (it continues the run's own).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from l2attr.dlrm.config import WorkloadConfig
from l2attr.dlrm.declare import ALL_FAMILIES, FAMILIES, parse_families, parse_profiles, parse_rungs
from l2attr.dlrm.measure.kernels import LaunchShape
from l2attr.dlrm.workload.cache import default_cache_dir
from l2attr.errors import UserError
from l2attr.measure.adaptive import LADDER_DEFAULT as ADAPTIVE
from l2attr.vocab import LADDER_STATES, ConsumerCode, Family, condition_words

if TYPE_CHECKING:
    from l2attr.dlrm.measure.run import LadderOptions

LIST_FLAGS = ("family", "rungs", "profiles")
# flags --resume may be given with (they do not change what is measured)
RESUME_FREE = {"resume", "quiet", "cache_dir", "_run", "command", "workers", "scheduler"}


def check_list_flags(args: argparse.Namespace) -> None:
    for name in LIST_FLAGS:
        value = getattr(args, name, None)
        if value is not None and not [w for w in str(value).split(",") if w.strip()]:
            raise UserError(f"--{name} {value!r}: give at least one name (or leave the flag out for the default)")


def check_numbers(args: argparse.Namespace) -> None:
    spin = args.spin_us
    if not math.isfinite(spin) or spin < 0:
        raise UserError(f"--spin-us must be a finite number >= 0, got {spin:g}")


def check_output(args: argparse.Namespace) -> None:
    """--out is a folder of runs (made if absent); --name a plain word (RunDir.create's rule)."""
    from l2attr.outputs import check_out_folder

    check_out_folder(Path(args.out))
    if not re.fullmatch(r"[A-Za-z0-9._-]+", args.name or ""):
        raise UserError(f"--name {args.name!r}: use letters, digits, '.', '_' and '-' only")


def check_input_files(args: argparse.Namespace, cfg: WorkloadConfig) -> None:
    """The trace and hot files parse, and their ids fit the table (what the GPU run would read)."""
    from l2attr.dlrm.workload.hotset import read_hot_file
    from l2attr.dlrm.workload.traces import read_trace

    if args.trace is not None:
        read_trace(Path(args.trace), cfg.rows, args.drop_out_of_range)
    if args.hot is not None:
        read_hot_file(Path(args.hot), cfg.rows)


def check_ladder_inputs(args: argparse.Namespace, cfg: WorkloadConfig) -> None:
    """All of the above, in the order a user would fix them."""
    check_list_flags(args)
    check_numbers(args)
    check_output(args)
    if args.trace is not None and args.profiles:
        raise UserError("give either --trace or --profiles, not both")
    check_input_files(args, cfg)


def check_resume_flags(args: argparse.Namespace, defaults: dict[str, Any]) -> None:
    """`--resume RUN_DIR` continues the run with the settings in its manifest: a flag that would
    change them is refused instead of being ignored."""
    given = [k for k, v in vars(args).items() if k not in RESUME_FREE and k in defaults and v != defaults[k]]
    if given:
        flags = ", ".join("--" + k.replace("_", "-") for k in sorted(given))
        raise UserError(f"--resume continues {args.resume} with its own settings; drop {flags} "
                        "(or start a new run)")


def parser_defaults(add_arguments: Any) -> dict[str, Any]:
    """The ladder parser's defaults (what a flag left out is)."""
    p = argparse.ArgumentParser(add_help=False)
    add_arguments(p)
    return vars(p.parse_args([]))


# -- the options ---------------------------------------------------------------------------------

def _l2_states(text: str) -> str:
    states = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in states if t not in condition_words(LADDER_STATES)]
    if bad or not states:
        raise UserError(f"--l2 {text!r}: use one or more of {', '.join(condition_words(LADDER_STATES))}, comma-separated")
    return ",".join(dict.fromkeys(states))


def _positive(name: str, value: int) -> None:
    if value <= 0:
        raise UserError(f"--{name} must be positive, got {value}")


def adaptive_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """LadderOptions' repeat fields: `--repeats N` is a fixed run (the reproduction's, the
    profiler child's), else adaptive repeats within the limits given."""
    if args.repeats is not None:
        _positive("repeats", args.repeats)
        return {"target_rel": None}
    if not 0 < args.target_rel < 1:
        raise UserError(f"--target-rel must be between 0 and 1 (a share of the median), got {args.target_rel}")
    _positive("min-repeats", args.min_repeats)
    if args.max_repeats < args.min_repeats:
        raise UserError(f"--max-repeats {args.max_repeats} is below --min-repeats {args.min_repeats}")
    if not args.max_seconds > 0 or args.max_seconds == float("inf"):
        raise UserError(f"--max-seconds must be a positive number of seconds, got {args.max_seconds}")
    return {"target_rel": args.target_rel, "min_repeats": args.min_repeats, "max_repeats": args.max_repeats,
            "max_seconds": args.max_seconds}


def options_from_args(args: argparse.Namespace) -> LadderOptions:
    """The ladder's options from its flags, every number and conflict checked (a run's own
    options come from its manifest instead: `--resume`)."""
    from l2attr.dlrm.measure.run import LadderOptions

    for name in ("maxrregcount", "rpf_depth", "grid", "fast_warps_per_bag", "fast_bags_per_block"):
        _positive(name.replace("_", "-"), getattr(args, name))
    adaptive = adaptive_from_args(args)
    if args.fast_maxrregcount < 0 or 0 < args.fast_maxrregcount < 16:
        raise UserError(f"--fast-maxrregcount must be 0 (no cap) or >= 16, got {args.fast_maxrregcount}")
    if 32 * args.fast_warps_per_bag * args.fast_bags_per_block > 1024:
        raise UserError(f"--fast-warps-per-bag {args.fast_warps_per_bag} x --fast-bags-per-block "
                        f"{args.fast_bags_per_block} x 32 lanes is over 1024 threads per block")
    if args.nvtx_last < 0:
        raise UserError(f"--nvtx-last must be >= 0, got {args.nvtx_last}")
    try:
        bx, by = (int(v) for v in args.block.split(","))
    except ValueError:
        raise UserError(f"--block must be two integers x,y, got {args.block!r}") from None
    if bx <= 0 or by <= 0 or bx * by > 1024:
        raise UserError(f"--block {args.block}: need positive x, y with x*y <= 1024")
    rungs = parse_rungs(args.rungs)
    families = parse_families(args.family)
    families = _families_with_rungs(families, rungs, args)
    if args.pin_granularity and not any(args.pin_granularity in [p.value for p in FAMILIES[f].pins]
                                        for f in families):
        raise UserError(f"--pin-granularity {args.pin_granularity}: the "
                        f"{'/'.join(f.value for f in families)} family pins per element only")
    from l2attr.dlrm.measure.run import parse_extra_cell

    extra_profiles = {parse_extra_cell(text, args.pin_granularity)[1] for text in args.extra_cells}
    if args.trace is not None:
        if args.profiles:
            raise UserError("give either --trace or --profiles, not both")
        profiles = [args.trace.stem]
        if extra_profiles - set(profiles):
            raise UserError(f"--extra-cell: with --trace the only workload is {profiles[0]!r}, not "
                            f"{', '.join(sorted(extra_profiles - set(profiles)))}")
    else:
        profiles = parse_profiles(args.profiles)
        if extra_profiles:
            parse_profiles(",".join(sorted(extra_profiles)))     # an unknown profile: one line
    return LadderOptions(
        rungs=rungs, profiles=profiles, families=families, trace=args.trace, hot=args.hot,
        drop_out_of_range=args.drop_out_of_range, l2_state=_l2_states(args.l2_state),
        repeats=args.repeats if args.repeats is not None else ADAPTIVE.min_repeats, **adaptive,
        maxrregcount=args.maxrregcount, pin_granularity=args.pin_granularity,
        rpf_depth=args.rpf_depth, shape=LaunchShape(grid=args.grid, block=(bx, by), fast_warps_per_bag=args.fast_warps_per_bag,
                          fast_bags_per_block=args.fast_bags_per_block, fast_unroll=args.fast_unroll,
                          fast_load=args.fast_load, fast_maxrregcount=args.fast_maxrregcount),
        nvtx_last=args.nvtx_last, nvtx_calls=args.nvtx_calls, bandwidth=not args.no_bandwidth,
        spin_us=args.spin_us, timer=args.timer, host_repeat=not args.no_host_repeat,
        cache_dir=args.cache_dir or default_cache_dir(), extra_cells=list(args.extra_cells),
        checks_memo=args.checks_memo)


def _families_with_rungs(families: list[Family], rungs: list, args: argparse.Namespace) -> list[Family]:
    """The families that implement at least one asked-for rung. A family named in --family that
    implements none is an error; under `all` it is left out with a line saying so (the fast
    family has no baseline, RPF or combined rung)."""
    if not any(r.consumer != ConsumerCode.TORCH for r in rungs):
        return families          # the torch reference alone: no family kernels to choose
    named = bool(args.family) and args.family.strip() != ALL_FAMILIES
    kept = []
    for fam in families:
        decl = FAMILIES[fam]
        if any(decl.implements(r) for r in rungs if r.consumer != ConsumerCode.TORCH):
            kept.append(fam)
        elif named:
            raise UserError(f"--rungs {args.rungs}: the {fam.value} family implements none of them "
                            f"(it has {', '.join(decl.rungs or ())}); drop it from --family or add one")
        else:
            print(f"l2attr ladder: the {fam.value} family implements none of --rungs {args.rungs}; "
                  "it is left out", file=sys.stderr)
    if not kept:
        raise UserError(f"--rungs {args.rungs}: no family implements them")
    return kept
