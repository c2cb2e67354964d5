"""Plotly figures for the report, built from the analysis tables (no computing here).

One colour per rung everywhere (ladder, speedups, roofline, heatmap labels follow ladder order),
one colour per profile (hot = warm colours, random = blue) where profiles are the series. Each
builder returns None when its data is absent, so the report shows "not measured" instead of an
empty chart. Figures use template "none" plus a small house layout, which keeps their JSON small.
"""

from __future__ import annotations

import json
import math
from typing import Any

import plotly.graph_objects as go

from l2attr.analysis.common import is_missing, ordered_profiles, ordered_rungs, rung_label
from l2attr.report.titles import view_family
from l2attr.analysis.calls import headline_rate, label
from l2attr.study.study import Analysis
from l2attr.report.fmt import FALLBACK_COLOR, PROFILE_COLORS, RUNG_COLORS  # noqa: F401  (charts' callers)
from l2attr.vocab import Condition, Profile, Role, RungId

FONT = ("Inter, system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', "
        "'Liberation Sans', Arial, sans-serif")
GRID = "#E5E7EB"
INK = "#1F2937"


def rung_color(name: str) -> str:
    return RUNG_COLORS.get(name, FALLBACK_COLOR)


def profile_color(name: str) -> str:
    return PROFILE_COLORS.get(name, FALLBACK_COLOR)


def tint(color: str, amount: float) -> str:
    """Mix a #RRGGBB colour with white (amount 0 = unchanged, 1 = white)."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    mix = [round(c + (255 - c) * amount) for c in (r, g, b)]
    return "#" + "".join(f"{c:02X}" for c in mix)


def _legend_below(layout: dict[str, Any]) -> dict[str, Any]:
    """Long legends go under the plot, where they cannot cover the title."""
    layout["legend"] = {**layout["legend"], "y": -0.14, "yanchor": "top"}
    layout["margin"] = {**layout["margin"], "t": 48, "b": 110}
    return layout


def _of(an: Analysis) -> str:
    """' · <series>' for a one-series view: every chart says whose kernels it shows."""
    return f" · {an.series[0].title}" if len(an.series) == 1 else ""


def _clean(values: Any) -> list[Any]:
    """Plain JSON-able list with None for missing (plotly draws a gap, never a zero)."""
    out = []
    for v in values:
        if is_missing(v) or (isinstance(v, float) and math.isinf(v)):
            out.append(None)
        else:
            out.append(float(v) if isinstance(v, (int, float)) else v)
    return out


def _layout(title: str, ytitle: str, height: int = 400, **extra: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "template": "none",
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 15, "color": INK}},
        "font": {"family": FONT, "size": 12, "color": INK},
        "height": height,
        "margin": {"l": 64, "r": 24, "t": 72, "b": 56},
        "paper_bgcolor": "#FFFFFF", "plot_bgcolor": "#FFFFFF",
        "legend": {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom", "font": {"size": 11}},
        "xaxis": {"showgrid": False, "linecolor": "#9CA3AF", "ticks": "outside", "tickcolor": "#9CA3AF"},
        "yaxis": {"title": {"text": ytitle}, "gridcolor": GRID, "zeroline": False, "linecolor": "#9CA3AF",
                  "rangemode": "tozero"},
        "hoverlabel": {"font": {"family": FONT}},
        "bargap": 0.18, "bargroupgap": 0.06,
    }
    layout.update(extra)
    return layout


def _one_line(y: float, text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A dashed reference line across the plot with a small label (speedup 1, copy bandwidth)."""
    shape = {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": y, "y1": y,
             "line": {"color": "#374151", "width": 1, "dash": "dash"}}
    note = {"xref": "paper", "x": 1, "xanchor": "right", "yref": "y", "y": y, "yanchor": "bottom",
            "text": text, "showarrow": False, "font": {"size": 10, "color": "#374151"}}
    return shape, note


