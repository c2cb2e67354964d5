"""Check GPU, driver, torch/cupy, L2 sizes, ncu counter access, nsys, nvtx and ncu_report.

Prints one row per check with a fix hint for each failure. Exit status 0 only when both
`l2attr ladder` and `l2attr profile` can run here; optional checks (nsys) never fail it.
"""

from __future__ import annotations

import argparse

from l2attr.errors import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true",
                   help="skip the ncu counter probe (it profiles a tiny kernel: a few seconds)")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from l2attr.doctor import readiness, run_checks

    checks = run_checks(probe_counters=not args.quick)
    table = Table(title="l2attr doctor")
    for col in ("check", "ok", "detail", "needed by", "fix"):
        table.add_column(col, overflow="fold")
    for c in checks:
        mark = "[green]yes[/green]" if c.ok else ("[red]NO[/red]" if c.needed_by else "[yellow]no[/yellow]")
        table.add_row(escape(c.name), mark, escape(c.detail), ", ".join(c.needed_by) or "optional", escape(c.fix))
    console = Console()
    console.print(table)
    ready = readiness(checks)
    for cmd, ok in ready.items():
        console.print(f"{cmd}: {'can run' if ok else 'cannot run here'}", markup=False, highlight=False)
    if not all(ready.values()):
        missing = [cmd for cmd, ok in ready.items() if not ok]
        raise UserError(f"not ready for {' and '.join(missing)}; see the failed checks above")
    return 0
