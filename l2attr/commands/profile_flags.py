"""Flags of `l2attr profile` that contradict each other are errors, not silently ignored.

Why: `--metrics dram --import r.ncu-rep` imported every metric of the report and said nothing;
`--timeline-totals` without `--timeline` profiled no timeline; `--condition banana` labelled a
whole import with a condition no analysis knows, so its rows vanished from every table.
"""

from __future__ import annotations

import argparse
from typing import Any

from l2attr.errors import UserError
from l2attr.vocab import Condition

IMPORT_ONLY = ("csv", "condition", "keep_all_metrics", "import_nvtx", "kernel_name", "allow_partial")
NOT_FLAGS = {"import_path", "_run", "command"}


def _flag(dest: str) -> str:
    return {"import_nvtx": "--nvtx-include", "ladder_args": "--ladder-arg", "control": "--no-control",
            "validate_metrics": "--no-validate-metrics"}.get(dest, "--" + dest.replace("_", "-"))


def check_nvtx_expression(expr: str) -> None:
    """An --nvtx-include expression ncu's way: not empty, and a `regex:` part that compiles (an
    invalid one would otherwise read "no kernel matches", as if the report held none)."""
    import re

    if not expr.strip():
        raise UserError("--nvtx-include '': give a range expression (e.g. 'regex:l2attr@consumer:.*/')")
    if expr.startswith("regex:"):
        pattern = expr[len("regex:"):]
        pattern = pattern[:-1] if pattern.endswith("/") else pattern
        try:
            re.compile(pattern)
        except re.error as exc:
            raise UserError(f"--nvtx-include {expr!r}: not a valid regular expression ({exc})") from None


def check_profile_flags(args: argparse.Namespace, defaults: dict[str, Any]) -> None:
    """Refuse a flag that does nothing in the mode asked for (import, profile, timeline)."""
    changed = sorted(k for k, v in vars(args).items() if k in defaults and k not in NOT_FLAGS and v != defaults[k])
    if args.import_path is not None:
        if args.condition not in Condition.values():
            raise UserError(f"--condition {args.condition!r}: use one of {', '.join(Condition.values())}")
        extra = [k for k in changed if k not in IMPORT_ONLY]
        if extra:
            raise UserError(f"{', '.join(map(_flag, extra))} {'does' if len(extra) == 1 else 'do'} not apply to "
                            "--import (it reads the report as it is); drop them")
        for expr in args.import_nvtx:
            check_nvtx_expression(expr)
        return
    extra = [k for k in changed if k in IMPORT_ONLY]
    if extra:
        raise UserError(f"{', '.join(map(_flag, extra))} only {'applies' if len(extra) == 1 else 'apply'} "
                        "to --import REPORT")
    if args.timeline_totals and not args.timeline:
        raise UserError("--timeline-totals only applies with --timeline")
    if args.pm_max_passes != defaults.get("pm_max_passes", args.pm_max_passes) and not args.timeline:
        raise UserError("--pm-max-passes only applies with --timeline")
    if args.pm_max_passes < 0:
        raise UserError(f"--pm-max-passes {args.pm_max_passes}: give 0 (ncu decides) or a number of passes >= 1")
