"""Turn run dirs into one offline HTML report (or a Markdown summary).

Combine a ladder run (layer A: latencies) and a profile run (layer B: Nsight Compute metrics) of
the same workload config; runs of different configs are refused. The HTML embeds plotly.js once
and opens without a network. Sections without data say "not measured" instead of drawing empty
charts.

The format follows the -o extension (.md/.markdown: Markdown, .html/.htm: HTML; any other only with
--format); a --format that contradicts the extension is refused. -o never writes over a
file of the run dirs it reads, and only into an existing folder.

examples:
  l2attr report runs/20261129T200000Z-ladder runs/20261129T210000Z-profile -o report.html
  l2attr report runs/20261129T200000Z-ladder --format md > summary.md
  l2attr report runs/20261129T200000Z-ladder -o summary.md
  l2attr report runs/20261129T200000Z-ladder --format text      # the headline and tables, on the terminal
  l2attr report examples/steps -o steps.html       # step runs below a folder: one index table, a section each
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from l2attr import atomic
from l2attr.study import analyse, load_runs
from l2attr.commands.report_pages import expand_run_dirs
from l2attr.errors import UserError
from l2attr.integrity.runs import combine
from l2attr.outputs import check_output, run_files

# -o extension -> format it implies
EXTENSION_FORMATS = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR",
                   help="run directories (ladder, profile, timeline runs of one config; step or experiment "
                        "runs), or folders holding run directories at any depth (e.g. examples/steps/)")
    p.add_argument("-o", "--output", type=Path, metavar="FILE",
                   help="output file (default: html -> ./report.html in the current folder, never inside a run dir; "
                        "md -> stdout)")
    p.add_argument("--format", choices=("html", "md", "text"),
                   help="html, md, or text (for the terminal: the headline and the verdict tables; step runs: "
                        "their index and headlines; default: from the -o extension, else html)")
    p.add_argument("--allow-mixed", action="store_true",
                   help="combine runs whose workload configs differ (listed as a caveat)")
    p.add_argument("--allow-partial", action="store_true",
                   help="analyse what a damaged or interrupted run still holds; every problem is listed "
                        "on stderr and at the top of the report")
    p.add_argument("--l2-state", metavar="STATE",
                   help="L2 state for the verdict and charts (default: natural when measured)")


def output_format(fmt: str | None, output: Path | None) -> str:
    """--format if given, else what the -o extension implies, else html; a contradiction is refused."""
    implied = EXTENSION_FORMATS.get(output.suffix.lower()) if output is not None else None
    if fmt is not None and implied is not None and fmt != implied:
        raise UserError(f"--format {fmt} contradicts -o {output} ({output.suffix} means {implied}); "
                        "drop --format or change the extension")
    return fmt or implied or "html"


def check_extension(output: Path, fmt: str | None) -> None:
    """An -o extension that is no report format is refused unless --format says which to write
    (`-o x.pdf` alone would be HTML in a file that says PDF); a name without one (a device such as
    /dev/null, a FIFO) takes --format or HTML."""
    if fmt is None and output.suffix and output.suffix.lower() not in EXTENSION_FORMATS:
        raise UserError(f"-o {output}: l2attr report writes HTML or Markdown, not {output.suffix}; "
                        "give a .html or .md file name (or say --format html|md)")


def run_inputs(run_dirs: list[Path]) -> list[Path]:
    """Every file of the run dirs (tables plain or compressed, sidecars, raw reports, traces):
    never a place to write the report, nor through a hard link to one (outputs.check_output)."""
    return run_files(run_dirs)


def run(args: argparse.Namespace) -> int:
    progress = Progress()
    try:
        return _run(args, progress)
    finally:
        progress.done()      # the line goes before anything else is printed, an error included


def _run(args: argparse.Namespace, progress: Progress) -> int:
    fmt = output_format(args.format, args.output)
    output = args.output
    run_dirs = expand_run_dirs(args.run_dirs)
    if output is not None:
        check_output(output, "-o", inputs=run_inputs(run_dirs))
        check_extension(output, args.format)
    from l2attr.commands.report_pages import page_kind, report_page

    kind = page_kind(run_dirs)
    if kind is not None:
        return report_page(kind, run_dirs, fmt, output, _emit, _write, args.allow_partial)
    sweep_dirs, run_dirs = split_sweeps(run_dirs)
    progress.step(f"reading {len(run_dirs)} run dirs and {len(sweep_dirs)} sweeps")
    sweeps = load_sweeps(sweep_dirs, args.allow_partial)
    if not run_dirs:
        mixed, _ = combine([(an.run.name, an.run.manifest) for an in sweeps], args.allow_mixed)
        return _sweeps_only(sweeps, fmt, output, sweep_dirs[0], mixed)
    study = load_runs(run_dirs, allow_mixed=args.allow_mixed, allow_partial=args.allow_partial)
    for message in study.damage:
        print(f"l2attr report: warning: partial data: {message}", file=sys.stderr)
    # sweeps obey the rule ladder and profile runs do: one workload and GPU, or a comparison
    mixed, differing = combine([(study.runs[0].name, study.runs[0].manifest)]
                               + [(an.run.name, an.run.manifest) for an in sweeps], args.allow_mixed)
    study.mixed.extend(mixed)
    if output is None and fmt == "html":
        output = default_output(run_dirs)
    progress.step("analysing")
    analysis = analyse(study, l2_state=args.l2_state, sweeps=[an for an in sweeps if an.run.name not in differing])
    progress.step(f"rendering {fmt}")
    if fmt == "text":
        from l2attr.report.table_text import render_console
        return _emit(output, render_console(analysis))
    if fmt == "md":
        from l2attr.report.markdown import render_markdown
        from l2attr.sweep.section.text import markdown_chapter
        text = render_markdown(analysis) + "".join("\n" + markdown_chapter(an) for an in sweeps)
        code = _emit(output, text)
        if output is not None:          # on stdout the page itself carries it
            _say_headline(analysis)
        return code
    from l2attr.report.html import render_html
    from l2attr.sweep.section.html import sections as sweep_sections
    html = render_html(analysis, extra=sweep_sections(sweeps) if sweeps else None)
    progress.step(f"writing {output}")
    _write(output, html)
    print(f"wrote {output} ({len(html.encode()) / 1e6:.1f} MB)")
    _say_headline(analysis)
    return 0


def _say_headline(analysis: Any) -> None:
    """The study's answer on the console: the string the page's banner shows (analysis.answer.headline)."""
    from l2attr.ladders.analyse.answer import headline, pin_answer

    line = headline(pin_answer(analysis.verdict), analysis.verdict)
    if line:
        print(line)


def default_output(run_dirs: list[Path]) -> Path:
    """report.html in the current folder (its full path is printed): a run dir holds what its
    run measured, and a report written there would be taken for part of it (or replace one)."""
    output = Path.cwd() / "report.html"
    for d in run_dirs:
        if Path(d).resolve() in (output.parent, *output.parent.parents):
            raise UserError(f"the current folder is inside run dir {d}; give -o FILE outside it")
    return check_output(output, "the default output", inputs=run_inputs(run_dirs))


def _emit(output: Path | None, text: str) -> int:
    """Markdown to stdout, or written whole to `output` (atomically) with one line saying so."""
    if output is None:
        sys.stdout.write(text)
    else:
        _write(output, text)
        print(f"wrote {output}")
    return 0


def _write(path: Path, text: str) -> None:
    try:
        atomic.write_text(path, text)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror}") from None


def split_sweeps(run_dirs: list[Path]) -> tuple[list[Path], list[Path]]:
    """(sweep run dirs, the others): sweeps have their own tables and chapters."""
    from l2attr.sweep.load import is_sweep_dir

    sweeps = [d for d in run_dirs if is_sweep_dir(d)]
    return sweeps, [d for d in run_dirs if d not in sweeps]


def load_sweeps(paths: list[Path], allow_partial: bool) -> list:
    """Each sweep run dir analysed (l2attr/sweep/analyse/judge.py), oldest first; damage on stderr."""
    from l2attr.sweep.analyse.judge import analyse_sweep
    from l2attr.sweep.load import load_sweep
    from l2attr.errors import Damage

    out = []
    for p in paths:
        run = load_sweep(p, Damage(allow_partial))
        for message in run.damage:
            print(f"l2attr report: warning: partial data: {message}", file=sys.stderr)
        if run.points.empty:
            if not allow_partial:
                raise UserError(f"{p}: the sweep has no finished points")
            continue
        out.append(analyse_sweep(run))
    if paths and not out:
        raise UserError("no sweep run dir has data left to analyse")
    return out


def _sweeps_only(sweeps: list, fmt: str, output: Path | None, first: Path, mixed: list[str] | None = None) -> int:
    """A report of sweep runs alone: their chapters, nothing of the ladder; `mixed` (runs of
    another workload or GPU, --allow-mixed) and partial data are said at the top."""
    top = list(mixed or []) + [f"Partial data (--allow-partial): {m}" for an in sweeps for m in an.run.damage]
    if fmt == "md":
        from l2attr.sweep.section.text import markdown_chapter
        text = ("# When does L2 residency pay? (l2attr sweeps)\n\n" + "".join(f"> **Warning:** {t}\n\n" for t in top)
                + "\n".join(markdown_chapter(an) for an in sweeps))
        return _emit(output, text)
    from l2attr.sweep.section.html import render_page
    if output is None:
        output = default_output([first])
    html = render_page(sweeps, notes=top)
    _write(output, html)
    print(f"wrote {output} ({len(html.encode()) / 1e6:.1f} MB)")
    return 0


# -- the progress line ---------------------------------------------------------------------------
# A progress line on stderr while a report is made (reading, analysing, drawing take ~20 s). Why:
# `l2attr report examples/` sat silent for about 20 seconds. On a terminal one line is rewritten in
# place and cleared at the end, so what stays on screen is the command's own output; elsewhere
# (pipes, CI logs, tests) nothing is written unless L2ATTR_PROGRESS=1 asks for it, and then each
# step is a plain line. Errors therefore stay the one line they are.

ENV = "L2ATTR_PROGRESS"


class Progress:
    """`step(text)` says what the command is doing now; `done()` clears the line."""

    def __init__(self, prog: str = "l2attr report", stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.prog = prog
        forced = os.environ.get(ENV, "")
        self.tty = forced != "1" and _isatty(self.stream)
        self.on = forced == "1" or (forced != "0" and self.tty)
        self.start = time.monotonic()
        self.shown = False

    def step(self, text: str) -> None:
        if not self.on:
            return
        line = f"{self.prog}: {text} ({time.monotonic() - self.start:.0f} s)"
        self.stream.write(f"\r\033[K{line}" if self.tty else line + "\n")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.on and self.tty and self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
        self.shown = False


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
