"""The report's tables declared once, format-neutral: the HTML page (reports/macros.html.j2), the
Markdown page and the console (report/table_text.py) all draw the same Table.

A Cell holds text (each printer escapes it its own way), a CSS class, a tooltip and, where the
value is missing, the reason: the page shows n/a with the reason as its tooltip, or a dash where
the field does not apply (the baseline's delta). A Row carries the CSV rows it comes from (its
`source`, shown as the row's tooltip). A Column says how an analysis record becomes a cell, which
header group it sits under and whether it may be left out; a table is a tuple of columns over an
analysis frame. A column with no value in any row is left out, and the table names it (`left_out`)
so every printer can say why it is not there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Callable, Iterable, Sequence

import pandas as pd

from l2attr.analysis.common import is_missing, not_applicable, rung_label, why
from l2attr.catalog.keys import Catalog, catalog
from l2attr.report import fmt
from l2attr.report.fmt import FALLBACK_COLOR, RUNG_COLORS

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


LEFT_OUT = "columns left out, n/a in every row"
MAX_WHY = 2          # the left-out line names the cells' reasons only when they are this few


@dataclass(frozen=True)
class Table:
    headers: list[tuple[str, str]]                  # (label, CSS class)
    rows: list[Row]
    groups: Sequence[tuple[str, int]] = ()          # (label, columns spanned) above the headers
    cls: str = "data"
    left_out: tuple[tuple[str, str], ...] = ()      # (group, header) of each column with no value in any row
    left_out_why: tuple[str, ...] = ()              # the reasons those cells give, each once

    @property
    def left_out_line(self) -> str:
        """'columns left out, n/a in every row: vs baseline: pin charged / wall clock; share' ('' when
        none was): each group once, its columns after it."""
        said: dict[str, list[str]] = {}
        for group, header in self.left_out:
            said.setdefault(group, []).append(header)
        parts = [f"{g}: {' / '.join(hs)}" if g else " / ".join(hs) for g, hs in said.items()]
        why = f" ({'; '.join(self.left_out_why)})" if self.left_out_why else ""
        return f"{LEFT_OUT}: {'; '.join(parts)}{why}" if parts else ""


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[Record], Cell]
    cls: str = ""                                   # "num": a right-aligned number column
    group: str = ""                                 # the spanning header above it ("" for none)
    hide_when_empty: bool = True                    # left out when no row has a value


def under(group: str, *columns: Column) -> tuple[Column, ...]:
    """The columns with one spanning header above them (declared by name, never counted by position)."""
    return tuple(replace(c, group=group) for c in columns)


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


def rung_cell(rung: str, rowspan: int = 1, family: str = "") -> Cell:
    """A rung in its family's words (the row's `family`: the fast family's OptMT slot is `fast`)."""
    return Cell(rung_label(rung, family), "key", rung, rowspan, swatch=RUNG_COLORS.get(rung, FALLBACK_COLOR))


# -- columns ------------------------------------------------------------------------------------

def key(header: str, name: str = "profile") -> Column:
    return Column(header, lambda r: text(r[name], "key"))


def plain(header: str, name: str) -> Column:
    return Column(header, lambda r: text(r[name]))


def rung(header: str = "Rung", name: str = "rung") -> Column:
    return Column(header, lambda r: rung_cell(r[name], family=family_of(r)))


def family_of(r: Record) -> str:
    """The family a record is about ('' where it names none): the words its rungs are said in."""
    f = r.get("family")
    return f if isinstance(f, str) else ""


def number(header: str, name: str, formatter: Callable[[Any], str], good_above: float | None = None) -> Column:
    return Column(header, lambda r: num(r, name, formatter, good_above), "num")


# a metric catalog unit (metrics/*.toml) -> how its value is printed
UNIT_FORMATS: dict[str, Callable[[Any], str]] = {"byte": fmt.nbytes, "sector": fmt.sectors, "ns": fmt.ns_as_us,
                                                 "%": fmt.pct, "block": fmt.count}


@lru_cache(maxsize=1)
def _catalog() -> Catalog:
    """The metric catalog, its TOML files read once a process (every page declares a dozen metric
    columns, and each read them all again)."""
    return catalog()


def metric(key: str, header: str = "", name: str = "") -> Column:
    """A layer-B quantity by its catalog key: its header the catalog's label (unless given), its
    format the catalog's unit, its field `name` (default: the key itself)."""
    cat = _catalog()
    if key in cat.rates:
        label, unit = cat.rates[key].label, "%"
    elif key in cat.totals:
        label, unit = cat.totals[key].label, cat.metrics[cat.totals[key].parts[0]].unit
    elif key in cat.metrics:
        label, unit = cat.metrics[key].label, cat.metrics[key].unit
    else:
        raise KeyError(f"{key!r} is no key of the metric catalog (metrics/*.toml)")
    return number(header or label, name or key, UNIT_FORMATS.get(unit, fmt.count))


