"""The pin -> gap -> consumer timeline: L2 hit rate and DRAM read throughput over time.

Drawn from the PM-sampling table (`profile.pmsampling.read_pm_timeline`) and its phases
(`profile.pmsampling.phases`), in charts.py's house style. Two stacked panels share the time axis: hit
rates on top, throughputs below, phases shaded across both. A sample holds for its interval, so
lines are steps. The hit rate is left out (a gap, not a zero) where the L2 is idle: a rate over
a handful of lookups reads 0 % or 50 % and says nothing. Returns None when the table holds
neither an L2 hit rate nor a DRAM read series.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from l2attr.catalog.sampled import BUSY_PCT, quantity_labels
from l2attr.report.charts import FALLBACK_COLOR, GRID, INK, _clean, _layout, rung_color, tint
from l2attr.vocab import Phase, RungId

# Phases take the colour of the rung they belong to: the pin is the pinning rung's work, the
# consumer the plain tuned kernel's.
PHASE_COLORS: dict[str, str] = {
    Phase.PIN: rung_color(RungId.L2P_OPTMT),
    Phase.CONSUMER: rung_color(RungId.OPTMT),
    Phase.GAP: FALLBACK_COLOR,
    Phase.KERNEL: rung_color(RungId.COMBINED),
    Phase.OTHER: FALLBACK_COLOR,
}
# (quantity key, panel row, colour, dash)
SERIES: tuple[tuple[str, int, str, str], ...] = (
    ("l2_hit_rate_pct", 1, INK, "solid"),
    ("l2_tex_hit_rate_pct", 1, "#6B7280", "dot"),
    ("dram_read_pct_of_peak", 2, "#B4292F", "solid"),
    ("l2_throughput_pct_of_peak", 2, "#5E9BD0", "dash"),
)
HIT_KEYS = ("l2_hit_rate_pct", "l2_tex_hit_rate_pct")
REQUIRED_ANY = ("l2_hit_rate_pct", "dram_read_pct_of_peak")


def _wide(timeline: pd.DataFrame) -> pd.DataFrame:
    """t_us x quantity, with hit rates blanked where the L2 is idle."""
    wide = timeline.pivot_table(index="t_us", columns="quantity", values="value", aggfunc="first").sort_index()
    if "l2_throughput_pct_of_peak" in wide:
        idle = wide["l2_throughput_pct_of_peak"] < BUSY_PCT
        for key in HIT_KEYS:
            if key in wide:
                wide.loc[idle, key] = float("nan")
    return wide


def _phase_marks(rows: pd.DataFrame) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Shaded bands over both panels, and a label above each band."""
    shapes, notes = [], []
    for _, p in rows.iterrows():
        color = PHASE_COLORS.get(p["phase"], FALLBACK_COLOR)
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": p["start_us"], "x1": p["end_us"],
                       "y0": 0, "y1": 1, "fillcolor": tint(color, 0.72 if p["phase"] != Phase.GAP else 0.86),
                       "line": {"width": 0}, "layer": "below"})
        notes.append({"xref": "x", "yref": "paper", "x": (p["start_us"] + p["end_us"]) / 2, "y": 1.0,
                      "yanchor": "bottom", "showarrow": False, "font": {"size": 11, "color": color},
                      "text": f"{p['phase']}<br>{p['duration_us']:.1f} µs"})
    return shapes, notes


def _focus(rows: pd.DataFrame) -> list[float] | None:
    """The x range around the detected phases, so a long idle lead-in does not squeeze them."""
    if rows.empty:
        return None
    lo, hi = float(rows["start_us"].min()), float(rows["end_us"].max())
    pad = 0.08 * (hi - lo) if hi > lo else 5.0
    return [lo - pad, hi + pad]


def timeline_figure(timeline: pd.DataFrame | None, phases: pd.DataFrame | None = None,
                    range_name: str | None = None) -> go.Figure | None:
    """L2 hit rate and DRAM read throughput over one range's time, phases shaded and labelled."""
    if timeline is None or timeline.empty:
        return None
    name = range_name if range_name is not None else str(timeline["range"].iloc[0])
    rows = timeline[timeline["range"] == name]
    if not any(k in set(rows["quantity"]) for k in REQUIRED_ANY):
        return None
    wide = _wide(rows)
    labels = quantity_labels()
    step_us = float(pd.Series(wide.index).diff().median())
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1)
    for key, row, color, dash in SERIES:
        if key not in wide:
            continue
        unit = "% of peak" if row == 2 else "%"
        fig.add_scatter(x=list(wide.index), y=_clean(wide[key]), name=labels.get(key, key), mode="lines",
                        line={"color": color, "width": 1.6, "dash": dash, "shape": "hv"},
                        connectgaps=False, row=row, col=1,
                        hovertemplate=f"{labels.get(key, key)}<br>t %{{x:.1f}} µs<br>%{{y:.1f}} {unit}"
                                      "<extra></extra>")
    title = f"Pin → gap → consumer in time (PM sampling every {step_us:.1f} µs) · {name}"
    layout = _layout(title, "L2 hit rate (%)", height=540)
    axis_style = {"gridcolor": GRID, "zeroline": False, "linecolor": "#9CA3AF"}
    layout["yaxis"] = {**layout["yaxis"], "range": [0, 100]}
    layout["yaxis2"] = {**axis_style, "title": {"text": "throughput (% of peak)"}, "rangemode": "tozero"}
    layout["xaxis2"] = {**layout["xaxis"], "title": {"text": "time from range start (µs)"}}
    # phase labels sit above the top panel, where the legend would go: the legend goes below
    layout["legend"] = {**layout["legend"], "y": -0.17, "yanchor": "top"}
    layout["margin"] = {**layout["margin"], "t": 96, "b": 104}
    if phases is not None and not phases.empty:
        mine = phases[phases["range"] == name]
        layout["shapes"], layout["annotations"] = _phase_marks(mine)
        focus = _focus(mine)
        if focus:
            layout["xaxis"] = {**layout["xaxis"], "range": focus}
            layout["xaxis2"] = {**layout["xaxis2"], "range": focus}
    return fig.update_layout(**layout)


__all__ = ["timeline_figure", "PHASE_COLORS"]