def ladder_figure(an: Analysis) -> go.Figure | None:
    """Consumer latency per rung per profile, with the bootstrap 95% CI of the median as error bars."""
    fam = view_family(an)
    lad = an.state_rows(an.ladder)
    if lad.empty:
        return None
    profiles = ordered_profiles(lad["profile"])
    fig = go.Figure()
    for rung in ordered_rungs(lad["rung"]):
        rows = lad[lad["rung"] == rung].set_index("profile").reindex(profiles)
        med = rows["consumer_us"]
        fig.add_bar(
            name=rung_label(rung, fam), x=profiles, y=_clean(med), marker_color=rung_color(rung),
            error_y={"type": "data", "symmetric": False, "array": _clean(rows["consumer_ci_hi_us"] - med),
                     "arrayminus": _clean(med - rows["consumer_ci_lo_us"]), "color": "#374151",
                     "thickness": 1.2, "width": 3},
            customdata=_clean(rows["consumer_n"]),
            hovertemplate=f"<b>{rung_label(rung, fam)}</b> · %{{x}}<br>consumer median %{{y:.1f}} µs"
                          "<br>n = %{customdata:.0f}<extra></extra>",
        )
    return fig.update_layout(**_layout(f"Consumer kernel latency per rung (L2 state: {an.state}){_of(an)}",
                                       "median latency (µs)", barmode="group"))


def speedup_figure(an: Analysis) -> go.Figure | None:
    """Speedup over the baseline of the pinning rungs: the artifact's consumer-only number vs charged ones."""
    fam = view_family(an)
    lad = an.state_rows(an.ladder)
    if lad.empty:
        return None
    pinning = [r for r in ordered_rungs(lad["rung"]) if lad.loc[lad["rung"] == r, "pins"].any()]
    if not pinning:
        return None
    profiles = ordered_profiles(lad["profile"])
    fig = go.Figure()
    styles = (("speedup_artifact", "consumer only, artifact's timer", "", 0.0),
              ("speedup_consumer", "consumer kernel only", ".", 0.3),
              ("speedup_kernels", "pin + consumer kernels", "/", 0.55),
              ("speedup_wall", "whole call, wall clock", "x", 0.75))
    for rung in pinning:
        rows = lad[lad["rung"] == rung].set_index("profile").reindex(profiles)
        for field, what, pattern, lighten in styles:
            color = rung_color(rung)
            fig.add_bar(
                name=f"{rung_label(rung, fam)} · {what}", x=profiles, y=_clean(rows[field]), legendgroup=rung,
                marker={"color": tint(color, lighten), "line": {"color": color, "width": 1},
                        "pattern": {"shape": pattern, "fgcolor": color, "size": 7, "solidity": 0.3}},
                hovertemplate=f"<b>{rung_label(rung, fam)}</b> · %{{x}}<br>{what}: %{{y:.3f}}×<extra></extra>",
            )
    shape, note = _one_line(1.0, "no speedup")
    layout = _layout(f"Speedup over the baseline: pin free vs pin charged{_of(an)}", "speedup over baseline (×)",
                     height=460, barmode="group", shapes=[shape], annotations=[note])
    return fig.update_layout(**_legend_below(layout))


# Break-even labels hang below their diamonds; one that would overlap a label already placed
# goes one step lower. Extents are estimated on the log-k axis: on a plot area 600 px wide (3
# decades, narrower than the report's), one character of the 11 px label font spans about
# LABEL_CHAR_DECADES.
LABEL_CHAR_DECADES = 0.033
LABEL_GAP_PX = 18
LABEL_STEP_PX = 17


def label_extent(note: dict[str, Any]) -> tuple[float, float]:
    """(left, right) of a break-even label on the log-k axis, a character of margin each side."""
    half = (len(note["text"]) + 2) * LABEL_CHAR_DECADES / 2
    return note["x"] - half, note["x"] + half


def break_even_labels(points: list[tuple[str, float, float]]) -> list[dict[str, Any]]:
    """Annotations for the break-even diamonds, given (profile, k, speedup at k) on a log-k axis.

    Profiles with the same k share one label that names them all; each label takes the highest
    step below its diamond where it overlaps no label placed before it, tied to its diamond by a
    thin line, so no two labels sit on top of each other."""
    by_k: dict[int, list[tuple[str, float]]] = {}
    for profile, k, y in points:
        by_k.setdefault(int(k), []).append((profile, y))
    notes: list[dict[str, Any]] = []
    right_edges: list[float] = []             # per step, the right end of its last label
    for k in sorted(by_k):
        group = by_k[k]
        color = profile_color(group[0][0]) if len(group) == 1 else INK
        note = {"xref": "x", "yref": "y", "x": math.log10(k),     # a log axis takes log10 of the value
                "y": min(y for _, y in group), "text": str(k) if len(group) == 1 else
                f"{k}: {', '.join(p for p, _ in group)}", "showarrow": True, "arrowhead": 0, "arrowwidth": 1,
                "arrowcolor": color, "ax": 0, "font": {"size": 11, "color": color},
                "bgcolor": "rgba(255,255,255,0.85)"}
        left, right = label_extent(note)
        step = next((i for i, edge in enumerate(right_edges) if left > edge), len(right_edges))
        right_edges[step:step + 1] = [right]
        note["ay"] = LABEL_GAP_PX + LABEL_STEP_PX * step
        notes.append(note)
    return notes


