"""A family's own rung names, put in for the standard ones on that family's part of the report.

Why: the fast family calls its OptMT slot `fast` and its pin rung `fast+pin`, but the report's
tables, headers, chart titles and notes were written with the standard names ("OptMT",
"L2P+OptMT"), so the fast family's cards said one thing in the text and another in the tables.
One pass over a per-series card's rendered HTML and its figures' text, driven by the family's
declared `rung_labels` (l2attr.ladder.declare), keeps every printer in the family's words.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from l2attr.ladder.declare import FAMILIES, RUNG_BY_NAME
from l2attr.vocab import Family

@lru_cache(maxsize=None)
def _rules(family: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    """(pattern of a standard rung name, the family's name), longest standard name first."""
    if family not in Family.values() or Family(family) not in FAMILIES:
        return ()
    pairs = [(RUNG_BY_NAME[rung].label, own) for rung, own in FAMILIES[Family(family)].rung_labels
             if rung in RUNG_BY_NAME and RUNG_BY_NAME[rung].label != own]
    pairs.sort(key=lambda p: -len(p[0]))
    # a mention of another family's rung keeps its standard name ("the tuned OptMT consumer")
    guard = "".join(f"(?<!{f.value} )" for f in Family)
    return tuple((re.compile(rf"(?<![\w+]){guard}{re.escape(std)}(?![\w+])"), own) for std, own in pairs)


def relabel(text: str, family: str) -> str:
    """`text` with the standard rung names the family renames in its own words."""
    for pattern, own in _rules(family):
        text = pattern.sub(own, text)
    return text


def relabel_figure(spec: Any, family: str) -> Any:
    """A figure spec ({data, layout}) with every string in it relabelled; numbers untouched."""
    if not _rules(family):
        return spec
    if isinstance(spec, str):
        return relabel(spec, family)
    if isinstance(spec, list):
        return [relabel_figure(v, family) for v in spec]
    if isinstance(spec, dict):
        return {k: relabel_figure(v, family) for k, v in spec.items()}
    return spec
