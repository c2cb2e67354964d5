"""The house style shared by the HTML and Markdown reports: number formatting (one style, and n/a
for missing), and one colour per rung and per profile everywhere (the charts' traces and the
tables' rung chips).

Why the colours are here, not in charts.py: a table, and the Markdown page, need them without
plotly.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from l2attr.analysis.common import is_missing
from l2attr.vocab import Profile, RungId

NA_TEXT = "n/a"


def _guard(fn: Callable[[float], str]) -> Callable[[Any], str]:
    def wrapped(value: Any) -> str:
        try:
            if is_missing(value):
                return NA_TEXT
            value = float(value)
        except (TypeError, ValueError):
            return NA_TEXT
        if math.isinf(value):
            return "never" if value > 0 else NA_TEXT
        return fn(value)
    wrapped.__name__ = fn.__name__
    return wrapped


@_guard
def us(v: float) -> str:
    return f"{v:,.1f} µs"


@_guard
def us_signed(v: float) -> str:
    return f"{v:+,.1f} µs"


@_guard
def times(v: float) -> str:
    return f"{v:.2f}×"


@_guard
def pct(v: float) -> str:
    return f"{v:.1f} %"


@_guard
def pct_signed(v: float) -> str:
    return f"{v:+.1f} %"


@_guard
def pp(v: float) -> str:
    return f"{v:+.1f} pp"


@_guard
def ratio(v: float) -> str:
    return f"{v:.2f}"


@_guard
def count(v: float) -> str:
    return f"{v:,.0f}"


@_guard
def gbps(v: float) -> str:
    return f"{v:,.0f} GB/s"


@_guard
def nbytes(v: float) -> str:
    """Decimal units (MB = 10^6 B), as Nsight Compute and HBM bandwidths are quoted."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:,.1f} {unit}"
    return f"{v:,.0f} B"


@_guard
def sectors(v: float) -> str:
    if abs(v) >= 1e6:
        return f"{v / 1e6:,.2f} M"
    if abs(v) >= 1e3:
        return f"{v / 1e3:,.1f} k"
    return f"{v:,.0f}"


@_guard
def ns_as_us(v: float) -> str:
    return f"{v / 1e3:,.1f} µs"


def ci(median: Any, lo: Any, hi: Any) -> str:
    """'45.0 µs [44.6, 45.5]', or the median alone when the CI is missing."""
    if is_missing(median):
        return NA_TEXT
    if is_missing(lo) or is_missing(hi):
        return us(median)
    return f"{median:,.1f} µs [{lo:,.1f}, {hi:,.1f}]"


# -- colours -------------------------------------------------------------------------------------

RUNG_COLORS: dict[str, str] = {
    RungId.BASELINE: "#6B7280",
    RungId.OPTMT: "#3B6FB6",
    RungId.RPF_OPTMT: "#3E9B5F",
    RungId.L2P_OPTMT: "#E07B1F",
    RungId.COMBINED: "#8E5BB5",
    RungId.TORCH: "#C4C9D1",
}
PROFILE_COLORS: dict[str, str] = {
    Profile.REUSE_HIGH: "#B4292F",
    Profile.REUSE_MEDIUM: "#E8853A",
    Profile.REUSE_LOW: "#5E9BD0",
    Profile.RANDOM: "#22508F",
}
FALLBACK_COLOR = "#9CA3AF"


def text_table(head: list[str], body: list[list[str]], right: list[bool]) -> str:
    """Rows as plain aligned columns for a terminal (the step index, an experiment's conditions)."""
    width = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    def line(r: list[str]) -> str:
        return "  ".join(v.rjust(w) if rt else v.ljust(w) for v, w, rt in zip(r, width, right)).rstrip()
    return "\n".join([line(head), *[line(r) for r in body]])
