"""Tables of the HTML report as plain data; the templates (reports/macros.html.j2) draw them.

A Cell holds text (the template escapes it), a CSS class, a tooltip and, where the value is
missing, the reason: the page shows n/a with the reason as its tooltip, or a dash where the field
does not apply (the baseline's delta). A Row carries the CSV rows it comes from (its `source`,
shown as the row's tooltip). A Column says how an analysis record becomes a cell, so most of the
report's tables are a tuple of columns over an analysis frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Sequence

import pandas as pd

from l2attr.analysis.common import is_missing, not_applicable, rung_label, why
from l2attr.report.charts import FALLBACK_COLOR, RUNG_COLORS

Record = dict[str, Any]


@dataclass(frozen=True)
class Cell:
    text: str = ""
    cls: str = ""
    title: str = ""
    rowspan: int = 1
    missing: str | None = None      # why there is no value
    swatch: str = ""                # a colour chip before the text (rungs)
    strong: str = ""                # bold words after the text
    as_dash: bool = False           # draw a missing value as a dash whatever the reason

    @property
    def dash(self) -> bool:
        """Missing because the field does not apply (a dash), rather than not measured (n/a)."""
        return self.missing is not None and (self.as_dash or not_applicable(self.missing))

    def but(self, **changes: Any) -> Cell:
        return replace(self, **changes)


@dataclass(frozen=True)
class Row:
    cells: list[Cell]
    source: str = ""


@dataclass(frozen=True)
class Table:
    headers: list[tuple[str, str]]                  # (label, CSS class)
    rows: list[Row]
    groups: Sequence[tuple[str, int]] = ()          # (label, columns spanned) above the headers
    cls: str = "data"


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[Record], Cell]
    cls: str = ""                                   # "num": a right-aligned number column


# -- cells --------------------------------------------------------------------------------------

def missing(reason: str, cls: str = "") -> Cell:
    return Cell(cls=cls, missing=reason or "not measured")


def dash(reason: str, cls: str = "") -> Cell:
    """A missing value drawn as '—', its reason the tooltip."""
    return Cell(cls=cls, missing=reason or "not measured", as_dash=True)


def text(value: Any, cls: str = "", title: str = "") -> Cell:
    return Cell("" if is_missing(value) else str(value), cls, title)


def num(row: Record | pd.Series | None, name: str, formatter: Callable[[Any], str],
        good_above: float | None = None) -> Cell:
    """A number; n/a with the row's reason when missing; green/red around `good_above`."""
    value = None if row is None else row.get(name)
    if row is None or is_missing(value):
        return missing(why(row, name) if row is not None else "", "num")
    cls = "num"
    if good_above is not None and isinstance(value, (int, float)) and math.isfinite(value):
        cls += " better" if value > good_above + 1e-9 else " worse" if value < good_above - 1e-9 else ""
    return Cell(formatter(value), cls)


def rung_cell(rung: str, rowspan: int = 1) -> Cell:
    return Cell(rung_label(rung), "key", rung, rowspan, swatch=RUNG_COLORS.get(rung, FALLBACK_COLOR))


# -- columns ------------------------------------------------------------------------------------

def key(header: str, name: str = "profile") -> Column:
    return Column(header, lambda r: text(r[name], "key"))


def plain(header: str, name: str) -> Column:
    return Column(header, lambda r: text(r[name]))


def rung(header: str = "Rung", name: str = "rung") -> Column:
    return Column(header, lambda r: rung_cell(r[name]))


def number(header: str, name: str, formatter: Callable[[Any], str], good_above: float | None = None) -> Column:
    return Column(header, lambda r: num(r, name, formatter, good_above), "num")


def calls(x: float, unit: str = "") -> str:
    """A break-even call count: 'never' when pinning does not pay off at any k."""
    return "never" if math.isinf(x) else f"{x:.0f}{unit}"


# -- tables -------------------------------------------------------------------------------------

def records(df: pd.DataFrame | Iterable[Record]) -> list[Record]:
    return df.to_dict("records") if isinstance(df, pd.DataFrame) else list(df)


def table(columns: Sequence[Column], rows: pd.DataFrame | Iterable[Record],
          groups: Sequence[tuple[str, int]] = (), cls: str = "data") -> Table:
    """One row per record, one cell per column; each row's tooltip is the record's `source`."""
    return Table([(c.header, c.cls) for c in columns],
                 [Row([c.cell(r) for c in columns], str(r.get("source") or "")) for r in records(rows)],
                 groups, cls)


def grouped_table(columns: Sequence[Column], df: pd.DataFrame, by: str, order: Sequence[str],
                  groups: Sequence[tuple[str, int]] = ()) -> Table:
    """Like table(), with the rows of one `by` value together under one spanning cell."""
    rows = []
    for value in order:
        recs = records(df[df[by] == value])
        for i, r in enumerate(recs):
            cells = [c.cell(r) for c in columns[1:]]
            if i == 0:
                cells = [c.but(cls=f"{c.cls} first-of-group".strip())
                         for c in [Cell(str(value), "key", rowspan=len(recs)), *cells]]
            rows.append(Row(cells, str(r.get("source") or "")))
    return Table([(c.header, c.cls) for c in columns], rows, groups)


def sources_of(df: pd.DataFrame, table_name: str) -> list[str]:
    """['run-a/cells.csv', 'run-b/cells.csv']: the files of `table_name` behind a frame's rows."""
    if df is None or df.empty or "source" not in df:
        return []
    files: list[str] = []
    for s in df["source"]:
        for piece in str(s).split(" + "):
            if f"/{table_name}" in piece:
                f = piece.split("[")[0]
                if f not in files:
                    files.append(f)
    return files
