"""The answer's chart: what the pin adds, pin-charged vs pin-free, per profile and family.

Why this shape: the one-line answer says yes/no per family; this chart shows the same numbers
(the verdict's `pin_speedup_charged` and `pin_speedup_consumer`) so the reader sees why. Bars
grow from 1× (no change): up where the pin helps, down where it costs, so "does it pay" reads
as the direction of the solid bars. One group per series (family and pin granularity), one
bar pair per profile (solid: pin charged, light: pin free).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from l2attr.ladders.analyse.answer import CHARGED, FREE
from l2attr.analysis.common import first_row, is_missing, ordered_profiles
from l2attr.study.families import rung_name
from l2attr.analysis.series import Series
from l2attr.ladders.analyse.verdict import HONEST_COMPARAND, PIN_RUNG
from l2attr.report.charts import _layout, _one_line, profile_color, tint

HEIGHT = 360


def series_label(s: Series) -> str:
    """'tuned · line pin' (a pin that is not the family's default says so)."""
    extra = "" if "not the family's default" not in s.title else " (non-default)"
    return f"{s.family} · {s.pin} pin{extra}"


def _value(rows: pd.DataFrame, series: str, profile: str, field: str) -> float | None:
    row = first_row(rows, series=series, profile=profile)
    if row is None or is_missing(row[field]):
        return None
    return float(row[field])


def answer_figure(verdict: pd.DataFrame, series: list[Series]) -> go.Figure | None:
    """Pin-charged and pin-free speedup of the pin rung over the same family's unpinned consumer;
    None when no series has a charged number (the slot then says "not measured")."""
    if verdict is None or verdict.empty or CHARGED not in verdict or verdict[CHARGED].isna().all():
        return None
    shown = [s for s in series if not verdict[(verdict["series"] == s.name)][CHARGED].isna().all()]
    labels = [series_label(s) for s in shown]
    fig = go.Figure()
    for profile in ordered_profiles(verdict["profile"]):
        color = profile_color(profile)
        for field, what, lighten in ((CHARGED, "pin charged", 0.0), (FREE, "pin free", 0.62)):
            values = [_value(verdict, s.name, profile, field) for s in shown]
            names = [f"{rung_name(s.family, PIN_RUNG)} over {rung_name(s.family, HONEST_COMPARAND)}" for s in shown]
            fig.add_bar(
                x=labels, y=[None if v is None else v - 1.0 for v in values], base=1.0,
                name=profile if field == CHARGED else f"{profile} · pin free", legendgroup=profile,
                showlegend=field == CHARGED, offsetgroup=f"{profile}-{field}",
                marker={"color": tint(color, lighten), "line": {"color": color, "width": 1}},
                customdata=[[v, n] for v, n in zip(values, names)],
                hovertemplate=f"<b>%{{x}}</b> · {profile}<br>{what}: %{{customdata[0]:.3f}}×"
                              "<br>%{customdata[1]}<extra></extra>")
    shape, _ = _one_line(1.0, "")
    layout = _layout("What the pin adds, per family: solid = pin kernel charged, light = pin free",
                     "speedup from the pin (×)", height=HEIGHT, barmode="group", shapes=[shape])
    layout["yaxis"] = {**layout["yaxis"], "rangemode": "normal"}
    layout["margin"] = {"l": 64, "r": 24, "t": 40, "b": 74}
    # under the family labels, where it meets neither the title nor the plotly toolbar
    layout["legend"] = {**layout["legend"], "y": -0.13, "yanchor": "top",
                        "title": {"text": "profile (1× = break-even, dashed) "}}
    return fig.update_layout(**layout)


def answer_figures(verdict: pd.DataFrame, series: list[Series]) -> dict[str, Any]:
    return {"fig-answer": answer_figure(verdict, series)}
