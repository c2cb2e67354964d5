"""The report's sections, in page order: one declaration each, which the HTML page (its card and
its entry in the contents) and the Markdown page read.

Each declaration names the analyses its section shows (`reads=`, names from the one registry in
l2attr/study/study.py); a name not registered fails the declaration, at import. Its build is
handed those names alone, as a read-only view of the Analysis (report/reads.py), so a read it did
not declare fails too.

A section with its own template (reports/sections/<key>.html.j2) lays out its fields there. A
`generic` one needs nothing more than its line here: its build returns a lead sentence, tables
(report/columns.py) and notes, and reports/sections/generic.html.j2 and report.markdown draw them,
so adding such a section touches this file alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from l2attr.study.study import Analysis
from l2attr.report import html_sections as sections
from l2attr.report import html_study as study_sections
from l2attr.report.html_layer_b import attribution
from l2attr.report.provenance import provenance
from l2attr.report.reads import SectionView, check_reads


@dataclass(frozen=True)
class SectionSpec:
    key: str                                          # its anchor, and its template unless generic
    title: str                                        # the card's title, in the table of contents
    build: Callable[[SectionView], dict[str, Any] | None]
    per_series: bool = False                          # one card per series, the headline family first
    optional: bool = False                            # drawn only where build returns something
    generic: bool = False                             # fields {lead, tables, notes}, drawn by every format
    reads: tuple[str, ...] = ()                       # the analyses it shows, by registered name

    def __post_init__(self) -> None:
        check_reads(self.key, self.reads)

    def fields(self, an: Analysis) -> dict[str, Any] | None:
        """Its build on the names it declared of `an` (a series view for a per-series section)."""
        return self.build(SectionView(an, self.key, self.reads))


SECTION_SPECS: tuple[SectionSpec, ...] = (
    SectionSpec("verdict", "Verdict", sections.verdict, per_series=True, reads=("verdict", "state", "series")),
    # The families side by side (study.families): drawn when a ladder was measured.
    SectionSpec("families", "The three kernel families", study_sections.families, optional=True,
                reads=("families", "verdict", "measured_roofline", "state")),
    SectionSpec("ladder", "Latency ladder", sections.ladder, per_series=True, reads=("ladder", "spread", "state")),
    # The "Compare runs" slot: drawn when the analysis carries a non-empty `compare` table.
    SectionSpec("compare", "Compare runs", study_sections.compare, optional=True,
                reads=("compare", "compare_summary", "compare_settings", "compare_identity", "compare_one_sided",
                       "gpu_spread")),
    SectionSpec("speedup", "Pin-charged speedup", sections.speedup, per_series=True, reads=("ladder",)),
    SectionSpec("amortisation", "Amortisation", sections.amortisation, per_series=True,
                reads=("amortisation", "state", "series")),
    SectionSpec("share", "Share of step time", sections.share, per_series=True, reads=("share", "state", "series")),
    SectionSpec("attribution", "L2 attribution", attribution, per_series=True,
                reads=("l2", "dram", "measured_roofline", "pin_effect", "rpf_vs_l2p", "gradient", "pin_traffic")),
    SectionSpec("roofline", "Roofline", sections.roofline, per_series=True,
                reads=("roofline", "hbm_copy_GBps", "state")),
    SectionSpec("timeline", "Timeline", study_sections.timeline, reads=("timeline", "phases")),
    SectionSpec("caveats", "Caveats", study_sections.caveats, reads=("caveats",)),
    SectionSpec("provenance", "Provenance", lambda v: provenance(v.runs, v.config, v.controls),
                reads=("runs", "config", "controls")),
)
# (key, title) of the sections every report has
SECTIONS = tuple((s.key, s.title) for s in SECTION_SPECS if not s.optional)

# The answer under the page's title: no card of its own, declared like one.
ANSWER = SectionSpec("answer", "", sections.answer, reads=("verdict", "series", "state", "caveats"))


def generic_views(an: Analysis, views: list[tuple[str, Analysis]]) -> list[tuple[SectionSpec, str, dict[str, Any]]]:
    """(spec, the series it is about or '', its fields) of every generic section with something to
    show: what report.markdown draws (the HTML page draws them with the rest, in page order)."""
    from l2attr.report.titles import series_title

    out = []
    for spec in SECTION_SPECS:
        if not spec.generic:
            continue
        for _, view in views if spec.per_series else [("", an)]:
            fields = spec.fields(view)
            if fields is not None and not fields.get("empty"):
                out.append((spec, series_title(view) if spec.per_series else "", fields))
    return out
