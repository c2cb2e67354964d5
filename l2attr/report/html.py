"""The HTML report: one self-contained page from the Jinja2 templates in reports/.

Python prepares data, the templates hold the structure. report/columns turns analysis frames into
tables of formatted cells (each row's `source` becomes its tooltip, each n/a carries its reason);
html_sections, html_layer_b and provenance give every section its fields; charts gives the
plotly figure specs. reports/base.html.j2 lays out the page, reports/sections/<key>.html.j2
draws one section and reports/macros.html.j2 the pieces they share. Autoescaping is on: only the
figure JSON and plotly.js pass unescaped, both made safe for the <script> they sit in.

The page answers first: right under the title, one line (ladders.analyse.answer: does the pin pay once
charged, per family) and the one chart that shows it (answer_chart); the per-series detail
follows, each sentence once, every card folded (a <details>) so the page opens short. A fast-family
card speaks its own rung names: they come in as data (dlrm.declare's rung_labels, read by
analysis.common.rung_label and titles.rung_names), never by rewriting text. Charts are drawn from
one JSON block by a small script at the end of the page with the plotly.js embedded once, inline.
Nothing is fetched: the file opens offline.

Here too: the Jinja2 environments of every HTML page (the experiment and step pages' included),
and the check that a figure has anything to draw (the sweep chapters use it as well).
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import json
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
from markupsafe import Markup

from l2attr import __version__
from l2attr.analysis.load import Study, manifest_value
from l2attr.study.study import Analysis, series_view
from l2attr.report import registry
from l2attr.report.answer_chart import answer_figures
from l2attr.report.charts import all_figures, figure_json
from l2attr.report.titles import rung_names, series_title, view_family
from l2attr.source import REPORTS_DIR, data_dir

BASE_TEMPLATE = "base.html.j2"


# the report's sections, in page order (report/registry.py); re-exported for the callers of old
SECTION_SPECS, SECTIONS, SectionSpec = registry.SECTION_SPECS, registry.SECTIONS, registry.SectionSpec


series_family = view_family      # the family a one-series view shows (its card's words)


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """One environment per process: jinja2 caches compiled templates per environment (compiling
    them is a third of a small report's render), and still re-reads a template file that changed."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(data_dir(REPORTS_DIR))), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env


@functools.lru_cache(maxsize=1)
def page_environment() -> jinja2.Environment:
    """The environment of the experiment and step pages (experiment/section.py, steps/section/html.py),
    made once per process for the same reason."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(data_dir(REPORTS_DIR))),
                              autoescape=jinja2.select_autoescape(["html", "j2"]), undefined=jinja2.StrictUndefined)


def _script_safe_json(obj: Any) -> str:
    """JSON that cannot end the <script> element it sits in."""
    return json.dumps(obj, separators=(",", ":"), allow_nan=False).replace("</", "<\\/").replace("<!--", "<\\!--")


def _figures(an: Analysis, views: list[tuple[str, Analysis]]) -> dict[str, Any]:
    """Figure id (per-series ids end in the series' suffix) -> plotly spec, for the charts with data."""
    figures: dict[str, Any] = dict(answer_figures(an.verdict, an.series))
    for sfx, view in views:
        for fid, fig in all_figures(view).items():
            figures[fid + sfx] = fig
    if not an.study.timeline.empty:
        from l2attr.report.timeline_chart import timeline_figure

        figures["fig-timeline"] = timeline_figure(an.study.timeline, an.study.phases)
    return drawable({fid: figure_json(fig) for fid, fig in figures.items() if fig is not None})


def _sections(an: Analysis, views: list[tuple[str, Analysis]]) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Every section in page order, per series where it is per series; and the table of contents."""
    out: list[dict[str, Any]] = []
    toc: list[tuple[str, str]] = []
    for spec in registry.SECTION_SPECS:
        drawn = []
        for sfx, view in views if spec.per_series else [("", an)]:
            fields = spec.fields(view)
            if fields is not None:
                drawn.append({"title": spec.title, **fields, "key": spec.key, "id": spec.key + sfx, "sfx": sfx,
                              "template": f"sections/{'generic' if spec.generic else spec.key}.html.j2",
                              "series": series_title(view) if spec.per_series else "",
                              "family": series_family(view) if spec.per_series else "",
                              "n": rung_names(series_family(view) if spec.per_series else "")})
        if drawn:
            toc.append((spec.title, "#" + drawn[0]["id"]))
            out += drawn
    return out, toc


def _subtitle(study: Study) -> str:
    from l2attr.report.titles import workload_line

    return workload_line(study.config)


def render_html(an: Analysis, now: dt.datetime | None = None, plotly_js: str | None = None,
                extra: tuple[list[dict[str, Any]], dict[str, Any]] | None = None) -> str:
    """The whole report as one HTML string (plotly.js inline once; pass plotly_js='' to leave it out).

    `extra`: more sections (template fields, each with `key`, `id` and `title`) and their figure
    JSON, drawn before the caveats (the sweep chapters, sweep/section/html.py)."""
    if plotly_js is None:
        from plotly.offline import get_plotlyjs
        plotly_js = get_plotlyjs()
    generated = (now or dt.datetime.now(dt.timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    views = [(f"-{i}", series_view(an, s)) for i, s in enumerate(an.series)] or [("", an)]
    specs = _figures(an, views)
    page_sections, toc = _sections(an, views)
    if extra is not None:
        more, more_figs = extra
        at = next((i for i, sec in enumerate(page_sections) if sec["key"] == "caveats"), len(page_sections))
        page_sections[at:at] = more
        toc_at = next((i for i, (_, href) in enumerate(toc) if href == "#caveats"), len(toc))
        toc[toc_at:toc_at] = [(sec["title"].replace("Sweep: ", "Sweep · "), "#" + sec["id"]) for sec in more]
        specs = {**specs, **more_figs}
    study = an.study
    gpu = ", ".join(sorted({str(manifest_value(r.manifest, "gpu.name")) for r in study.runs}))
    page = {
        "title": f"How much is L2 pinning worth? — {gpu}",
        "answer": registry.ANSWER.fields(an),
        "subtitle": _subtitle(study),
        "meta": [("GPU", gpu), ("runs", ", ".join(f"{r.name} ({r.kind})" for r in study.runs)),
                 ("L2 state", an.state), ("generated", generated)],
        "toc": toc,
        "sections": page_sections,
        "footer": f"l2attr {__version__} · generated {generated} · self-contained: opens offline",
        "version": __version__,
        "figure_ids": set(specs),
        "figures_json": Markup(_script_safe_json(specs)),
        "plotly_js": Markup(plotly_js.replace("</script", "<\\/script")),
    }
    return environment().get_template(BASE_TEMPLATE).render(page)


def write_html(an: Analysis, path: Path) -> Path:
    from l2attr import atomic
    atomic.write_text(Path(path), render_html(an))
    return Path(path)


# -- whether a figure spec has anything to draw: an empty chart is never drawn -------------------
# Why: the fast family's "pin-charged vs consumer-only" charts were drawn with every y value null
# (the family has no baseline rung), so the page showed two empty frames while the browser test
# counted them as drawn. A figure without one finite value in its traces becomes "not measured".

VALUE_KEYS = ("y", "z", "values")     # bars and lines, heatmaps, pies


def _numbers(value: Any) -> np.ndarray:
    """A trace array as floats: plain JSON lists, or plotly's typed arrays ({dtype, bdata})."""
    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value.get("dtype", "f8"))).astype(float)
    if isinstance(value, (list, tuple)):
        flat: list[float] = []
        for v in value:
            if isinstance(v, (list, tuple, dict)):
                flat.extend(_numbers(v).tolist())
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                flat.append(float(v))
        return np.array(flat, dtype=float)
    return np.array([], dtype=float)


def trace_has_data(trace: dict[str, Any]) -> bool:
    key = "x" if trace.get("orientation") == "h" else None
    for k in (key, *VALUE_KEYS):
        if k and k in trace and np.isfinite(_numbers(trace[k])).any():
            return True
    return False


def has_data(spec: dict[str, Any]) -> bool:
    """True when some trace of the {data, layout} spec has a finite value to draw."""
    return any(trace_has_data(t) for t in spec.get("data", []) if isinstance(t, dict))


def drawable(specs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The specs with something to draw; the others' slots say "not measured" (macros.chart)."""
    return {fid: spec for fid, spec in specs.items() if has_data(spec)}