def calls(x: float, unit: str = "") -> str:
    """A break-even call count: 'never' when pinning does not pay off at any k."""
    return "never" if math.isinf(x) else f"{x:.0f}{unit}"


# -- tables -------------------------------------------------------------------------------------

def records(df: pd.DataFrame | Iterable[Record]) -> list[Record]:
    return df.to_dict("records") if isinstance(df, pd.DataFrame) else list(df)


def _kept(columns: Sequence[Column], cells: list[list[Cell]]) -> list[int]:
    """Indexes of the columns to draw: a column missing in every row is left out (a table with no
    rows keeps them all: its header says what it would hold)."""
    if not cells:
        return list(range(len(columns)))
    return [i for i, c in enumerate(columns)
            if not c.hide_when_empty or any(row[i].missing is None for row in cells)]


def _groups(columns: Sequence[Column]) -> tuple[tuple[str, int], ...]:
    """(label, span) of consecutive columns under one group; () when no column has one."""
    if not any(c.group for c in columns):
        return ()
    out: list[list[Any]] = []
    for c in columns:
        if out and out[-1][0] == c.group:
            out[-1][1] += 1
        else:
            out.append([c.group, 1])
    return tuple((label, span) for label, span in out)


def _build(columns: Sequence[Column], cells: list[list[Cell]], sources: list[str], cls: str,
           lead: list[Cell | None] | None = None) -> Table:
    keep = _kept(columns, cells)
    shown = [columns[i] for i in keep]
    rows = []
    for n, (row, source) in enumerate(zip(cells, sources)):
        picked = [row[i] for i in keep]
        first = lead[n] if lead is not None else None
        rows.append(Row(([first] if first is not None else []) + picked, source))
    gone = [i for i in range(len(columns)) if i not in keep]
    reasons = tuple(dict.fromkeys(row[i].missing for i in gone for row in cells if row[i].missing and not row[i].dash))
    reasons = reasons if len(reasons) <= MAX_WHY else ()     # many per-row reasons say less than none
    return Table([(c.header, c.cls) for c in shown], rows, _groups(shown), cls,
                 tuple((columns[i].group, columns[i].header) for i in gone), reasons)


def table(columns: Sequence[Column], rows: pd.DataFrame | Iterable[Record], cls: str = "data") -> Table:
    """One row per record, one cell per column; each row's tooltip is the record's `source`."""
    recs = records(rows)
    return _build(columns, [[c.cell(r) for c in columns] for r in recs],
                  [str(r.get("source") or "") for r in recs], cls)


def cell_table(headers: Sequence[tuple[str, str]], cells: list[list[Cell]]) -> Table:
    """A table of cells made elsewhere (the sweep chapters' text rows), with the same rule for a
    column missing in every row."""
    columns = [Column(h, lambda r: Cell(), cls) for h, cls in headers]
    return _build(columns, cells, [""] * len(cells), "data")


def grouped_table(columns: Sequence[Column], df: pd.DataFrame, by: str, order: Sequence[str]) -> Table:
    """Like table(), with the rows of one `by` value together under one spanning cell (the first
    column, which is never left out)."""
    cells: list[list[Cell]] = []
    sources: list[str] = []
    lead: list[Cell | None] = []
    for value in order:
        recs = records(df[df[by] == value])
        for i, r in enumerate(recs):
            row = [c.cell(r) for c in columns[1:]]
            if i == 0:
                row = [c.but(cls=f"{c.cls} first-of-group".strip()) for c in row]
            cells.append(row)
            sources.append(str(r.get("source") or ""))
            lead.append(Cell(str(value), "key first-of-group", rowspan=len(recs)) if i == 0 else None)
    t = _build(columns[1:], cells, sources, "data", lead)
    first = columns[0]
    return replace(t, headers=[(first.header, first.cls), *t.headers],
                   groups=_groups([first, *[c for c in columns[1:] if (c.group, c.header) not in t.left_out]]))


def grid(t: Table) -> list[list[Cell]]:
    """The table's rows with every spanning cell repeated in each row it spans, so each row has one
    cell per header and reads on its own (what a printer without rowspan draws)."""
    out: list[list[Cell]] = []
    pending: dict[int, tuple[Cell, int]] = {}          # column -> (its spanning cell, rows still spanned)
    for row in t.rows:
        cells = list(row.cells)
        line: list[Cell] = []
        for col in range(len(t.headers)):
            held, left = pending.get(col, (Cell(), 0))
            if left > 0:
                pending[col] = (held, left - 1)
                line.append(held)
            elif cells:
                c = cells.pop(0)
                plain = c.but(rowspan=1, cls=" ".join(x for x in c.cls.split() if x != "first-of-group"))
                if c.rowspan > 1:
                    pending[col] = (plain, c.rowspan - 1)
                line.append(plain)
        out.append(line)
    return out


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
