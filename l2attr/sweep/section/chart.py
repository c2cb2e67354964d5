"""Plotly figures of the sweep chapters: one per sweep and kernel family, drawn from the axis'
declared chart (sweep/axes/<axis>.py: ChartSpec) over its analysis table.

A line per (profile, series[, split value]); the split's values (the amortisation's orders) and
the series' styles pick the dash (solid: the primary measured line, dotted: a second one, thin
dashed: a model such as the formula's extrapolation). A dashed horizontal line marks the
reference (speedup 1), vertical ones the device limits the run recorded, and a diamond the x the
judgement places (the measured break-even k).
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from l2attr.sweep.analyse.judge import SweepAnalysis
from l2attr.sweep.load import SweepRun
from l2attr.sweep.axes.declare import ChartSpec, Series
from l2attr.report.charts import _clean, _layout, _legend_below, _one_line, break_even_labels, profile_color
from l2attr.vocab import DeviceLimit, LineStyle

MiB = 1 << 20
DASH = {LineStyle.PRIMARY: "solid", LineStyle.SECONDARY: "dot", LineStyle.MODEL: "dash"}
LIMITS = {DeviceLimit.PERSISTING_MAX: ("persistingL2CacheMaxSize", "persisting max"),
          DeviceLimit.L2_SIZE: ("l2CacheSize", "L2")}


def _vline(x: float, text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    shape = {"type": "line", "xref": "x", "x0": x, "x1": x, "yref": "paper", "y0": 0, "y1": 1,
             "line": {"color": "#6B7280", "width": 1, "dash": "dot"}}
    note = {"xref": "x", "x": x, "yref": "paper", "y": 1, "yanchor": "bottom", "text": text, "showarrow": False,
            "font": {"size": 10, "color": "#374151"}}
    return shape, note


def _below_axis_title(layout: dict[str, Any]) -> dict[str, Any]:
    """The legend under the x axis title, not on it (a long axis title sat in its legend)."""
    layout["legend"] = {**layout["legend"], "y": -0.26}
    layout["margin"] = {**layout["margin"], "b": 150}
    return layout


def _limits(run: SweepRun, limits: tuple[DeviceLimit, ...]) -> list[tuple[float, str]]:
    out = []
    for limit in limits:
        key, text = LIMITS[limit]
        v = run.limit(key)
        if v:
            out.append((v / MiB, f"{text} {v / MiB:g} MiB"))
    return out


def _style(chart: ChartSpec, s: Series, split: Any) -> LineStyle:
    """A split's main series takes the split value's style; every other series its own."""
    if split is not None and s.only is None:
        return dict(chart.split_styles).get(split, LineStyle.PRIMARY)
    return s.style


def _name(profile: str, s: Series, split: Any) -> str:
    parts = [profile]
    if split is not None and s.only is None:
        parts.append(str(split).replace("_", " "))
    if s.label:
        parts.append(s.label)
    return " · ".join(parts)


def figure(an: SweepAnalysis, family: str) -> go.Figure | None:
    chart = an.spec.chart
    t = an.table[an.table["family"] == family] if not an.table.empty else an.table
    if chart.arms is not None and not t.empty:
        t = t[t["arm"].isin([a.value for a in chart.arms])]
    if t.empty or chart.x not in t.columns:
        return None
    fig = go.Figure()
    order = [v for v, _ in chart.split_styles]
    for profile, g in t.groupby("profile", sort=False):
        color = profile_color(profile)
        splits = sorted(dict.fromkeys(g[chart.split]), key=lambda v: order.index(v) if v in order else len(order)) \
            if chart.split else [None]
        for split in splits:
            part = (g if split is None else g[g[chart.split] == split]).sort_values(chart.x)
            for s in chart.series:
                if (s.only is not None and split != s.only) or s.column not in part or part[s.column].isna().all():
                    continue
                style, name = _style(chart, s, split), _name(profile, s, split)
                model = style == LineStyle.MODEL
                fig.add_scatter(x=_clean(part[chart.x]), y=_clean(part[s.column]),
                                mode="lines" if model else "lines+markers", name=name,
                                line={"color": color, "dash": DASH[style], **({"width": 1} if model else {})},
                                opacity=0.7 if model else 1.0,
                                hovertemplate=f"{name}<br>{chart.x_title} = %{{x}}<br>%{{y:.2f}}×<extra></extra>")
    breaks = []
    if chart.mark_judged:
        styles = dict(chart.split_styles)
        for fam, profile, split, x, y in an.marks:
            if fam != family or (split is not None and styles.get(split, LineStyle.PRIMARY) != LineStyle.PRIMARY):
                continue
            breaks.append((profile, x, y))
            fig.add_scatter(x=[x], y=[y], mode="markers", showlegend=False, hoverinfo="skip",
                            marker={"color": profile_color(profile), "size": 11, "symbol": "diamond",
                                    "line": {"color": "#FFFFFF", "width": 1}})
    shape, note = _one_line(*chart.reference)
    shapes, notes = [shape], [note, *break_even_labels(breaks)]
    for vx, text in _limits(an.run, chart.limits):
        s_, n_ = _vline(vx, text)
        shapes.append(s_)
        notes.append(n_)
    layout = _layout(chart.title.format(family=family), chart.y_title, height=chart.height, shapes=shapes,
                     annotations=notes)
    xaxis: dict[str, Any] = {**layout["xaxis"], "title": {"text": chart.x_title}}
    if chart.log_x:
        xaxis["type"] = "log"
    if chart.ticks_at_x:
        xaxis["tickvals"] = sorted({int(v) if float(v).is_integer() else float(v) for v in t[chart.x]})
    layout["xaxis"] = xaxis
    return fig.update_layout(**_below_axis_title(_legend_below(layout)))


def figures(an: SweepAnalysis, prefix: str) -> dict[str, go.Figure]:
    """Figure id -> figure for every family of the sweep (ids `<prefix>-<family>`)."""
    families = list(dict.fromkeys(an.table["family"])) if not an.table.empty else []
    out = {f"{prefix}-{fam}": figure(an, fam) for fam in families}
    return {k: v for k, v in out.items() if v is not None}


__all__ = ["figure", "figures"]
