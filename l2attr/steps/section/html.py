"""The HTML page of step runs: one index table (a row per step: its answer, the denominator,
the judgement, a link to its section), then the sweep grids and each step's section, folded: a
waterfall of per-kernel savings, the kernel and edge tables (attributed, and measured by selective
eviction).

Everything judged comes from steps/analyse/answer.py; this only lays it out.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import plotly.graph_objects as go
from markupsafe import Markup

from l2attr import __version__
from l2attr.steps.analyse.answer import describe_kernel, top_edges, top_kernels
from l2attr.integrity.manifest import undeclared
from l2attr.manifest_model import recorded
from l2attr.report.charts import figure_json
from l2attr.report.html import page_environment
from l2attr.steps.table import step_name
from l2attr.steps.section.text import (EDGE_HEADERS, SURGERY_HEADERS, anchors, edge_rows, edges_how, graph_line, grids,
                                     index_layout, slug_path, study_lines, surgery_intro, surgery_row)

TEMPLATE = "step.html.j2"
KERNEL_HEADERS = ["kernel (op#index)", "natural µs", "cold µs", "saving µs", "judgement"]     # a per-op run's kernel table


def waterfall(ans: Any, n: int = 15) -> dict[str, Any] | None:
    k = top_kernels(ans, n)
    if k.empty:
        return None
    labels = [describe_kernel(r)[:48] for r in k.to_dict("records")]
    fig = go.Figure(go.Waterfall(x=[*labels, "total (flushed kernels)"], y=[*k["saving_us"], 0.0],
                                 measure=[*["relative"] * len(k), "total"]))
    fig.update_layout(height=420, margin={"t": 30, "l": 60, "r": 20, "b": 160},
                      yaxis_title="cold - natural kernel time (µs, median)", showlegend=False)
    return figure_json(fig)


def card(ans: Any, i: int, anchor: str = "", where: str = "") -> dict[str, Any]:
    m = ans.manifest
    name = step_name(ans)
    top = top_kernels(ans, 15)
    every: list[list[str]] = []
    if "write_back_bound_us" in top.columns:          # graph surgery: both cold readings and the write-back bound
        kern, kern_headers = [surgery_row(r) for r in top.to_dict("records")], SURGERY_HEADERS
        by_node = ans.kernels.sort_values("node") if "node" in ans.kernels else ans.kernels
        every = [surgery_row(r) for r in by_node.to_dict("records")] if len(by_node) > len(top) else []
        title = ("Kernels with the largest saving (median µs; every kernel met its own flush node; write-back ≤ is "
                 "dirty-cold - clean-cold: at most that much of the kernel's natural time is its predecessors' "
                 "write-back)")
    else:
        kern = [[describe_kernel(r), f"{r['natural_us']:.2f} [{r['natural_lo']:.2f}, {r['natural_hi']:.2f}]",
                 f"{r['cold_us']:.2f} [{r['cold_lo']:.2f}, {r['cold_hi']:.2f}]", f"{r['saving_us']:+.2f}", r["judgement"]]
                for r in top.to_dict("records")]
        kern_headers = KERNEL_HEADERS
        title = "Kernels with the largest saving (median µs [95 % CI]; only an op's first kernel meets the flush)"
    edges = [[f"{r['producer_op']}#{r['producer']}", f"{r['consumer_op']}#{r['consumer']}", f"{r['bytes'] / 1e6:.2f}",
              f"{r['attributed_saving_us']:+.2f}"] for r in top_edges(ans, ans.ops, 15).to_dict("records")]
    return {"name": name, "headline": ans.headline(), "chart": f"step-chart-{i}", "id": anchor or f"step-{i}",
            "where": where, "judgement": ans.judgement, "kernels": kern, "edges": edges,
            "measured": edge_rows(ans, 15), "edges_method": edges_how(m), "graph": surgery_intro(ans) if "write_back_bound_us" in top.columns else graph_line(ans),
            "measured_headers": EDGE_HEADERS, "kernel_headers": kern_headers, "kernel_title": title, "every": every,
            "identity": [*{"GPU": f"{recorded(m, 'gpu.name', '?')} {recorded(m, 'gpu.uuid', '')}",
                           "host": recorded(m, "gpu.host", "?"), "cold arm": recorded(m, "cold", "?"),
                           "command": recorded(m, "command", "?")}.items(),
                         *[("fields no rule declares (kept, not read)", ", ".join(odd)) for odd in [undeclared(m)] if odd]]}


def index(answers: list[Any], ids: list[str], where: list[str]) -> dict[str, Any]:
    """The index table: StepAnswer.index_row() of each step under report.step_text.index_columns,
    the step's name linking to its section, with its run dir and its answer's first line (a caveat)."""
    rows = [a.index_row() for a in answers]
    cols, said = index_layout(rows)
    body = [{"id": i, "where": w, "note": _first_line(a.note),
             "cells": [(c.link, c.text(r), c.right) for c in cols]} for a, r, i, w in zip(answers, rows, ids, where)]
    return {"headers": [(c.header, c.right) for c in cols], "rows": body, "said": said}


def _first_line(note: str) -> str:
    """The line of an answer's first lines the index shows: a caveat where there is one."""
    lines = note.splitlines()
    return next((x for x in lines if x.startswith("Caveat")), lines[0] if lines else "")


def render(answers: list[Any], paths: list[Any] | None = None) -> str:
    from plotly.offline import get_plotlyjs

    env = page_environment()
    paths = list(paths) if paths else [None] * len(answers)
    known = [p for p in paths if p is not None]
    ids = anchors(known) if len(known) == len(answers) else [f"step-{i}" for i in range(len(answers))]
    where = [slug_path(p, known) for p in known] if len(known) == len(answers) else [""] * len(answers)
    cards = [card(a, i, ids[i], where[i]) for i, a in enumerate(answers)]
    figures = {c["chart"]: f for a, c in zip(answers, cards) if (f := waterfall(a)) is not None}
    for c in cards:
        c["has_chart"] = c["chart"] in figures
    return env.get_template(TEMPLATE).render(
        title="l2attr: what is inter-kernel L2 reuse worth in a step?", cards=cards, version=__version__,
        index=index(answers, ids, where), study=study_lines(answers),
        grids=grids([(p, a) for p, a in zip(paths, answers)]),
        generated=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        figures_json=Markup(json.dumps(figures).replace("</", "<\\/")), plotly_js=Markup(get_plotlyjs()))
