"""A declared table (report/columns.py) as Markdown and as console text, and the study on the
terminal (`l2attr report RUN... --format text`) drawn with it.

The HTML page draws the same Table through reports/macros.html.j2; here the cells are the same
words (`cell_text`), only the frame differs: a Markdown pipe table for pages pasted into issues,
a rich table for the terminal. Spanning headers become a prefix of the header ("group: header"),
a spanning key cell is drawn once with blanks below it, and a left-out column is named in one
line under the table, as on the page.

The terminal's study is the one headline, then each series' verdict and the kernel families side
by side, from the declarations the HTML cards and the Markdown page draw (one table, three
printers): it lives beside its printer because it is nothing but that printer applied.
"""

from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.table import Table as RichTable

from l2attr.ladders.analyse.answer import headline, pin_answer
from l2attr.study.study import Analysis, series_view
from l2attr.report import families as fam
from l2attr.report.columns import Cell, Table, grid
from l2attr.report.html_sections import verdict_table
from l2attr.report.html_study import family_table
from l2attr.report.titles import series_title, view_family

NA_TEXT, DASH_TEXT = "n/a", "—"


def cell_text(c: Cell) -> str:
    """What a cell says, in every format: its text and bold words, n/a, or a dash."""
    if c.dash:
        return DASH_TEXT
    if c.missing is not None:
        return NA_TEXT
    return f"{c.text} {c.strong}" if c.strong else c.text


def headers(t: Table) -> list[str]:
    """One header per column, its group in front where it sits under one."""
    labels = [label for label, _ in t.headers]
    if not t.groups:
        return labels
    groups = [g for g, span in t.groups for _ in range(span)]
    return [f"{g}: {h}" if g and h else g or h for g, h in zip(groups, labels)]


def rows(t: Table) -> list[list[str]]:
    return [[cell_text(c) for c in row] for row in grid(t)]


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(t: Table) -> str:
    """A Markdown pipe table; number columns right-aligned. A page has no tooltips, so a missing
    cell carries a number, "— (1)", and the reasons follow the table once each; then the left-out line."""
    right = ["num" in cls.split() for _, cls in t.headers]
    notes: list[str] = []
    body = []
    for row in grid(t):
        out = []
        for c in row:
            said = cell_text(c)
            if c.missing is not None and c.missing:
                if c.missing not in notes:
                    notes.append(c.missing)
                said += f" ({notes.index(c.missing) + 1})"
            out.append(said)
        body.append(out)
    lines = ["| " + " | ".join(_escape(h) for h in headers(t)) + " |",
             "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in body]
    tail = [f"({i}) {n}" for i, n in enumerate(notes, 1)] + ([t.left_out_line] if t.left_out else [])
    return "\n".join(lines + (["", "_" + "; ".join(tail) + "._"] if tail else []))


def group_line(t: Table) -> str:
    """'columns 2-4: L2P+OptMT vs baseline, pin charged; ...': the spanning headers, for a printer
    with one header row."""
    out, at = [], 1
    for label, span in t.groups:
        if label:
            out.append(f"columns {at}–{at + span - 1}: {label}" if span > 1 else f"column {at}: {label}")
        at += span
    return "; ".join(out)


def console(t: Table) -> str:
    """The table as the terminal shows it (rich, no colour codes): one header row, the spanning
    headers in a line above it, the left-out line below it. Every column is whole, however wide
    (a terminal wraps the lines; a cut or dropped column would say less than the page)."""
    rt = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    body = rows(t)
    for label, cls in t.headers:
        num = "num" in cls.split()
        rt.add_column(label, justify="right" if num else "left", no_wrap=True)
    for row in body:
        rt.add_row(*row)
    out = io.StringIO()
    Console(file=out, width=100_000, color_system=None, highlight=False, markup=False).print(rt)
    lines = [ln.rstrip() for ln in out.getvalue().splitlines()]
    rule = next((i for i, ln in enumerate(lines) if ln and set(ln) == {"─"}), None)
    if rule is not None:                                   # the rule as long as the widest line
        lines[rule] = "─" * max(len(ln) for ln in lines)
    groups = group_line(t)
    text = "\n".join(([groups] if groups else []) + lines)
    return text + (f"\n{t.left_out_line}." if t.left_out else "")


# -- the study on the terminal -------------------------------------------------------------------

def render_console(an: Analysis) -> str:
    """Plain text, no colour codes: the headline, then the tables, every column whole."""
    line = headline(pin_answer(an.verdict), an.verdict)
    parts = [line, ""] if line else []
    for view in [series_view(an, s) for s in an.series] or [an]:
        if view.verdict.empty:
            continue
        title = series_title(view)
        parts += [f"Verdict{f' — {title}' if title else ''} (L2 state {an.state})", "",
                  console(verdict_table(view.verdict, view_family(view))), ""]
    if fam.shown(an):
        for profile in fam.profiles(an):
            parts += [f"{fam.TITLE} — {profile}", "", console(family_table(an, profile)), ""]
    if not parts:
        parts = ["Neither a latency ladder nor an L2 attribution was found in the inputs.", ""]
    return "\n".join(parts)
