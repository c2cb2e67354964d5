"""Plotly figures of the sweep chapters: one per sweep and kernel family, from the analysis tables.

Speedups are against OptMT (the pin is all that L2P+OptMT adds); a dashed line marks 1. The
amortisation chart draws the measured curve (solid: interleaved, the artifact's loop; dotted:
back to back), the formula's extrapolation from k = 1 (thin dashed) and a diamond at each
measured break-even k. Charts with device limits mark them (persisting-L2 max, L2 size).
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from l2attr.analysis.sweep import SweepAnalysis
from l2attr.analysis.sweep_load import SweepRun
from l2attr.report.charts import _clean, _layout, _legend_below, _one_line, break_even_labels, profile_color
from l2attr.vocab import Arm, Order, SweepAxis

MiB = 1 << 20


def _vline(x: float, text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    shape = {"type": "line", "xref": "x", "x0": x, "x1": x, "yref": "paper", "y0": 0, "y1": 1,
             "line": {"color": "#6B7280", "width": 1, "dash": "dot"}}
    note = {"xref": "x", "x": x, "yref": "paper", "y": 1, "yanchor": "bottom", "text": text, "showarrow": False,
            "font": {"size": 10, "color": "#374151"}}
    return shape, note


def amortisation(an: SweepAnalysis, family: str) -> go.Figure | None:
    c = an.table[an.table["family"] == family]
    if c.empty:
        return None
    fig = go.Figure()
    breaks = []
    for profile, g in c.groupby("profile", sort=False):
        color = profile_color(profile)
        for order, dash in ((Order.INTERLEAVED.value, "solid"), (Order.BACK_TO_BACK.value, "dot")):
            o = g[g["order"] == order].sort_values("k")
            if o.empty:
                continue
            fig.add_scatter(x=_clean(o["k"]), y=_clean(o["speedup_kernel"]), mode="lines+markers",
                            name=f"{profile} · {order.replace('_', ' ')}", line={"color": color, "dash": dash},
                            hovertemplate=f"{profile} · {order}<br>k = %{{x}}<br>%{{y:.2f}}× (kernel-charged)"
                                          "<extra></extra>")
            hit = o[o["speedup_kernel"] >= 1.0]
            if order == Order.INTERLEAVED.value and not hit.empty:
                k, y = float(hit["k"].iloc[0]), float(hit["speedup_kernel"].iloc[0])
                breaks.append((profile, k, y))
                fig.add_scatter(x=[k], y=[y], mode="markers", showlegend=False, hoverinfo="skip",
                                marker={"color": color, "size": 11, "symbol": "diamond",
                                        "line": {"color": "#FFFFFF", "width": 1}})
        inter = g[g["order"] == Order.INTERLEAVED.value].sort_values("k")
        if not inter.empty and inter["formula_speedup"].notna().any():
            fig.add_scatter(x=_clean(inter["k"]), y=_clean(inter["formula_speedup"]), mode="lines",
                            name=f"{profile} · formula from k = 1", line={"color": color, "dash": "dash", "width": 1},
                            opacity=0.7)
    shape, note = _one_line(1.0, "break-even")
    layout = _layout(f"Measured amortisation · {family}: L2P+OptMT over OptMT, pin + k calls charged",
                     "speedup over OptMT (×)", height=460, shapes=[shape],
                     annotations=[note, *break_even_labels(breaks)])
    layout["xaxis"] = {**layout["xaxis"], "type": "log", "title": {"text": "consumer calls per pin (k)"},
                       "tickvals": sorted(set(int(k) for k in c["k"]))}
    return fig.update_layout(**_below_axis_title(_legend_below(layout)))


def _lines(an: SweepAnalysis, family: str, x: str, series: list[tuple[str, str, str]], title: str,
           xtitle: str, xlog: bool = False, vlines: list[tuple[float, str]] = ()) -> go.Figure | None:
    t = an.table[an.table["family"] == family]
    if t.empty:
        return None
    fig = go.Figure()
    for profile, g in t.groupby("profile", sort=False):
        g = g.sort_values(x)
        for column, label, dash in series:
            fig.add_scatter(x=_clean(g[x]), y=_clean(g[column]), mode="lines+markers", name=f"{profile} · {label}",
                            line={"color": profile_color(profile), "dash": dash},
                            hovertemplate=f"{profile} · {label}<br>%{{x}}<br>%{{y:.2f}}<extra></extra>")
    shape, note = _one_line(1.0, "OptMT")
    shapes, notes = [shape], [note]
    for vx, text in vlines:
        s, n = _vline(vx, text)
        shapes.append(s)
        notes.append(n)
    layout = _layout(f"{title} · {family}", "speedup over OptMT (×)", height=440, shapes=shapes, annotations=notes)
    layout["xaxis"] = {**layout["xaxis"], "title": {"text": xtitle}, **({"type": "log"} if xlog else {})}
    return fig.update_layout(**_below_axis_title(_legend_below(layout)))


def _below_axis_title(layout: dict[str, Any]) -> dict[str, Any]:
    """The legend under the x axis title, not on it (the capacity chart's title sat in its legend)."""
    layout["legend"] = {**layout["legend"], "y": -0.26}
    layout["margin"] = {**layout["margin"], "b": 150}
    return layout


def _limits(run: SweepRun) -> list[tuple[float, str]]:
    out = []
    persist, l2 = run.limit("persistingL2CacheMaxSize"), run.limit("l2CacheSize")
    if persist:
        out.append((persist / MiB, f"persisting max {persist / MiB:g} MiB"))
    if l2:
        out.append((l2 / MiB, f"L2 {l2 / MiB:g} MiB"))
    return out


def figures(an: SweepAnalysis, prefix: str) -> dict[str, go.Figure]:
    """Figure id -> figure for every family of the sweep (ids `<prefix>-<family>`)."""
    out: dict[str, go.Figure | None] = {}
    families = list(dict.fromkeys(an.table["family"])) if not an.table.empty else []
    for fam in families:
        fid = f"{prefix}-{fam}"
        if an.axis == SweepAxis.AMORTISATION:
            out[fid] = amortisation(an, fam)
        elif an.axis == SweepAxis.HOTSET:
            out[fid] = _lines(an, fam, "hot_mib", [("speedup_charged", "pin-charged", "solid"),
                                                   ("speedup_consumer", "consumer only", "dot")],
                              "Hot-set size", "hot rows pinned (MiB)", vlines=_limits(an.run))
        elif an.axis == SweepAxis.WINDOW:
            t = an.table[an.table["arm"] == Arm.WINDOW.value]
            sub = SweepAnalysis(an.run, an.axis, t, an.reading)
            out[fid] = _lines(sub, fam, "hit_ratio", [("speedup_vs_optmt", "window vs OptMT", "solid"),
                                                      ("speedup_vs_remap", "window vs remap alone", "dot")],
                              "Access-policy window", "hitRatio")
        elif an.axis == SweepAxis.CAPACITY:
            out[fid] = _lines(an, fam, "effective_l2_mib", [("speedup_charged", "pin-charged", "solid"),
                                                            ("speedup_consumer", "consumer only", "dot")],
                              "Effective L2 capacity", "effective L2 (MiB; 40 = A100)")
        else:
            out[fid] = _lines(an, fam, "pollute_mib", [("speedup_consumer", "consumer only", "solid"),
                                                       ("speedup_charged", "pin-charged", "dot")],
                              "Pollution between pin and consumer", "MiB streamed between pin and consumer")
    return {k: v for k, v in out.items() if v is not None}


__all__ = ["figures"]
