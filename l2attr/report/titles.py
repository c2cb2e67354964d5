"""Titles both report formats print (kept apart from html.py so Markdown needs no plotly)."""

from __future__ import annotations

from l2attr.analysis.study import Analysis


def series_title(an: Analysis) -> str:
    """The series a per-series view shows (empty for the whole analysis)."""
    if len(an.series) != 1:
        return ""
    head = an.series[0].is_headline_family
    return an.series[0].title + (" · the headline" if head else " · for comparison")