def amortisation_figure(an: Analysis) -> go.Figure | None:
    """speedup(k) of L2P+OptMT when one pin serves k calls, vs OptMT (solid) and the baseline (dotted)."""
    fam = view_family(an)
    curve = an.state_rows(an.curve)
    curve = curve[curve["rung"] == RungId.L2P_OPTMT] if not curve.empty else curve
    if curve.empty:
        return None
    table = an.state_rows(an.amortisation)
    fig = go.Figure()
    breaks: list[tuple[str, float, float]] = []
    for profile in ordered_profiles(curve["profile"]):
        for comparand, dash in ((RungId.OPTMT, "solid"), (RungId.BASELINE, "dot")):
            pts = curve[(curve["profile"] == profile) & (curve["comparand"] == comparand)]
            if pts.empty:
                continue
            label = f"{profile} vs {rung_label(comparand, fam)}"
            fig.add_scatter(x=_clean(pts["k"]), y=_clean(pts["speedup"]), mode="lines", name=label,
                            legendgroup=profile, line={"color": profile_color(profile), "dash": dash, "width": 2},
                            hovertemplate=f"<b>{label}</b><br>k = %{{x}}<br>speedup %{{y:.3f}}×<extra></extra>")
            rec = table[(table["profile"] == profile) & (table["rung"] == RungId.L2P_OPTMT)
                        & (table["comparand"] == comparand)]
            if comparand != RungId.OPTMT or rec.empty:
                continue   # mark break-even on the honest comparand only: fewer, readable labels
            r = rec.iloc[0]
            k = r["break_even_calls"]
            if is_missing(k) or math.isinf(k):
                continue
            y = k * r["t_ref_us"] / (r["t_pin_us"] + k * r["t_cons_us"])
            breaks.append((profile, k, y))
            fig.add_scatter(x=[k], y=[y], mode="markers",
                            marker={"color": profile_color(profile), "size": 10, "symbol": "diamond",
                                    "line": {"color": "#FFFFFF", "width": 1}},
                            legendgroup=profile, showlegend=False,
                            hovertemplate=f"<b>{label}</b><br>break-even at k = {int(k)} calls per pin"
                                          "<extra></extra>")
    shape, note = _one_line(1.0, "break-even")
    layout = _legend_below(_layout(f"Amortisation: one pin serving k consumer calls "
                                   f"({rung_label(RungId.L2P_OPTMT, fam)}){_of(an)}",
                                   "speedup over comparand (×)", height=480, shapes=[shape],
                                   annotations=[note, *break_even_labels(breaks)]))
    ticks = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
    layout["xaxis"] = {**layout["xaxis"], "type": "log", "title": {"text": "consumer calls per pin (k, log scale)"},
                       "showgrid": True, "gridcolor": GRID, "tickvals": ticks, "ticktext": [str(t) for t in ticks]}
    layout["legend"] = {**layout["legend"], "y": -0.2}
    layout["margin"] = {**layout["margin"], "b": 130}
    layout["yaxis"] = {**layout["yaxis"], "rangemode": "normal"}
    return fig.update_layout(**layout)


