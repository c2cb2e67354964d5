"""The HTML report: one self-contained file from reports/report.html (string.Template slots).

Each section is rendered here as an HTML fragment from the analysis tables; charts are plotly
figure specs collected into one JSON block that a small script at the end of the page draws with
the plotly.js embedded once, inline. Nothing is fetched: the file opens offline.

Table rows carry their `source` as a tooltip (title) and every n/a carries the reason it is
missing, so a reader can trace a number to its CSV rows without leaving the page.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass
from functools import partial
from html import escape
from pathlib import Path
from string import Template
from typing import Any, Callable, Iterable, Sequence

import pandas as pd

from l2attr import __version__
from l2attr.analysis.amortisation import AMORTISATION_PAIRS
from l2attr.analysis.common import is_missing, not_applicable, ordered_profiles, rung_label, why
from l2attr.analysis.load import Study, manifest_first, manifest_value
from l2attr.analysis import attribution
from l2attr.analysis.share import T_STEP_DEFINITION
from l2attr.analysis.study import Analysis, series_view
from l2attr.report import fmt
from l2attr.report.charts import RUNG_COLORS, all_figures, figure_json
from l2attr.resources import data_dir

TEMPLATE_NAME = "report.html"

SECTIONS = (
    ("verdict", "Verdict"), ("ladder", "Latency ladder"), ("speedup", "Pin-charged speedup"),
    ("amortisation", "Amortisation"), ("share", "Share of step time"), ("attribution", "L2 attribution"),
    ("roofline", "Roofline"), ("timeline", "Timeline"), ("caveats", "Caveats"), ("provenance", "Provenance"),
)


# -- small HTML builders -----------------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    html: str               # already escaped
    cls: str = ""
    title: str = ""
    rowspan: int = 1

    def render(self) -> str:
        attrs = ""
        if self.cls:
            attrs += f' class="{self.cls}"'
        if self.title:
            attrs += f' title="{escape(self.title)}"'
        if self.rowspan > 1:
            attrs += f' rowspan="{self.rowspan}"'
        return f"<td{attrs}>{self.html}</td>"


def text(value: Any, cls: str = "", title: str = "") -> Cell:
    return Cell(escape("" if is_missing(value) else str(value)), cls, title)


def na(reason: str) -> str:
    """n/a with the reason as a tooltip; a dash when the field does not apply (e.g. baseline's delta)."""
    if not_applicable(reason):
        return f'<span class="dash" title="{escape(reason)}">—</span>'
    return f'<span class="na" title="{escape(reason or "not measured")}">n/a</span>'


def num(row: pd.Series | dict[str, Any] | None, field: str, formatter: Callable[[Any], str],
        good_above: float | None = None, reason: str = "") -> Cell:
    """A number cell; n/a with the row's reason when missing; green/red around `good_above`."""
    value = None if row is None else row.get(field)
    if row is None or is_missing(value):
        return Cell(na(reason or (why(row, field) if row is not None else "") or "not measured"), "num")
    cls = "num"
    if good_above is not None and isinstance(value, (int, float)) and math.isfinite(value):
        cls += " better" if value > good_above + 1e-9 else " worse" if value < good_above - 1e-9 else ""
    return Cell(escape(formatter(value)), cls)


def rung_cell(rung: str, rowspan: int = 1) -> Cell:
    color = RUNG_COLORS.get(rung, "#9CA3AF")
    return Cell(f'<span class="swatch" style="background:{color}"></span>{escape(rung_label(rung))}',
                "key", rung, rowspan)


def table(headers: Sequence[str | tuple[str, str]], rows: Iterable[tuple[list[Cell], str]],
          groups: Sequence[tuple[str, int]] = (), cls: str = "data") -> str:
    """headers: 'name' or ('name', 'num'); rows: (cells, row tooltip = source); groups: (label, span)."""
    head = ""
    if groups:
        head += '<tr class="group">' + "".join(
            f'<th colspan="{span}" class="{"blank" if not label else ""}">{escape(label)}</th>'
            for label, span in groups) + "</tr>"
    head += "<tr>" + "".join(
        f'<th class="{h[1]}">{escape(h[0])}</th>' if isinstance(h, tuple) else f"<th>{escape(h)}</th>"
        for h in headers) + "</tr>"
    body = []
    for cells, source in rows:
        title = f' title="{escape("from " + source)}"' if source else ""
        body.append(f"<tr{title}>" + "".join(c.render() for c in cells) + "</tr>")
    return (f'<div class="table-scroll"><table class="{cls}"><thead>{head}</thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def section(key: str, title: str, body: str, lead: str = "", sfx: str = "", series: str = "") -> str:
    """A report card; `sfx` makes its id unique per series, `series` names the series in the title."""
    lead_html = f'<p class="lead">{lead}</p>' if lead else ""
    title_html = escape(title) + (f' <span class="series">— {escape(series)}</span>' if series else "")
    return f'<section class="card" id="{key}{sfx}"><h2>{title_html}</h2>{lead_html}{body}</section>'


def series_title(an: Analysis) -> str:
    """The series a per-series view shows (empty for the whole analysis)."""
    if len(an.series) != 1:
        return ""
    head = an.series[0].is_headline_family
    return an.series[0].title + (" · the headline" if head else " · for comparison")


def not_measured(what: str, how: str) -> str:
    return f'<div class="not-measured"><strong>Not measured.</strong> {escape(what)} {how}</div>'


def chart(fig_id: str, figures: dict[str, Any], caption: str, missing_text: str = "", sfx: str = "") -> str:
    if figures.get(fig_id + sfx) is None:
        return not_measured(missing_text or "No data for this chart.", "")
    return f'<div class="chart" id="{fig_id}{sfx}"></div><p class="note">{caption}</p>'


def sources_of(df: pd.DataFrame, table_name: str) -> str:
    """'run-a/cells.csv, run-b/cells.csv': the files a chart was drawn from."""
    if df is None or df.empty or "source" not in df:
        return ""
    files = []
    for s in df["source"]:
        for piece in str(s).split(" + "):
            if f"/{table_name}" in piece:
                f = piece.split("[")[0]
                if f not in files:
                    files.append(f)
    return ", ".join(f"<code>{escape(f)}</code>" for f in files)


# -- sections -----------------------------------------------------------------------------------

def verdict_section(an: Analysis, sfx: str = "") -> str:
    _sec = partial(section, sfx=sfx, series=series_title(an))
    v = an.verdict
    if v.empty:
        return _sec("verdict", "Verdict", not_measured(
            "Neither a latency ladder nor an L2 attribution was found in the inputs.",
            "Run <code>l2attr ladder</code> and <code>l2attr profile</code>."))
    heads = "".join(f"<li><b>{escape(h.split(': ', 1)[0])}</b>: {escape(h.split(': ', 1)[-1])}</li>"
                    for h in v["headline"])
    rows = []
    for rec in v.to_dict("records"):
        rows.append(([
            text(rec["profile"], "key"),
            num(rec, "speedup_kernels", fmt.times, 1.0),
            num(rec, "speedup_wall", fmt.times, 1.0),
            num(rec, "speedup_artifact", fmt.times, 1.0),
            num(rec, "speedup_consumer", fmt.times, 1.0),
            num(rec, "pin_speedup_consumer", fmt.times, 1.0),
            num(rec, "pin_speedup_charged", fmt.times, 1.0),
            num(rec, "share_consumer_pct", fmt.pct, 0.0),
            num(rec, "share_charged_pct", fmt.pct, 0.0),
            num(rec, "break_even_calls", lambda x: "never" if math.isinf(x) else f"{x:.0f} calls"),
            num(rec, "hit_gain_pp", fmt.pp),
        ], rec["source"]))
    body = (f'<ul class="headlines">{heads}</ul>' + table(
        ["Profile", ("pin + consumer kernels", "num"), ("whole call, wall clock", "num"),
         ("artifact's timer, consumer only", "num"), ("consumer kernel only", "num"),
         ("consumer-only", "num"), ("pin-charged", "num"),
         ("consumer-only", "num"), ("pin-charged", "num"),
         ("break-even (vs OptMT)", "num"), ("L2 hit-rate gain", "num")],
        rows,
        groups=[("", 1), ("L2P+OptMT vs baseline, pin charged", 2), ("... pin not charged", 2),
                ("What the pin adds (vs OptMT)", 2),
                ("L2 share of step time", 2), ("Pin amortisation", 1), ("Layer B", 1)])
        + '<dl class="defs">'
        f"<dt>pin + consumer kernels</dt><dd>T<sub>base</sub> / (T<sub>pin</sub> + T<sub>consumer</sub>), "
        f"kernel timer (CUDA events with a GPU spin head start): the GPU time of the whole L2P call.</dd>"
        f"<dt>whole call, wall clock</dt><dd>host clock around pin → stream sync → consumer → sync: what a "
        f"caller waits for (host repeats, interleaved with the device ones).</dd>"
        f"<dt>artifact's timer</dt><dd>the artifact's own number: event → consumer launch → stream sync → "
        f"event, started after the pin and its sync, so the pin is free; it holds the launch latency and "
        f"the sync's round trip (see the ladder's host overhead).</dd>"
        f"<dt>consumer kernel only</dt><dd>T<sub>base</sub> / T<sub>consumer</sub> on the kernel timer: "
        f"the pin is free and the host overhead is left out.</dd>"
        f"<dt>vs OptMT</dt><dd>L2P+OptMT is OptMT plus a pin: this is what pinning alone is worth.</dd>"
        f"<dt>T<sub>step</sub></dt><dd>{escape(T_STEP_DEFINITION)}</dd>"
        f"<dt>hit-rate gain</dt><dd>consumer L2 sector hit rate of L2P+OptMT minus OptMT's, in points "
        f"(Nsight Compute).</dd></dl>")
    return _sec("verdict", "Verdict", body,
                   "Per reuse profile: the L2-pinning speedup with the pin charged, next to the same speedup "
                   "as the artifact timed it (consumer only, its own timer). Pin granularity and kernel "
                   f"family are in the title. L2 state between calls: "
                   f"<b>{escape(an.state)}</b>. Green is better than the comparand, red worse.")


def ladder_section(an: Analysis, figures: dict[str, Any], sfx: str = "") -> str:
    _sec = partial(section, sfx=sfx, series=series_title(an))
    if an.ladder.empty:
        return _sec("ladder", "Latency ladder (layer A)", not_measured(
            "No ladder run among the inputs.", "Run <code>l2attr ladder</code> and pass its run dir."))
    body = chart("fig-ladder", figures,
                 f"Median consumer-kernel latency (CUDA events) per rung; error bars: bootstrap 95% CI of the "
                 f"median. From {sources_of(an.state_rows(an.ladder), 'cells.csv')}.", sfx=sfx)
    body += _ladder_table(an.state_rows(an.ladder))
    bases = sorted({b for b in an.ladder["kernels_basis"] if b})
    if bases:
        body += f'<p class="note">pin + consumer: {escape("; ".join(bases))}.</p>'
    others = an.ladder[an.ladder["l2_state"] != an.state]
    if not others.empty:
        body += "<details><summary>Other L2 states</summary>" + "".join(
            f"<h3>L2 state: {escape(s)}</h3>" + _ladder_table(others[others["l2_state"] == s])
            for s in sorted(set(others["l2_state"]))) + "</details>"
    if not an.spread.empty:
        rows = [([text(r["timer"], "key"), num(r, "cells", fmt.count), num(r, "repeats", fmt.count),
                  num(r, "median_spread_pct", fmt.pct), num(r, "worst_spread_pct", fmt.pct), text(r["worst_cell"])],
                 "samples.csv") for r in an.spread.to_dict("records")]
        body += ("<h3>Run-to-run spread of the medians</h3>" + table(
            ["Timer", ("cells", "num"), ("repeats", "num"), ("median spread", "num"), ("worst", "num"), "worst cell"],
            rows) + '<p class="note">(max − min) / mean of each cell\'s per-repeat medians. A difference between '
            "rungs smaller than its timer's spread is noise. Device repeats carry the kernel timer, host repeats "
            "(interleaved with them) the artifact's timer and the wall clock.</p>")
    overhead = an.state_rows(an.ladder)["host_overhead_us"].dropna()
    if len(overhead):
        body += (f'<p class="note">Host overhead per launch = the artifact\'s timer minus the consumer '
                 f"kernel time: median {overhead.median():.1f} µs (range {overhead.min():.1f} to "
                 f"{overhead.max():.1f} µs over the cells above): the launch latency and the round trip "
                 f"through the stream sync that the artifact's number holds.</p>")
    return _sec("ladder", "Latency ladder (layer A)", body,
                   "Each rung adds one technique to the rung below it (Δ is the marginal change of the "
                   "consumer kernel). Speedups are over the baseline of the same family and profile.")


def _ladder_table(lad: pd.DataFrame) -> str:
    rows = []
    for profile in ordered_profiles(lad["profile"]):
        group = lad[lad["profile"] == profile]
        for i, rec in enumerate(group.to_dict("records")):
            cells = [Cell(escape(profile), "key first-of-group", rowspan=len(group))] if i == 0 else []
            below = rec["below"] if isinstance(rec["below"], str) else None
            delta = num(rec, "delta_consumer_us", fmt.us_signed)
            if not is_missing(rec["delta_consumer_pct"]):
                delta = Cell(escape(f"{fmt.us_signed(rec['delta_consumer_us'])} ({rec['delta_consumer_pct']:+.1f} %)"),
                             "num", f"vs {rung_label(below)}" if below else "")
            cells += [
                rung_cell(rec["rung"]),
                Cell(escape(fmt.ci(rec["consumer_us"], rec["consumer_ci_lo_us"], rec["consumer_ci_hi_us"]))
                     if not is_missing(rec["consumer_us"]) else na(why(rec, "consumer_us")), "num"),
                Cell(escape(rung_label(below)) if below else na(why(rec, "delta_consumer_us"))),
                delta,
                num(rec, "artifact_us", fmt.us),
                num(rec, "host_overhead_us", fmt.us_signed),
                num(rec, "pin_us", fmt.us),
                num(rec, "kernels_us", fmt.us),
                num(rec, "wall_us", fmt.us),
                num(rec, "speedup_consumer", fmt.times, 1.0),
                num(rec, "speedup_artifact", fmt.times, 1.0),
                num(rec, "speedup_kernels", fmt.times, 1.0),
                num(rec, "speedup_wall", fmt.times, 1.0),
            ]
            if i == 0:
                cells[1:] = [Cell(c.html, (c.cls + " first-of-group").strip(), c.title, c.rowspan) for c in cells[1:]]
            rows.append((cells, rec["source"]))
    return table(["Profile", "Rung", ("Consumer median [95% CI]", "num"), "Below", ("Δ consumer vs below", "num"),
                  ("artifact's timer", "num"), ("host overhead", "num"),
                  ("Pin", "num"), ("Pin + consumer", "num"), ("Call wall", "num"),
                  ("consumer", "num"), ("artifact's timer", "num"), ("pin + consumer", "num"),
                  ("wall clock", "num")], rows,
                 groups=[("", 10), ("Speedup over baseline", 4)])


def speedup_section(an: Analysis, figures: dict[str, Any], sfx: str = "") -> str:
    _sec = partial(section, sfx=sfx, series=series_title(an))
    if an.ladder.empty:
        return _sec("speedup", "Pin-charged vs consumer-only speedup", not_measured(
            "No ladder run among the inputs.", "Run <code>l2attr ladder</code>."))
    body = chart("fig-speedup", figures,
                 "Solid: the artifact's consumer-only speedup. Hatched: pin + consumer kernel time charged. "
                 "Cross-hatched: whole-call wall clock (includes the stream sync between pin and consumer).",
                 "No pinning rung (L2P+OptMT, RPF+L2P+OptMT) was measured.", sfx=sfx)
    return _sec("speedup", "Pin-charged vs consumer-only speedup", body,
                   "The same measurements, charged three ways. The gap between the solid and the hatched "
                   "bar is the part of the artifact's L2P speedup that the pin kernel pays back.")


def amortisation_section(an: Analysis, figures: dict[str, Any], sfx: str = "") -> str:
    _sec = partial(section, sfx=sfx, series=series_title(an))
    am = an.state_rows(an.amortisation)
    if am.empty:
        return _sec("amortisation", "Amortisation of the pin", not_measured(
            "No ladder run among the inputs.", "Run <code>l2attr ladder</code>."))
    body = chart("fig-amortisation", figures,
                 "speedup(k) = k·T<sub>ref</sub> / (T<sub>pin</sub> + k·T<sub>cons</sub>); diamonds mark the "
                 "break-even call count. Solid: against OptMT (honest); dotted: against the baseline.",
                 "L2P+OptMT and its comparands were not all measured.", sfx=sfx)
    rows = []
    for rec in am.to_dict("records"):
        rows.append(([
            text(rec["profile"], "key"), rung_cell(rec["rung"]),
            Cell(escape(rung_label(rec["comparand"])) + (" <b>(honest)</b>" if rec["honest"] else ""),
                 "", rec["why_comparand"]),
            num(rec, "t_ref_us", fmt.us), num(rec, "t_pin_us", fmt.us), num(rec, "t_cons_us", fmt.us),
            num(rec, "gain_per_call_us", fmt.us),
            num(rec, "break_even_point", lambda x: "∞" if math.isinf(x) else f"{x:.2f}"),
            num(rec, "break_even_calls", lambda x: "never" if math.isinf(x) else f"{x:.0f}"),
            num(rec, "speedup_k1", fmt.times, 1.0), num(rec, "speedup_limit", fmt.times, 1.0),
        ], rec["source"]))
    body += table(["Profile", "Pinning rung", "Comparand", ("T_ref", "num"), ("T_pin", "num"), ("T_cons", "num"),
                   ("Gain per call", "num"), ("k* = T_pin / gain", "num"), ("Break-even calls", "num"),
                   ("Speedup at k = 1", "num"), ("Limit k → ∞", "num")], rows)
    pairs = "".join(f"<li><b>{escape(rung_label(r))} vs {escape(rung_label(c))}</b>: {escape(w)}</li>"
                    for r, c, w in AMORTISATION_PAIRS)
    body += f'<ul class="notes">{pairs}<li>Break-even = smallest whole k with speedup(k) ≥ 1; "never" when the ' \
            f"consumer is not faster than its comparand. The limit for k → ∞ is the consumer-only speedup.</li></ul>"
    return _sec("amortisation", "Amortisation of the pin", body,
                   "If one pin kernel served k consumer calls, how many calls would it take before pinning "
                   "pays for itself? (The artifact pins before every call: k = 1.)")


def share_section(an: Analysis, sfx: str = "") -> str:
    _sec = partial(section, sfx=sfx, series=series_title(an))
    sh = an.state_rows(an.share)
    if sh.empty:
        return _sec("share", "L2 share of step time", not_measured(
            "No ladder run with OptMT and L2P+OptMT among the inputs.", "Run <code>l2attr ladder</code>."))
    rows = []
    for rec in sh.to_dict("records"):
        rows.append(([
            text(rec["profile"], "key"), num(rec, "t_step_us", fmt.us),
            num(rec, "t_cons_optmt_us", fmt.us), num(rec, "t_cons_l2p_us", fmt.us), num(rec, "t_pin_l2p_us", fmt.us),
            num(rec, "saving_consumer_us", fmt.us_signed), num(rec, "share_consumer_pct", fmt.pct, 0.0),
            num(rec, "saving_charged_us", fmt.us_signed), num(rec, "share_charged_pct", fmt.pct, 0.0),
            num(rec, "share_wall_pct", fmt.pct, 0.0),
        ], rec["source"]))
    body = table(["Profile", ("T_step", "num"), ("T_cons OptMT", "num"), ("T_cons L2P+OptMT", "num"),
                  ("T_pin", "num"), ("saving", "num"), ("share", "num"), ("saving", "num"), ("share", "num"),
                  ("share", "num")], rows,
                 groups=[("", 5), ("consumer-only", 2), ("pin-charged", 2), ("wall clock", 1)])
    body += ('<dl class="defs"><dt>share</dt><dd>(T<sub>cons</sub>(OptMT) − T(L2P+OptMT)) / T<sub>step</sub>, '
             "with T(L2P+OptMT) the consumer alone, the pin + consumer kernels, or the call's wall time.</dd>"
             f"<dt>T<sub>step</sub></dt><dd>{escape(T_STEP_DEFINITION)}</dd></dl>")
    return _sec("share", "L2 share of step time", body,
                   "What cross-kernel L2 residency saves, as a share of the time of one step, before and "
                   "after paying for the pin. A negative share means pinning costs more than it saves.")


def attribution_section(an: Analysis, figures: dict[str, Any], sfx: str = "") -> str:
    _sec = partial(section, sfx=sfx, series=series_title(an))
    title = "L2 attribution (layer B)"
    if an.l2.empty:
        return _sec("attribution", title, not_measured(
            "No profile run (Nsight Compute metrics) of this series among the inputs: DRAM bytes, hit rates and "
            "the pin's traffic are not shown.", "Run <code>l2attr profile</code> and pass its run dir too."))
    rate = attribution.headline_rate()
    src = sources_of(an.l2, "metrics.csv")
    body = "<h3>DRAM bytes per call: pin + consumer against the unpinned consumer</h3>" + _dram_table(an.dram)
    body += ('<p class="note">On GH100 an L2 miss is often served by the other L2 partition (the fabric), not '
             "by DRAM, so DRAM bytes compare across profiles where hit rates do not. Medians over the profiled "
             "calls (one per table of the last measured batch by default); counts summed over each call's "
             "kernels.</p>")
    body += "<h3>Evict-last: what the pin marks, and whose hits land on it</h3>" + _evict_table(an.dram)
    body += "<h3>Roofline from measured traffic</h3>" + _measured_roofline_table(an.measured_roofline)
    body += '<div class="grid2">' + "".join(
        f"<div>{chart(fid, figures, 'Median over the profiled consumer calls of each cell.', what, sfx=sfx)}</div>"
        for fid, what in (("fig-hit-rate", "The read hit and miss counts were not collected."),
                          ("fig-dram", "No DRAM-bytes metric was collected."))) + "</div>"
    body += (f'<p class="note">From {src}. {escape(attribution.label(rate))} = 100 × read sector hits / (hits + '
             f"misses), the counts summed over the call's kernels (metrics/l2.toml, rate "
             f"<code>{escape(rate)}</code>): the one hit rate l2attr prints.</p>")
    body += "<h3>What the pin does to the consumer's L2</h3>" + _compare_table(an.pin_effect)
    body += ("<h3>RPF+OptMT vs L2P+OptMT at the L2 layer</h3><p class=\"note\">The study's Nsight comparison: "
             "register prefetch and explicit pinning as two consumer-side strategies. Gain = L2P+OptMT minus "
             "RPF+OptMT.</p>" + _compare_table(an.rpf_vs_l2p))
    body += "<h3>Hotness gradient</h3>" + _gradient_table(an.gradient)
    body += "<h3>The pin kernel's own traffic</h3>" + _pin_table(an.pin_traffic)
    body += "<h3>All profiled cells</h3>" + _cells_details(an.l2)
    return _sec("attribution", title, body,
                "Nsight Compute counters per role, the consumer (EmbeddingBag) and the pin kernel, summed per "
                "call and summarised per rung × profile by the median over calls (n in the tables). DRAM bytes "
                "first.")


def _dram_table(df: pd.DataFrame) -> str:
    if df.empty:
        return not_measured("No pinning rung with its unpinned comparand was profiled.", "")
    rate = attribution.headline_rate()
    rows = []
    for rec in df.to_dict("records"):
        rows.append(([
            text(rec["profile"], "key"), rung_cell(rec["rung"]),
            num(rec, "pin_dram_read", fmt.nbytes), num(rec, "consumer_dram_read", fmt.nbytes),
            num(rec, "total_dram_read", fmt.nbytes), num(rec, "unpinned_dram_read", fmt.nbytes),
            num(rec, "total_over_unpinned", fmt.ratio), num(rec, "consumer_over_unpinned", fmt.ratio),
            num(rec, "consumer_fill_device", fmt.sectors), num(rec, "consumer_fabric", fmt.sectors),
            num(rec, f"consumer_{rate}", fmt.pct), num(rec, f"unpinned_{rate}", fmt.pct),
        ], rec["source"]))
    return table(["Profile", "Pinning rung", ("pin", "num"), ("consumer", "num"), ("pin + consumer", "num"),
                  ("unpinned consumer", "num"), ("total / unpinned", "num"), ("consumer / unpinned", "num"),
                  ("consumer L2 fills", "num"), ("consumer fabric", "num"), ("consumer", "num"),
                  ("unpinned", "num")], rows,
                 groups=[("", 2), ("DRAM bytes read per call", 6), ("sectors", 2),
                         (attribution.label(rate), 2)])


def _evict_table(df: pd.DataFrame) -> str:
    if df.empty:
        return not_measured("No pinning rung was profiled.", "")
    rows = []
    for rec in df.to_dict("records"):
        rows.append(([
            text(rec["profile"], "key"), rung_cell(rec["rung"]),
            num(rec, "pin_evict_last", fmt.sectors), num(rec, "pin_fill_device", fmt.sectors),
            num(rec, f"consumer_{attribution.EVICT_LAST_SHARE}", fmt.pct),
        ], rec["source"]))
    return table(["Profile", "Pinning rung", ("sectors the pin marks evict_last", "num"),
                  ("sectors the pin fills from DRAM", "num"), ("consumer hits on evict_last (share)", "num")],
                 rows) + (
        '<p class="note">The evict-last counters (<code>lts__t_sectors_aperture_device_evict_last*</code>) '
        "classify L2 lookups by the <em>request's</em> eviction policy: the pin's prefetches count, the "
        "consumer's plain loads never do, so the consumer's share reads 0 whether or not its lines were pinned "
        "(seen on the H200 after the pin, after pin + flush and after pin + persisting-L2 reset: "
        "<code>tests/fixtures/ncu/evict_*.ncu-rep</code>). What the pin bought the consumer is measured "
        "instead by its DRAM bytes and hits against the unpinned comparand above and by the validity "
        "control.</p>")


def _measured_roofline_table(df: pd.DataFrame) -> str:
    if df.empty:
        return not_measured("No consumer cell was profiled.", "")
    rows = []
    for rec in df.to_dict("records"):
        rows.append(([text(rec["profile"], "key"), rung_cell(rec["rung"]), num(rec, "duration_us", fmt.us),
                      num(rec, "dram_GBps", fmt.gbps), num(rec, "dram_fraction", fmt.ratio),
                      num(rec, "l2_GBps", fmt.gbps), num(rec, "l2_fraction", fmt.ratio)], rec["source"]))
    first = df.iloc[0]
    hbm = fmt.gbps(first["hbm_read_GBps"]) if not is_missing(first["hbm_read_GBps"]) else "not measured"
    l2 = fmt.gbps(first["l2_read_GBps"]) if not is_missing(first["l2_read_GBps"]) else "not measured"
    return table(["Profile", "Rung", ("ncu duration", "num"), ("DRAM read", "num"), ("of HBM read peak", "num"),
                  ("L2 delivered", "num"), ("of L2 read peak", "num")], rows) + (
        f'<p class="note">DRAM read = ncu DRAM bytes / ncu duration, over the measured HBM read bandwidth '
        f"({hbm}); L2 delivered = L2 sector lookups × 32 B / duration, over the measured L2 read bandwidth "
        f"({l2}). The logical-bytes view (bytes the consumer must read / CUDA-event time, over the copy "
        "bandwidth) is in the roofline section.</p>")


def _compare_table(df: pd.DataFrame) -> str:
    if df.empty:
        return not_measured("The rungs to compare were not profiled.", "")
    rows = []
    for rec in df.to_dict("records"):
        rows.append(([
            text(rec["profile"], "key"), rung_cell(rec["rung"]), rung_cell(rec["comparand"]),
            num(rec, "hit_rate_pct", fmt.pct), num(rec, "comparand_hit_rate_pct", fmt.pct),
            num(rec, "hit_gain_pp", fmt.pp, 0.0),
            num(rec, "dram_read_bytes", fmt.nbytes), num(rec, "comparand_dram_read_bytes", fmt.nbytes),
            num(rec, "dram_ratio", fmt.ratio),
        ], rec["source"]))
    return table(["Profile", "Rung", "Comparand", ("hit rate", "num"), ("comparand", "num"), ("gain", "num"),
                  ("DRAM read", "num"), ("comparand", "num"), ("ratio", "num")], rows,
                 groups=[("", 3), ("Consumer L2 hit rate", 3), ("Consumer DRAM bytes", 3)])


def _gradient_table(df: pd.DataFrame) -> str:
    if df.empty:
        return not_measured("No consumer cells were profiled.", "")
    rows = []
    for rec in df.to_dict("records"):
        rows.append(([
            rung_cell(rec["rung"]), text(f"{rec['hot_profile'] or 'n/a'} → {rec['cold_profile'] or 'n/a'}"),
            num(rec, "hot_hit_rate_pct", fmt.pct), num(rec, "cold_hit_rate_pct", fmt.pct),
            num(rec, "hit_gap_pp", fmt.pp),
            num(rec, "hot_dram_read_bytes", fmt.nbytes), num(rec, "cold_dram_read_bytes", fmt.nbytes),
            num(rec, "dram_ratio", lambda x: f"{x:.1f}×"),
        ], rec["source"]))
    return table(["Rung", "Hot → cold", ("hit rate hot", "num"), ("cold", "num"), ("gap", "num"),
                  ("DRAM hot", "num"), ("cold", "num"), ("cold / hot", "num")], rows)


def _pin_table(df: pd.DataFrame) -> str:
    if df.empty:
        return not_measured("No pin kernel was profiled (no pinning rung in the profile run).", "")
    rows = []
    for rec in df.to_dict("records"):
        rows.append(([
            rung_cell(rec["rung"]), text(rec["profile"]), num(rec, "n_calls", fmt.count),
            num(rec, "dram_read", fmt.nbytes), num(rec, "hot_set_bytes", fmt.nbytes),
            num(rec, "dram_over_hot_set", lambda x: f"{x:.2f}×"),
            num(rec, "fill_device", fmt.sectors), num(rec, "evict_last", fmt.sectors),
            num(rec, "duration", fmt.ns_as_us),
        ], rec["source"]))
    return table(["Rung", "Profile", ("calls", "num"), ("DRAM read", "num"), ("hot set", "num"),
                  ("read / hot set", "num"), ("L2 fills (sectors)", "num"), ("evict_last sectors", "num"),
                  ("duration (ncu)", "num")], rows) + (
        '<p class="note">Hot set = hot_rows × dim × element size from the workload config: the bytes a '
        "perfect pin pulls once. The pin re-pays this traffic before every call in the artifact.</p>")


def _cells_details(l2: pd.DataFrame) -> str:
    rate = attribution.headline_rate()
    rows = []
    for rec in l2.to_dict("records"):
        rows.append(([
            text(rec["condition"]), text(rec["role"]), rung_cell(rec["rung"]), text(rec["profile"]),
            num(rec, "n_calls", fmt.count), num(rec, rate, fmt.pct), num(rec, "hit_rate", fmt.pct),
            num(rec, "dram_read", fmt.nbytes), num(rec, "dram_read_spread_pct", fmt.pct),
            num(rec, "dram_write", fmt.nbytes), num(rec, "fill_device", fmt.sectors),
            num(rec, "fabric", fmt.sectors), num(rec, "evict_last", fmt.sectors),
            num(rec, "duration", fmt.ns_as_us),
        ], rec["source"]))
    return ("<details><summary>Every profiled cell (condition × role × rung × profile)</summary>" + table(
        ["Condition", "Role", "Rung", "Profile", ("calls", "num"), (attribution.label(rate), "num"),
         ("hit rate, all ops", "num"), ("DRAM read", "num"), ("DRAM spread over calls", "num"),
         ("DRAM write", "num"), ("L2 fills", "num"), ("fabric", "num"), ("evict_last", "num"),
         ("duration", "num")], rows) + "</details>")


def roofline_section(an: Analysis, figures: dict[str, Any], sfx: str = "") -> str:
    _sec = partial(section, sfx=sfx, series=series_title(an))
    roof = an.state_rows(an.roofline)
    if roof.empty:
        return _sec("roofline", "Roofline fraction", not_measured("No ladder run among the inputs.",
                                                                   "Run <code>l2attr ladder</code>."))
    missing_text = ("The ladder run's manifest records no measured HBM copy bandwidth (hbm_copy_GBps)."
                    if an.hbm_copy_GBps is None else "No achieved bandwidth in cells.csv.")
    body = chart("fig-roofline", figures,
                 f"Bytes the consumer must read per call ÷ median latency, over the measured device-to-device "
                 f"copy bandwidth. Above 1: part of the bytes came from L2. From "
                 f"{sources_of(roof, 'cells.csv')}.", missing_text, sfx=sfx)
    rows = []
    for rec in roof.to_dict("records"):
        rows.append(([text(rec["profile"], "key"), rung_cell(rec["rung"]), num(rec, "bytes_per_call", fmt.nbytes),
                      num(rec, "median_us", fmt.us), num(rec, "achieved_GBps", fmt.gbps),
                      num(rec, "hbm_copy_GBps", fmt.gbps), num(rec, "fraction", fmt.ratio)], rec["source"]))
    body += "<details><summary>Roofline table</summary>" + table(
        ["Profile", "Rung", ("bytes per call", "num"), ("median", "num"), ("achieved", "num"),
         ("HBM copy", "num"), ("fraction", "num")], rows) + "</details>"
    return _sec("roofline", "Roofline fraction", body,
                   "How close each consumer gets to the bandwidth this GPU actually delivers.")


def timeline_section(an: Analysis, figures: dict[str, Any]) -> str:
    """Pin -> sync -> consumer in time, from a timeline run (PM sampling over one call range)."""
    tl, ph = an.study.timeline, an.study.phases
    if tl.empty:
        return section("timeline", "Timeline: pin → sync → consumer", not_measured(
            "No timeline run among the inputs.", "Run <code>l2attr profile --timeline</code> and pass its run dir."))
    body = chart("fig-timeline", figures,
                 f"Nsight Compute PM sampling over one NVTX range holding pin → stream sync → consumer "
                 f"(app-range replay). From {sources_of(tl.assign(source=tl['run'] + '/timeline.csv'), 'timeline.csv')}.")
    if not ph.empty:
        rows = [([text(r["phase"], "key"), num(r, "start_us", fmt.us), num(r, "end_us", fmt.us),
                  num(r, "duration_us", fmt.us), num(r, "samples", fmt.count)], f"{r['run']}/phases.csv")
                for r in ph.to_dict("records")]
        body += table(["Phase", ("start", "num"), ("end", "num"), ("duration", "num"), ("samples", "num")], rows)
    return section("timeline", "Timeline: pin → sync → consumer", body,
                   "What the hardware did over one L2P call: the pin's burst, the gap the stream sync leaves, "
                   "the consumer's burst — seen without nsys.")


def caveats_section(an: Analysis) -> str:
    if not an.caveats:
        return section("caveats", "Caveats", "<p>None recorded.</p>")
    items = "".join(
        f'<li><span class="lvl {escape(c.level)}">{escape(c.level)}</span><div>{escape(c.text)}'
        f'<span class="origin">{escape(c.origin)}</span></div></li>' for c in an.caveats)
    return section("caveats", "Caveats", f'<ul class="caveats">{items}</ul>',
                   "What to know before trusting the numbers: the validity control, profiler settings, "
                   "recorded warnings and the analysis' assumptions.")


# (label, places the field may live in a manifest, first found wins)
PROVENANCE_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("kind", ("kind",)), ("status", ("status",)), ("created (UTC)", ("created_utc",)),
    ("command", ("command",)), ("git sha", ("versions.git_sha",)),
    ("source digest", ("versions.source_digest",)), ("l2attr", ("versions.l2attr",)),
    ("python", ("versions.python",)), ("torch", ("versions.torch",)), ("cupy", ("versions.cupy",)),
    ("GPU", ("gpu.name",)), ("chip", ("gpu.chip", "chip")), ("compute capability", ("gpu.compute_capability",)),
    ("L2 size (bytes)", ("gpu.l2_bytes",)), ("persisting L2 max (bytes)", ("gpu.persisting_l2_max_bytes",)),
    ("SMs", ("gpu.sm_count",)), ("driver", ("gpu.driver", "gpu.driver_version")),
    ("CUDA driver API", ("gpu.driver_cuda",)),
    ("HBM copy bandwidth (GB/s)", ("hbm_copy_GBps",)),
    ("kernel families", ("measure.families",)),
    ("rungs", ("measure.rungs", "rungs")), ("profiles", ("measure.profiles", "profiles")),
    ("L2 state", ("measure.l2_state",)), ("repeats", ("measure.repeats",)),
    ("maxrregcount", ("measure.maxrregcount",)),
    ("pin granularity (null: each family's own)", ("measure.pin_granularity",)),
    ("ncu version", ("ncu.version", "versions.ncu")), ("ncu replay mode", ("ncu.replay_mode", "replay_mode")),
    ("ncu cache control", ("ncu.cache_control", "cache_control")),
    ("ncu clock control", ("ncu.clock_control", "clock_control")),
    ("ncu metric set", ("ncu.metric_set", "metric_set")),
    ("ncu replay passes", ("ncu.replay_passes", "replayer_passes")),
    ("validity control", ("validity_control.verdict",)),
)


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _stamp_of(run_name: str) -> str:
    """Run dirs are named <UTC stamp>-<name>; the stamp stands in when the manifest has no time."""
    try:
        return dt.datetime.strptime(run_name[:16], "%Y%m%dT%H%M%SZ").strftime("%Y-%m-%d %H:%M:%S (from the dir name)")
    except ValueError:
        return "unknown"


def provenance_section(an: Analysis) -> str:
    runs = an.study.runs
    rows = []
    for label, places in PROVENANCE_FIELDS:
        dotted = places[0]
        values = [manifest_first(r.manifest, *places) for r in runs]
        if label == "created (UTC)":
            values = [v if v != "unknown" else _stamp_of(r.name) for v, r in zip(values, runs)]
        cells = [Cell(escape(label))]
        for v in values:
            shown = _show(v)
            cells.append(Cell('<span class="na" title="not recorded in the manifest">unknown</span>'
                              if v == "unknown" else
                              f'<span class="mono">{escape(shown)}</span>' if dotted in ("command", "versions.git_sha")
                              else escape(shown)))
        rows.append((cells, ""))
    body = table(["Field"] + [r.name for r in runs], rows, cls="data kv")
    cfg_rows = [([Cell(escape(k)), Cell(escape(_show(v)), "num")], "") for k, v in an.study.config.items()]
    body += "<h3>Workload config</h3>" + table(["Key", ("Value", "num")], cfg_rows, cls="data kv")
    variant_rows = []
    for run in runs:
        variants = run.manifest.get("variants")
        if isinstance(variants, dict):
            for rung, info in variants.items():
                info = info if isinstance(info, dict) else {"value": info}
                variant_rows.append(([Cell(escape(run.name)), Cell(escape(rung), "key"),
                                      Cell(escape(", ".join(f"{k}: {_show(v)}" for k, v in info.items())))], ""))
    if variant_rows:
        body += "<h3>Compiled variants</h3>" + table(["Run", "Variant (family/rung/pin)", "Properties"],
                                                     variant_rows)
    return section("provenance", "Provenance", body,
                   "Where these numbers come from: each run's manifest (hover a table row above for the exact "
                   "CSV rows behind it).")


# -- page ---------------------------------------------------------------------------------------

def _subtitle(study: Study) -> str:
    c = study.config

    def g(k: str) -> str:
        v = c.get(k, "?")
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)

    return escape(f"DLRM EmbeddingBag · {g('tables')} tables × {g('rows')} rows × {g('dim')} {g('dtype')} · "
                  f"batch {g('batch_size')} · pooling {g('pooling')} · {g('hot_rows')} hot rows pinned")


