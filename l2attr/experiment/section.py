"""Experiment runs laid out: the HTML page (the answer first, one chart, then the numbers behind
it) and the Markdown that the README's generated block and `report --format md` share.

Everything judged comes from the kind's analyses (analyse/cells.py, analyse/dram.py); this module only lays
it out, in both formats, beside each other. One page may hold several experiment runs (one card
each); runs measured on different GPUs say so at the top, since their numbers are not one
comparison.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from markupsafe import Markup

from l2attr import __version__
from l2attr.experiment.analyse.dram import describe
from l2attr.experiment.table import ExperimentAnalysis
from l2attr.manifest_model import recorded
from l2attr.report import fmt
from l2attr.report.charts import figure_json
from l2attr.report.fmt import text_table
from l2attr.report.html import page_environment
from l2attr.report.markdown import md_table
from l2attr.vocab import L2Condition, Quantity, Role, Timer

TEMPLATE = "experiment.html.j2"
DRAM_COLUMNS = (("dram_read", "DRAM read", fmt.nbytes), ("dram_write", "DRAM write", fmt.nbytes),
                ("read_hit_rate", "L2 read hit rate", fmt.pct), ("duration", "duration", fmt.ns_as_us),
                ("kernels_per_call", "kernels / call", fmt.count))


def chart(an: ExperimentAnalysis, div: str) -> dict[str, Any] | None:
    """Producer and consumer kernel time per condition (medians, 95 % intervals as error bars)."""
    cells = an.run.cells
    k = cells[cells["timer"] == Timer.KERNEL.value]
    if k.empty:
        return None
    conds = list(dict.fromkeys(k["condition"]))
    fig = go.Figure()
    for q in (Quantity.PRODUCER, Quantity.CONSUMER):
        name = q.value
        part = k[k["quantity"] == q.value].set_index("condition").reindex(conds)
        if part["median_us"].notna().sum() == 0:
            continue
        fig.add_bar(name=name, x=conds, y=part["median_us"],
                    error_y={"type": "data", "symmetric": False,
                             "array": part["ci95_hi_us"] - part["median_us"],
                             "arrayminus": part["median_us"] - part["ci95_lo_us"]})
    fig.update_layout(barmode="stack", height=360, margin={"t": 30, "l": 60, "r": 20, "b": 60},
                      yaxis_title="kernel time per call (µs, median)", legend={"orientation": "h", "y": 1.12})
    return {"id": div, **figure_json(fig)}


def cell_rows(an: ExperimentAnalysis) -> list[list[str]]:
    rows = []
    for r in an.run.cells.to_dict("records"):
        rows.append([r["condition"], r["quantity"], r["timer"], fmt.ci(r["median_us"], r["ci95_lo_us"], r["ci95_hi_us"]),
                     f"{fmt.us(r['p10_us'])} – {fmt.us(r['p90_us'])}", str(int(r["n_samples"])),
                     str(int(r["n_discarded"]))])
    return rows


def dram_rows(an: ExperimentAnalysis) -> tuple[list[str], list[list[str]]]:
    d = an.dram
    if d.empty:
        return [], []
    cols = [(c, label, f) for c, label, f in DRAM_COLUMNS if c in d]
    head = ["condition", "role", "calls", *[label for _, label, _ in cols]]
    rows = [[r["condition"] or "(annotated)", r["role"], str(int(r["calls"])),
             *[f(r[c]) for c, _, f in cols]] for r in d.to_dict("records")]
    return head, rows


def _number(v: Any, spec: str) -> str:
    return "n/a" if v is None or (isinstance(v, float) and not math.isfinite(v)) else format(v, spec)


def card(an: ExperimentAnalysis, i: int) -> dict[str, Any]:
    m = an.run.manifest
    decl = m.get("experiment") or {}
    gpu = m.get("gpu") or {}
    v = an.verdict.iloc[0].to_dict() if not an.verdict.empty else {}
    head, rows = dram_rows(an)
    return {
        "name": decl.get("name") or an.run.path.name, "run": an.run.path.name,
        "headline": v.get("headline", "no timings in this run"),
        "labels": decl.get("labels") or {}, "baseline": decl.get("baseline", ""),
        "conditions": ", ".join(decl.get("conditions", [])),
        "cells": cell_rows(an) if not an.run.cells.empty else [],
        "dram_head": head, "dram": rows,
        "control": describe(an.control) if an.control else "not profiled",
        "break_even": (_number(v.get("break_even_kernel"), ".1f"), _number(v.get("break_even_wall"), ".1f")),
        "chart": f"exp-chart-{i}",
        "identity": list({"GPU": f"{gpu.get('name', '?')} {gpu.get('uuid', '')}", "host": gpu.get("host", "?"),
                          "driver": gpu.get("driver", "?"), "timer": (m.get("timer") or {}).get("kind", "?"),
                          "samples": ", ".join(f"{k} {n}" for k, n in an.discarded.items()) or "all kept",
                          "repeats": an.noisy or ("adaptive" if m.get("adaptive") else "fixed"),
                          "command": m.get("command", "?")}.items()),
    }


def gpu_caveat(analyses: list[ExperimentAnalysis]) -> str:
    ids = {recorded(a.run.manifest, "gpu.uuid", "") for a in analyses}
    if len(ids) > 1:
        return (f"These runs were measured on {len(ids)} different GPUs: each card is its own "
                "measurement, and no number of one card may be compared with another's as one finding.")
    return ""


def render(analyses: list[ExperimentAnalysis]) -> str:
    from plotly.offline import get_plotlyjs

    env = page_environment()
    cards = [card(a, i) for i, a in enumerate(analyses)]
    figures = {c["chart"]: spec for a, c in zip(analyses, cards) if (spec := chart(a, c["chart"])) is not None}
    for c in cards:
        c["has_chart"] = c["chart"] in figures
    figures_json = json.dumps({k: {"data": v["data"], "layout": v["layout"]} for k, v in figures.items()})
    return env.get_template(TEMPLATE).render(
        title="l2attr: what is the L2 handoff worth?", cards=cards, caveat=gpu_caveat(analyses),
        version=__version__, generated=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        figures_json=Markup(figures_json.replace("</", "<\\/")), plotly_js=Markup(get_plotlyjs()))


# -- Markdown ------------------------------------------------------------------------------------
# Every figure comes from analysis over the run dirs named; a test regenerates the README block
# from the committed runs and fails when they disagree.

def _ci(cells, cond: str, q: Quantity, t: Timer) -> str:
    m = cells[(cells["condition"] == cond) & (cells["quantity"] == q.value) & (cells["timer"] == t.value)]
    if m.empty:
        return "—"
    r = m.iloc[0]
    return f"{r['median_us']:.2f} [{r['ci95_lo_us']:.2f}, {r['ci95_hi_us']:.2f}]"


def _dram(an: ExperimentAnalysis, cond: str) -> str:
    d = an.dram
    if d.empty or "dram_read" not in d:
        return "—"
    m = d[(d["condition"] == cond) & (d["role"] == Role.CONSUMER.value)]
    return "—" if m.empty or not math.isfinite(float(m.iloc[0]["dram_read"])) else f"{m.iloc[0]['dram_read'] / 1e6:.2f} MB"


def experiment_markdown(an: ExperimentAnalysis, root: Path | None = None) -> str:
    """One experiment run: its headline, a table per condition, the control, where it ran."""
    m = an.run.manifest
    decl = m.get("experiment") or {}
    gpu = m.get("gpu") or {}
    where = an.run.path.relative_to(root) if root is not None else an.run.path
    lines = [f"**{decl.get('name', where.name)}** (`{where}`, {gpu.get('name', '?')} `{gpu.get('uuid', '?')}`, "
             f"timer {(m.get('timer') or {}).get('kind', '?')})", ""]
    lines += [f"{h}", ""] if not an.verdict.empty and (h := an.verdict.iloc[0]["headline"]) else []
    lines.append(md_table(CONDITION_HEADERS, condition_rows(an), [False, True, True, True, True, True]))
    lines += ["", describe(an.control) if an.control else "validity control: not profiled", ""]
    return "\n".join(lines)


CONDITION_HEADERS = ["condition", "producer kernel µs", "consumer kernel µs", "producer step (wall) µs",
                     "call (wall) µs", "consumer DRAM read"]


def condition_rows(an: ExperimentAnalysis) -> list[list[str]]:
    """Per declared condition: kernel and wall medians [95 % CI], the consumer's DRAM read."""
    cells = an.run.cells
    return [[cond, _ci(cells, cond, Quantity.PRODUCER, Timer.KERNEL), _ci(cells, cond, Quantity.CONSUMER, Timer.KERNEL),
             _ci(cells, cond, Quantity.PRODUCER, Timer.WALL), _ci(cells, cond, Quantity.CALL, Timer.WALL), _dram(an, cond)]
            for cond in recorded(an.run.manifest, "experiment.conditions", [])]


def experiments_text(analyses: list[ExperimentAnalysis]) -> str:
    """`l2attr report --format text` of experiment runs: per run its name, headline and conditions."""
    out = []
    for an in analyses:
        name = recorded(an.run.manifest, "experiment.name")
        head = an.verdict.iloc[0]["headline"] if not an.verdict.empty else "no timings in this run"
        out += [f"{name or an.run.path.name} ({an.run.path.name})", str(head), "",
                text_table(CONDITION_HEADERS, condition_rows(an), [False, True, True, True, True, True]), ""]
    return "\n".join(out)


def experiments_markdown(analyses: list[ExperimentAnalysis], root: Path | None = None) -> str:
    return "\n".join(experiment_markdown(a, root) for a in analyses)


__all__ = ["experiment_markdown", "experiments_markdown", "L2Condition"]
