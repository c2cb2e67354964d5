"""Any sweep axis' table, built from its declaration (sweep/axes/<axis>.py: TableSpec).

One row per (family, profile, point, arm) the table declares, from sweep_points.csv: facts of the
point, medians, and speedups of a reference over the row, each speedup with the two intervals
behind it so that a judgement (sweep/analyse/judge.py's JUDGES) can apply the one significance rule
(analysis/significance.py) without going back to the points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from l2attr.analysis.common import ratio
from l2attr.analysis.significance import Interval, compare
from l2attr.sweep.axes.declare import Fact, FromJudgement, Median, MiB, Ref, Speedup, TableSpec
from l2attr.vocab import Judgement, RefPoint

IDENT = ("family", "pin", "profile", "point", "arm")
NAN = float("nan")
MISSING = Interval(NAN, NAN, NAN)

Key = tuple[str, str, str, str, str, str]          # family, profile, point, arm, quantity, timer


@dataclass
class SweepTable:
    """The rows, and per Speedup column the (reference, row) intervals behind each row's value."""

    frame: pd.DataFrame
    intervals: dict[str, list[tuple[Interval, Interval]]] = field(default_factory=dict)

    def judged(self, column: str) -> list[Judgement]:
        """The rule's word on each row's speedup in `column` (reference against the row)."""
        return [compare(base, new).judgement for base, new in self.intervals.get(column, [])]


def _medians(points: pd.DataFrame) -> dict[Key, Interval]:
    return {(r.family, r.profile, r.point, r.arm, r.quantity, r.timer):
            Interval(float(r.median_us), float(r.ci95_lo_us), float(r.ci95_hi_us)) for r in points.itertuples()}


def _lowest_points(points: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(family, profile) -> the point with the smallest x (the first such in the file's order)."""
    out: dict[tuple[str, str], tuple[float, str]] = {}
    for r in points.itertuples():
        key, x = (r.family, r.profile), float(r.x)
        if key not in out or x < out[key][0]:
            out[key] = (x, r.point)
    return {k: v[1] for k, v in out.items()}


def build(points: pd.DataFrame, spec: TableSpec, row_bytes: int) -> SweepTable:
    """The table of `spec` over one sweep's points (`row_bytes`: the workload's, for rows as MiB)."""
    names = [c.name for c in spec.columns]
    columns = [*IDENT, "x"] + [n for n in names if n not in (*IDENT, "x")]
    if points.empty:
        return SweepTable(pd.DataFrame(columns=columns))
    med = _medians(points)
    lowest = _lowest_points(points)
    facts = points.drop_duplicates(list(IDENT[:1] + IDENT[2:])).to_dict("records")
    rows: list[dict[str, Any]] = []
    intervals: dict[str, list[tuple[Interval, Interval]]] = {
        c.name: [] for c in spec.columns if isinstance(c.value, Speedup)}
    for f in facts:
        if spec.row_arms is not None and f["arm"] not in spec.row_arms:
            continue
        fam, prof, point, arm = f["family"], f["profile"], f["point"], f["arm"]

        def at(ref: Ref) -> tuple[str, str]:
            return ref.arm.value, (lowest.get((fam, prof), point) if ref.at == RefPoint.LOWEST_X else point)

        row: dict[str, Any] = {**{k: f[k] for k in IDENT}, "x": float(f["x"])}
        for c in spec.columns:
            v = c.value
            if isinstance(v, Fact):
                value = f.get(v.column, NAN)
                if v.bytes_to_mib:
                    value = float(value) / MiB
                elif v.rows_to_mib:
                    value = float(value) * row_bytes / MiB
                row[c.name] = value
            elif isinstance(v, Median):
                where_arm, where_point = at(v.ref) if v.ref is not None else ((v.arm or arm), point)
                got = med.get((fam, prof, where_point, str(where_arm), v.quantity.value, v.timer.value))
                row[c.name] = got.median if got is not None else (0.0 if v.zero_if_absent else NAN)
            elif isinstance(v, Speedup):
                ref_arm, ref_point = at(v.over or spec.reference)
                base = med.get((fam, prof, ref_point, ref_arm, (v.ref_quantity or v.quantity).value, v.timer.value),
                               MISSING)
                new = med.get((fam, prof, point, arm, v.quantity.value, v.timer.value), MISSING)
                row[c.name] = ratio(base.median, new.median)
                intervals[c.name].append((base, new))
            elif isinstance(v, FromJudgement):
                row[c.name] = NAN
        rows.append(row)
    frame = pd.DataFrame(rows, columns=columns)
    if frame.empty:
        return SweepTable(frame, intervals)
    keys = ["family", "profile", *spec.sort]
    order = frame.sort_values(keys, ascending=[True, True, *([not spec.descending] * len(spec.sort))],
                              kind="stable").index
    frame = frame.loc[order].reset_index(drop=True)
    intervals = {k: [v[i] for i in order] for k, v in intervals.items()}
    return SweepTable(frame, intervals)


def spread(table: pd.DataFrame, points: pd.DataFrame, spec: TableSpec) -> pd.DataFrame:
    """`spread_pct`: half the bootstrap 95 % CI of the row's main median (spec.spread), in % of it."""
    if table.empty:
        return table
    m = spec.spread
    sel = points[(points["quantity"] == m.quantity.value) & (points["timer"] == m.timer.value)]
    half = {(r.family, r.profile, r.point, r.arm): (r.ci95_hi_us - r.ci95_lo_us) / 2 / r.median_us * 100
            for r in sel.itertuples() if r.median_us > 0}
    table = table.copy()
    table["spread_pct"] = [half.get((r["family"], r["profile"], r["point"], str(m.arm or r["arm"])), NAN)
                           for r in table.to_dict("records")]
    return table


def finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not math.isnan(v) and not math.isinf(v)