def _meta(an: Analysis, generated: str) -> str:
    study = an.study
    gpus = sorted({str(manifest_value(r.manifest, "gpu.name")) for r in study.runs})
    items = [("GPU", ", ".join(gpus)),
             ("runs", ", ".join(f"{r.name} ({r.kind})" for r in study.runs)),
             ("L2 state", an.state), ("generated", generated)]
    return '<ul class="meta">' + "".join(f"<li><b>{escape(k)}</b> {escape(v)}</li>" for k, v in items) + "</ul>"


def _banner(an: Analysis) -> str:
    errors = [c for c in an.caveats if c.level == "error"]
    if not errors:
        return ""
    items = "".join(f"<li>{escape(c.text)}</li>" for c in errors)
    return (f'<div class="banner error" role="alert"><strong>Read this first: the setup may not see '
            f"cross-kernel L2 effects.</strong><ul>{items}</ul></div>")


def _script_safe_json(obj: Any) -> str:
    """JSON that cannot end the <script> element it sits in."""
    return json.dumps(obj, separators=(",", ":"), allow_nan=False).replace("</", "<\\/").replace("<!--", "<\\!--")


def load_template() -> Template:
    return Template((data_dir("reports") / TEMPLATE_NAME).read_text(encoding="utf-8"))


def render_html(an: Analysis, now: dt.datetime | None = None, plotly_js: str | None = None) -> str:
    """The whole report as one HTML string (plotly.js inline once; pass plotly_js='' to leave it out)."""
    if plotly_js is None:
        from plotly.offline import get_plotlyjs
        plotly_js = get_plotlyjs()
    now = now or dt.datetime.now(dt.timezone.utc)
    generated = now.strftime("%Y-%m-%d %H:%M UTC")
    views = [(f"-{i}", series_view(an, s)) for i, s in enumerate(an.series)] or [("", an)]
    figures: dict[str, Any] = {}
    for sfx, view in views:
        figures.update({fid + sfx: fig for fid, fig in all_figures(view).items()})
    if not an.study.timeline.empty:
        from l2attr.report.timeline_chart import timeline_figure

        figures["fig-timeline"] = timeline_figure(an.study.timeline, an.study.phases)
    specs = {fid: figure_json(fig) for fid, fig in figures.items() if fig is not None}

    def each(render: Callable[..., str], *with_figures: bool) -> str:
        return "".join(render(view, figures, sfx=sfx) if with_figures else render(view, sfx=sfx)
                       for sfx, view in views)

    gpu = ", ".join(sorted({str(manifest_value(r.manifest, "gpu.name")) for r in an.study.runs}))
    per_series = {"verdict", "ladder", "speedup", "amortisation", "share", "attribution", "roofline"}
    toc = "<ul>" + "".join(
        f'<li><a href="#{k}{views[0][0] if k in per_series else ""}">{escape(t)}</a></li>'
        for k, t in SECTIONS) + "</ul>"
    slots = {
        "title": escape(f"How much is L2 pinning worth? — {gpu}"),
        "subtitle": _subtitle(an.study),
        "meta": _meta(an, generated),
        "banner": _banner(an),
        "toc": toc,
        "verdict": each(verdict_section),
        "ladder": each(ladder_section, True),
        "speedup": each(speedup_section, True),
        "amortisation": each(amortisation_section, True),
        "share": each(share_section),
        "attribution": each(attribution_section, True),
        "roofline": each(roofline_section, True),
        "timeline": timeline_section(an, figures),
        "caveats": caveats_section(an),
        "provenance": provenance_section(an),
        "footer": escape(f"l2attr {__version__} · generated {generated} · self-contained: opens offline"),
        "figures_json": _script_safe_json(specs),
        "plotly_js": plotly_js.replace("</script", "<\\/script"),
        "version": escape(__version__),
    }
    return load_template().substitute(slots)


def write_html(an: Analysis, path: Path) -> Path:
    from l2attr import atomic
    atomic.write_text(Path(path), render_html(an))
    return Path(path)
