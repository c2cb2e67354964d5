"""Titles both report formats print (kept apart from html.py so Markdown needs no plotly)."""

from __future__ import annotations

from typing import Any, Mapping

from l2attr.study.study import Analysis

# The config keys of an EmbeddingBag workload (dlrm/config.WorkloadConfig): a run whose config
# has them measured the DLRM EmbeddingBag tables; any other run is named by what it is, not by the study.
EMBEDDING_KEYS = ("tables", "rows", "dim", "dtype")


def series_title(an: Analysis) -> str:
    """The series a per-series view shows (empty for the whole analysis)."""
    if len(an.series) != 1:
        return ""
    head = an.series[0].is_headline_family
    return an.series[0].title + (" · the headline" if head else " · for comparison")


def workload_line(config: Mapping[str, Any], sep: str = " · ", hot: bool = True) -> str:
    """The page's subtitle, from the run's own config: 'DLRM EmbeddingBag · 12 tables × ...' for an
    EmbeddingBag workload, else 'workload: <name>' (never the study's name on a page of another run)."""
    def g(k: str) -> str:
        v = config.get(k, "?")
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)

    if not all(k in config for k in EMBEDDING_KEYS):
        return f"workload: {config.get('name') or config.get('preset') or 'not an EmbeddingBag ladder'}"
    parts = [f"DLRM EmbeddingBag{sep}{g('tables')} tables × {g('rows')} rows × {g('dim')} {g('dtype')}",
             f"batch {g('batch_size')}", f"pooling {g('pooling')}"]
    if hot:
        parts.append(f"{g('hot_rows')} hot rows pinned")
    return sep.join(parts)


def view_family(an: Any) -> str:
    """The family a one-series view shows ('' for the whole analysis): the words its card uses."""
    return an.series[0].family if len(an.series) == 1 else ""


def rung_names(family: str) -> dict[str, str]:
    """Every rung id -> how `family` names it: the templates' words for the rungs of a card."""
    from l2attr.analysis.common import rung_label
    from l2attr.dlrm.declare import RUNG_BY_NAME

    return {rung: rung_label(rung, family) for rung in RUNG_BY_NAME}
