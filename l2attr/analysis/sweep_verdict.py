"""What a sweep judgement returns, and the helpers every kind shares (analysis/sweep.py's JUDGES
lists the kinds)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import pandas as pd

from l2attr.analysis.significance import Judged, compare
from l2attr.analysis.sweep_table import SweepTable
from l2attr.dlrm.sweep.axes.declare import AxisSpec
from l2attr.vocab import Judgement

Mark = tuple[str, str, Any, float, float]        # family, profile, split value (or None), x, y


@dataclass
class Verdict:
    reading: str                                  # one line
    table: pd.DataFrame                           # the axis table, the judgement's columns filled
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)   # per series (break-even: one row each)
    marks: list[Mark] = field(default_factory=list)                # where the chart marks the judged x
    note: str = ""                                # what the summary's words mean


Judge = Callable[[SweepTable, pd.DataFrame, AxisSpec], Verdict]


def word(j: Judged | Judgement) -> str:
    """The rule's word as the readings print it."""
    j = j.judgement if isinstance(j, Judged) else j
    return "not measured" if j == Judgement.NOT_MEASURED else j.value


def times(speedup: float) -> str:
    """A speedup as readings print it: two decimals, three where two would read as exactly 1."""
    return f"{speedup:.3f}×" if round(speedup, 2) == 1.0 and speedup != 1.0 else f"{speedup:.2f}×"


def judged(t: SweepTable, column: str, i: int) -> Judged:
    base, new = t.intervals[column][i]
    return compare(base, new)


def label(spec: AxisSpec, row: dict[str, Any]) -> str:
    """How the reading names a row (the axis' `at` format); the x value when a field is missing."""
    try:
        return spec.judgement.at.format(**row)
    except (KeyError, ValueError, TypeError):
        return f"x = {row.get('x', float('nan')):g}"


def series(frame: pd.DataFrame, by: tuple[str, ...]) -> list[tuple[tuple[Any, ...], pd.DataFrame]]:
    """Rows per (family, profile, *by), in the table's order."""
    if frame.empty:
        return []
    return [(k if isinstance(k, tuple) else (k,), g)
            for k, g in frame.groupby(["family", "profile", *by], sort=False)]
