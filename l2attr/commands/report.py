"""Turn run dirs into one offline HTML report (or a Markdown summary).

Combine a ladder run (layer A: latencies) and a profile run (layer B: Nsight Compute metrics) of
the same workload config; runs of different configs are refused. The HTML embeds plotly.js once
and opens without a network. Sections without data say "not measured" instead of drawing empty
charts.

examples:
  l2attr report runs/20261129T200000Z-ladder runs/20261129T210000Z-profile -o report.html
  l2attr report runs/20261129T200000Z-ladder --format md > summary.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from l2attr import atomic
from l2attr.analysis import analyse, load_runs
from l2attr.errors import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR",
                   help="run directories (a ladder run and/or a profile run of one config)")
    p.add_argument("-o", "--output", type=Path, metavar="FILE",
                   help="output file (default: html -> RUN_DIR/report.html of the first run; md -> stdout)")
    p.add_argument("--format", choices=("html", "md"), default="html", help="html (default) or md")
    p.add_argument("--allow-mixed", action="store_true",
                   help="combine runs whose workload configs differ (listed as a caveat)")
    p.add_argument("--l2-state", metavar="STATE",
                   help="L2 state for the verdict and charts (default: natural when measured)")


def run(args: argparse.Namespace) -> int:
    study = load_runs(args.run_dirs, allow_mixed=args.allow_mixed)
    analysis = analyse(study, l2_state=args.l2_state)
    if args.format == "md":
        from l2attr.report.markdown import render_markdown
        text = render_markdown(analysis)
        if args.output is None:
            sys.stdout.write(text)
        else:
            _write(args.output, text)
            print(f"wrote {args.output}")
        return 0
    from l2attr.report.html import render_html
    output = args.output or (Path(args.run_dirs[0]) / "report.html")
    html = render_html(analysis)
    _write(output, html)
    print(f"wrote {output} ({len(html.encode()) / 1e6:.1f} MB)")
    return 0


def _write(path: Path, text: str) -> None:
    if path.is_dir():
        raise UserError(f"output {path} is a directory; give a file name")
    try:
        atomic.write_text(path, text)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror}") from None
