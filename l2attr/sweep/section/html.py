"""The sweep chapters of the HTML report: one card per sweep run (reports/sections/sweep.html.j2),
drawn inside the ladder report or, when only sweeps are given, on their own page
(reports/sweeps.html.j2)."""

from __future__ import annotations

from collections import Counter

import datetime as dt
from typing import Any

from markupsafe import Markup

from l2attr import __version__
from l2attr.sweep.analyse.judge import SweepAnalysis
from l2attr.integrity.manifest import undeclared
from l2attr.manifest_model import recorded
from l2attr.report.html import drawable
from l2attr.report.charts import figure_json
from l2attr.report.columns import Cell, Table, cell_table
from l2attr.sweep.section.chart import figures
from l2attr.sweep.section.text import break_even_rows, check_lines, columns_of, has_break_even

TEXT_HEADERS = {"family", "profile", "order", "arm", "rule (95 % intervals)"}


def _table(headers: list[str], rows: list[list[str]]) -> Table:
    """Text columns left, numbers right; 'n/a' cells carry why."""
    cls = ["" if h in TEXT_HEADERS else "num" for h in headers]
    heads = list(zip(headers, cls))
    body = [[Cell(v, c, missing="not measured" if v == "n/a" else None) for v, c in zip(r, cls)] for r in rows]
    return cell_table(heads, body)


def section(an: SweepAnalysis, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the section's template fields, its figures as plotly JSON)."""
    sid = f"sweep-{index}"
    figs = drawable({fid: figure_json(f) for fid, f in figures(an, f"fig-{sid}").items()})
    cols = columns_of(an)
    rows = [[f(r.get(c)) for c, _, f in cols] for r in an.table.to_dict("records")]
    be = _table(*break_even_rows(an)) if has_break_even(an) else None
    fields = {"key": "sweep", "id": sid, "sfx": "", "series": "", "title": an.title, "reading": an.reading,
              "note": an.spec.note, "run": an.run.name, "command": str(recorded(an.run.manifest, "command", "")),
              "undeclared": ", ".join(undeclared(an.run.manifest)),
              "figure_list": sorted(figs), "break_even": be, "break_even_note": an.note,
              "check": check_lines(an), "table": _table([h for _, h, _ in cols], rows),
              "damage": list(an.run.damage), "empty": an.table.empty, "lag": " ".join(x for x in (an.lag, an.noisy) if x), "fold": len(rows) > 24,
              "n_rows": len(rows)}
    return fields, figs


def sections(analyses: list[SweepAnalysis]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every sweep's chapter; two sweeps of one axis are told apart by their run in the title (the
    contents would list the same words twice)."""
    out, figs = [], {}
    for i, an in enumerate(analyses):
        fields, f = section(an, i)
        out.append(fields)
        figs.update(f)
    titles = Counter(s["title"] for s in out)
    for s in out:
        if titles[s["title"]] > 1:
            s["title"] = f"{s['title']} ({s['run']})"
    return out, figs


def render_page(analyses: list[SweepAnalysis], now: dt.datetime | None = None, plotly_js: str | None = None,
                notes: list[str] | None = None) -> str:
    """A page of sweep chapters alone (no ladder run among the inputs)."""
    from l2attr.report.html import _script_safe_json, environment

    if plotly_js is None:
        from plotly.offline import get_plotlyjs
        plotly_js = get_plotlyjs()
    generated = (now or dt.datetime.now(dt.timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    secs, figs = sections(analyses)
    gpus = sorted({str(recorded(a.run.manifest, "gpu.name", "unknown GPU")) for a in analyses})
    page = {"title": f"When does L2 residency pay? — {', '.join(gpus)}", "notes": list(notes or []),
            "readings": [(s["title"], s["reading"]) for s in secs],
            "subtitle": _subtitle(analyses), "generated": generated, "sections": secs,
            "toc": [(s["title"].replace("Sweep: ", ""), "#" + s["id"]) for s in secs],
            "footer": f"l2attr {__version__} · generated {generated} · self-contained: opens offline",
            "version": __version__, "figure_ids": set(figs),
            "figures_json": Markup(_script_safe_json(figs)),
            "plotly_js": Markup(plotly_js.replace("</script", "<\\/script"))}
    return environment().get_template("sweeps.html.j2").render(page)


def _subtitle(analyses: list[SweepAnalysis]) -> str:
    from l2attr.report.titles import workload_line

    return " | ".join(dict.fromkeys(workload_line(a.run.config, hot=False) for a in analyses))


__all__ = ["section", "sections", "render_page"]