def roofline_figure(an: Analysis) -> go.Figure | None:
    """Achieved consumer bandwidth as a fraction of the measured HBM copy bandwidth."""
    fam = view_family(an)
    roof = an.state_rows(an.roofline)
    if roof.empty or roof["fraction"].isna().all():
        return None
    profiles = ordered_profiles(roof["profile"])
    fig = go.Figure()
    for rung in ordered_rungs(roof["rung"]):
        rows = roof[roof["rung"] == rung].set_index("profile").reindex(profiles)
        fig.add_bar(name=rung_label(rung, fam), x=profiles, y=_clean(rows["fraction"]), marker_color=rung_color(rung),
                    customdata=_clean(rows["achieved_GBps"]),
                    hovertemplate=f"<b>{rung_label(rung, fam)}</b> · %{{x}}<br>fraction %{{y:.2f}}"
                                  "<br>achieved %{customdata:,.0f} GB/s<extra></extra>")
    hbm = an.hbm_copy_GBps or float("nan")
    shape, note = _one_line(1.0, f"measured HBM copy bandwidth ({hbm:,.0f} GB/s)")
    return fig.update_layout(**_layout(f"Roofline fraction: achieved bytes/s over HBM copy bandwidth{_of(an)}",
                                       "fraction of HBM copy bandwidth", barmode="group",
                                       shapes=[shape], annotations=[note]))


def heatmap_figure(an: Analysis, quantity: str) -> go.Figure | None:
    """Consumer hit rate or DRAM bytes, rung x profile (ladder condition)."""
    fam = view_family(an)
    grid = an.l2
    if grid.empty:
        return None
    grid = grid[(grid["role"] == Role.CONSUMER) & (grid["condition"] == Condition.LADDER)]
    if grid.empty or grid[quantity].isna().all():
        return None
    profiles = ordered_profiles(grid["profile"])
    rungs = ordered_rungs(grid["rung"])
    z, text = [], []
    for rung in rungs:
        row_z, row_t = [], []
        for profile in profiles:
            hit = grid[(grid["rung"] == rung) & (grid["profile"] == profile)]
            value = hit.iloc[0][quantity] if not hit.empty else float("nan")
            if is_missing(value):
                row_z.append(None)
                row_t.append("n/a")
            elif quantity == "dram_read":
                row_z.append(value / 1e6)
                row_t.append(f"{value / 1e6:,.1f} MB")
            else:
                row_z.append(value)
                row_t.append(f"{value:.1f} %")
        z.append(row_z)
        text.append(row_t)
    if quantity == "dram_read":
        title, scale, unit, zrange = "Consumer DRAM bytes read per call (median)", "Oranges", "MB", {}
    else:
        title, scale, unit, zrange = (f"Consumer {label(quantity)} (median per call)", "Blues", "%",
                                      {"zmin": 0, "zmax": 100})
    fig = go.Figure(go.Heatmap(
        z=z, x=profiles, y=[rung_label(r, fam) for r in rungs], text=text, texttemplate="%{text}",
        textfont={"size": 12}, colorscale=scale, xgap=2, ygap=2, hoverongaps=False,
        colorbar={"title": {"text": unit}, "thickness": 12, "outlinewidth": 0}, **zrange,
        hovertemplate="%{y} · %{x}<br>%{text}<extra></extra>",
    ))
    # half-width charts: the series on a second, smaller line keeps the title clear of plotly's toolbar
    series = f"<br><span style='font-size:12px;color:#4B5563'>{an.series[0].title}</span>" if _of(an) else ""
    layout = _layout(title + series, "", height=370)
    layout["yaxis"] = {"autorange": "reversed", "showgrid": False, "ticks": ""}
    layout["xaxis"] = {"showgrid": False, "side": "bottom", "ticks": ""}
    layout["margin"] = {"l": 120, "r": 24, "t": 72, "b": 48}
    return fig.update_layout(**layout)


def all_figures(an: Analysis) -> dict[str, go.Figure | None]:
    """Figure id -> figure (None where the data is absent); ids match the report's chart slots."""
    return {
        "fig-ladder": ladder_figure(an),
        "fig-speedup": speedup_figure(an),
        "fig-amortisation": amortisation_figure(an),
        "fig-hit-rate": heatmap_figure(an, headline_rate()),
        "fig-dram": heatmap_figure(an, "dram_read"),
        "fig-roofline": roofline_figure(an),
    }


def figure_json(fig: go.Figure) -> dict[str, Any]:
    """The figure as a plain {data, layout} dict for Plotly.newPlot (plotly's own JSON encoder)."""
    spec = json.loads(fig.to_json())
    return {"data": spec.get("data", []), "layout": spec.get("layout", {})}
