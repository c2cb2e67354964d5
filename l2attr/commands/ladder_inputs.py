"""Every ladder input checked before the GPU is looked for: files, names, numbers, conflicts.

Why: `l2attr ladder --trace BAD` used to stop at "torch is not installed" on a CPU machine and
only find the bad trace on the GPU machine, after the workload build; a run's flags should be
checkable anywhere. An empty list flag (`--profiles ''`) meant "the default" silently; it is an
error now, as is `--resume` with settings the run did not use (it continues the run's own).
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path
from typing import Any

from l2attr.dlrm.config import WorkloadConfig
from l2attr.errors import UserError

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
