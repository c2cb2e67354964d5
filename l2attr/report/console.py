"""The study on the terminal (`l2attr report RUN... --format text`): the one headline, then each
series' verdict and the kernel families side by side, drawn by report/table_text.console from the
declarations the HTML cards and the Markdown page draw (one table, three printers)."""

from __future__ import annotations

from l2attr.analysis.answer import headline, pin_answer
from l2attr.analysis.study import Analysis, series_view
from l2attr.report import families as fam
from l2attr.report.html_sections import verdict_table
from l2attr.report.html_study import family_table
from l2attr.report.table_text import console
from l2attr.report.titles import series_title, view_family


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
