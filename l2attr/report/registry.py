"""The report's sections, in page order: one declaration each, which the HTML page (its card and
its entry in the contents) and the Markdown page read.

A section with its own template (reports/sections/<key>.html.j2) lays out its fields there. A
`generic` one needs nothing more than its line here: its build returns a lead sentence, tables
(report/columns.py) and notes, and reports/sections/generic.html.j2 and report.markdown draw them,
so adding such a section touches this file alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from l2attr.analysis.study import Analysis
from l2attr.report import html_sections as sections
from l2attr.report import html_study as study_sections
from l2attr.report.html_layer_b import attribution
from l2attr.report.provenance import provenance


@dataclass(frozen=True)
class SectionSpec:
    key: str                                          # its anchor, and its template unless generic
    title: str                                        # the card's title, in the table of contents
    build: Callable[[Analysis], dict[str, Any] | None]
    per_series: bool = False                          # one card per series, the headline family first
    optional: bool = False                            # drawn only where build returns something
    generic: bool = False                             # fields {lead, tables, notes}, drawn by every format


SECTION_SPECS: tuple[SectionSpec, ...] = (
    SectionSpec("verdict", "Verdict", sections.verdict, per_series=True),
    # The families side by side (analysis.families): drawn when a ladder was measured.
    SectionSpec("families", "The three kernel families", study_sections.families, optional=True),
    SectionSpec("ladder", "Latency ladder", sections.ladder, per_series=True),
    # The "Compare runs" slot: drawn when the analysis carries a non-empty `compare` table.
    SectionSpec("compare", "Compare runs", study_sections.compare, optional=True),
    SectionSpec("speedup", "Pin-charged speedup", sections.speedup, per_series=True),
    SectionSpec("amortisation", "Amortisation", sections.amortisation, per_series=True),
    SectionSpec("share", "Share of step time", sections.share, per_series=True),
    SectionSpec("attribution", "L2 attribution", attribution, per_series=True),
    SectionSpec("roofline", "Roofline", sections.roofline, per_series=True),
    SectionSpec("timeline", "Timeline", study_sections.timeline),
    SectionSpec("caveats", "Caveats", study_sections.caveats),
    SectionSpec("provenance", "Provenance", lambda an: provenance(an.study, an.controls)),
)
# (key, title) of the sections every report has
SECTIONS = tuple((s.key, s.title) for s in SECTION_SPECS if not s.optional)


def generic_views(an: Analysis, views: list[tuple[str, Analysis]]) -> list[tuple[SectionSpec, str, dict[str, Any]]]:
    """(spec, the series it is about or '', its fields) of every generic section with something to
    show: what report.markdown draws (the HTML page draws them with the rest, in page order)."""
    from l2attr.report.titles import series_title

    out = []
    for spec in SECTION_SPECS:
        if not spec.generic:
            continue
        for _, view in views if spec.per_series else [("", an)]:
            fields = spec.build(view)
            if fields is not None and not fields.get("empty"):
                out.append((spec, series_title(view) if spec.per_series else "", fields))
    return out
