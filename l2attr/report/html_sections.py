"""What each section of the HTML report shows, as data for its template (reports/sections/).

One function per section takes the analysis (one series' view for the per-series sections) and
returns the template's `sec` fields: tables, formatted figures, file lists and reasons. They
compute nothing (every number comes from l2attr.analysis) and write no HTML; `{"empty": True}`
makes a section say what was not measured and how to measure it.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from l2attr.analysis.calls import headline_rate, label as metric_label
from l2attr.analysis.charges import NOTHING
from l2attr.analysis.amortisation import AMORTISATION_PAIRS
from l2attr.analysis.answer import QUESTION, comparand, headline, overall, pin_answer, scope
from l2attr.analysis.common import is_missing, ordered_profiles, rung_label, why
from l2attr.analysis.share import T_STEP_DEFINITION
from l2attr.analysis.study import Analysis
from l2attr.report import families as fam
from l2attr.report import fmt
from l2attr.report.compare import pairs as compare_pairs, quantity_label
from l2attr.report.charges_text import window_lines
from l2attr.report.html_rows import (
    Cell, Column, dash, grouped_table, key, missing, num, number, plain, rung, sources_of, table, text,
)
from l2attr.vocab import Judgement, Role

Section = dict[str, Any]
EMPTY: Section = {"empty": True}


def says(headline: str) -> tuple[str, str]:
    """('reuse_high (artifact kernels, element pin)', 'L2P+OptMT vs baseline: ...'): a verdict
    sentence split at its first colon, whom it is about and what it says."""
    who, _, rest = headline.partition(": ")
    return (who, rest) if rest else ("", who)


# -- the answer at the top ----------------------------------------------------------------------

def answer(an: Analysis) -> Section:
    """The one-line answer (analysis.answer: does the pin pay once charged, per family), what its
    numbers are taken over, links to the detail, and the error caveats that say whether to trust it."""
    answers = pin_answer(an.verdict)
    return {
        "line": headline(answers, an.verdict),
        "comparand": comparand(answers, an.verdict),
        "question": QUESTION,
        "overall": overall(answers) if answers else "",
        "overall_css": overall(answers).lower().replace(" ", "-") if answers else "",
        "families": [(a.text, a.css) for a in answers],
        "scope": scope(answers, an.verdict),
        "state": an.state,
        "chart": "fig-answer",
        "details": [(s.title, f"#verdict-{i}") for i, s in enumerate(an.series)],
        "errors": [c.text for c in an.caveats if c.level == "error"],
    }


# -- per series ---------------------------------------------------------------------------------

WORD_CLASS = {Judgement.FASTER.value: " better", Judgement.SLOWER.value: " worse"}


def judged(header: str, name: str, judgement: str) -> Column:
    """A speedup coloured by the significance rule's word (never by its ratio alone); 'within
    noise' said in the cell and the noise it was judged against in its tooltip."""
    def cell(r: dict[str, Any]) -> Cell:
        c = num(r, name, fmt.times)
        if c.missing is not None:
            return c
        word = r.get(judgement)
        noise = r.get(judgement.replace("judgement", "noise"), "")
        if word == Judgement.WITHIN_NOISE:
            return c.but(text=f"{c.text} (within noise)", title=f"within noise: {noise}" if noise else "")
        return c.but(cls=c.cls + WORD_CLASS.get(str(word), ""), title=f"{word}, judged against {noise}" if noise else "")
    return Column(header, cell, "num")


def break_even(header: str, name: str, calls_field: str) -> Column:
    """A break-even text ('9 calls', 'never', 'within noise'), n/a with the row's reason."""
    def cell(r: dict[str, Any]) -> Cell:
        said = r.get(name)
        if said in (None, "n/a") or is_missing(said):
            return missing(why(r, calls_field), "num")
        return Cell(f"{said} calls" if str(said).isdigit() else str(said), "num")
    return Column(header, cell, "num")


VERDICT_COLUMNS = (
    key("Profile"),
    judged("pin + consumer kernels", "speedup_kernels", "judgement_kernels"),
    judged("+ the pin step's launch + sync", "speedup_host", "judgement_host"),
    judged("whole call, wall clock", "speedup_wall", "judgement_wall"),
    judged("artifact's timer, consumer only", "speedup_artifact", "judgement_artifact"),
    judged("consumer kernel only", "speedup_consumer", "judgement_consumer"),
    judged("consumer-only", "pin_speedup_consumer", "pin_judgement_consumer"),
    judged("pin-charged", "pin_speedup_charged", "pin_judgement_charged"),
    judged("+ launch + sync", "pin_speedup_host", "pin_judgement_host"),
    number("pin step's launch + sync", "pin_host_us", fmt.us),
    number("consumer-only", "share_consumer_pct", fmt.pct),
    number("pin-charged", "share_charged_pct", fmt.pct),
    break_even("kernel-charged", "break_even", "break_even_calls"),
    break_even("wall-charged (pin step)", "break_even_wall", "break_even_calls_wall"),
    number("L2 hit-rate gain", "hit_gain_pp", fmt.pp),
)
VERDICT_GROUPS = (("", 1), ("L2P+OptMT vs baseline, pin charged", 3), ("... pin not charged", 2),
                  ("What the pin adds (vs OptMT)", 4), ("L2 share of step time", 2),
                  ("Break-even calls per pin (vs OptMT)", 2), ("Layer B", 1))


def verdict(an: Analysis) -> Section:
    v = an.verdict
    if v.empty:
        return EMPTY
    return {"empty": False, "state": an.state, "headlines": [says(h) for h in v["headline"]],
            "table": table(VERDICT_COLUMNS, v, VERDICT_GROUPS), "t_step": T_STEP_DEFINITION,
            "hit_rate_label": metric_label(headline_rate())}


def _ci(r: dict[str, Any]) -> Cell:
    if is_missing(r["consumer_us"]):
        return missing(why(r, "consumer_us"), "num")
    return Cell(fmt.ci(r["consumer_us"], r["consumer_ci_lo_us"], r["consumer_ci_hi_us"]), "num")


def _below(r: dict[str, Any]) -> str | None:
    return r["below"] if isinstance(r["below"], str) else None


def _delta(r: dict[str, Any]) -> Cell:
    if is_missing(r["delta_consumer_pct"]):
        return num(r, "delta_consumer_us", fmt.us_signed)
    below = _below(r)
    return Cell(f"{fmt.us_signed(r['delta_consumer_us'])} ({r['delta_consumer_pct']:+.1f} %)", "num",
                f"vs {rung_label(below)}" if below else "")


LADDER_COLUMNS = (
    key("Profile"), rung(), Column("Consumer median [95% CI]", _ci, "num"),
    Column("Below", lambda r: text(rung_label(_below(r))) if _below(r) else missing(why(r, "delta_consumer_us"))),
    Column("Δ consumer vs below", _delta, "num"),
    number("artifact's timer", "artifact_us", fmt.us), number("host overhead", "host_overhead_us", fmt.us_signed),
    number("Pin", "pin_us", fmt.us), number("Pin + consumer", "kernels_us", fmt.us),
    Column("host charge", lambda r: dash(NOTHING, "num") if r.get("host_charge_name") == NOTHING
           else num(r, "host_charge_us", fmt.us).but(title=str(r.get("host_charge_name") or "")), "num"),
    number("Call wall", "wall_us", fmt.us),
    number(Role.CONSUMER.value, "speedup_consumer", fmt.times),
    number("artifact's timer", "speedup_artifact", fmt.times),
    number("pin + consumer", "speedup_kernels", fmt.times),
    number("+ host charge", "speedup_host", fmt.times), number("wall clock", "speedup_wall", fmt.times),
)
SPREAD_COLUMNS = (
    key("Timer", "timer"), number("cells", "cells", fmt.count), number("repeats", "repeats", fmt.count),
    number("median spread", "median_spread_pct", fmt.pct), number("worst", "worst_spread_pct", fmt.pct),
    Column("worst cell", lambda r: text(r["worst_cell"])),
)


def _ladder_table(lad: pd.DataFrame) -> Any:
    return grouped_table(LADDER_COLUMNS, lad, "profile", ordered_profiles(lad["profile"]),
                         groups=(("", 11), ("Speedup over baseline", 5)))


def ladder(an: Analysis) -> Section:
    if an.ladder.empty:
        return EMPTY
    lad = an.state_rows(an.ladder)
    others = an.ladder[an.ladder["l2_state"] != an.state]
    overhead = lad["host_overhead_us"].dropna()
    return {
        "empty": False, "sources": sources_of(lad, "cells.csv"), "table": _ladder_table(lad),
        "bases": "; ".join(sorted({b for b in an.ladder["kernels_basis"] if b})),
        "windows": window_lines(lad),
        "charges": "; ".join(sorted({str(b) for b in an.ladder.get("pin_step_basis", pd.Series(dtype=str))
                                     if isinstance(b, str) and b})),
        "other_states": [(s, _ladder_table(others[others["l2_state"] == s])) for s in sorted(set(others["l2_state"]))],
        "spread": None if an.spread.empty else table(SPREAD_COLUMNS, an.spread.assign(source="samples.csv")),
        "overhead": None if overhead.empty else {
            "median": f"{overhead.median():.1f}", "lo": f"{overhead.min():.1f}", "hi": f"{overhead.max():.1f}"},
    }


def speedup(an: Analysis) -> Section:
    return {"empty": an.ladder.empty}


AMORTISATION_COLUMNS = (
    key("Profile"), rung("Pinning rung"),
    Column("Comparand", lambda r: Cell(rung_label(r["comparand"]), title=r["why_comparand"],
                                       strong="(honest)" if r["honest"] else "")),
    number("T_ref", "t_ref_us", fmt.us), number("T_pin", "t_pin_us", fmt.us), number("T_cons", "t_cons_us", fmt.us),
    number("Gain per call", "gain_per_call_us", fmt.us),
    Column("gain (the rule)", lambda r: text(r.get("gain_judgement", ""), title=str(r.get("gain_noise", "")))),
    number("k* = T_pin / gain", "break_even_point", lambda x: "∞" if math.isinf(x) else f"{x:.2f}"),
    break_even("Break-even calls", "break_even", "break_even_calls"),
    number("T_pin step (wall)", "t_pin_step_us", fmt.us),
    number("k* wall = T_pin step / gain", "break_even_point_wall", lambda x: "∞" if math.isinf(x) else f"{x:.2f}"),
    break_even("Break-even calls, wall-charged", "break_even_wall", "break_even_calls_wall"),
    number("Speedup at k = 1", "speedup_k1", fmt.times), number("Limit k → ∞", "speedup_limit", fmt.times),
)


def amortisation(an: Analysis) -> Section:
    am = an.state_rows(an.amortisation)
    if am.empty:
        return EMPTY
    return {"empty": False, "table": table(AMORTISATION_COLUMNS, am),
            "pairs": [(rung_label(r), rung_label(c), w) for r, c, w in AMORTISATION_PAIRS]}


SHARE_COLUMNS = (
    key("Profile"), number("T_step", "t_step_us", fmt.us), number("T_cons OptMT", "t_cons_optmt_us", fmt.us),
    number("T_cons L2P+OptMT", "t_cons_l2p_us", fmt.us), number("T_pin", "t_pin_l2p_us", fmt.us),
    number("saving", "saving_consumer_us", fmt.us_signed), number("share", "share_consumer_pct", fmt.pct, 0.0),
    number("saving", "saving_charged_us", fmt.us_signed), number("share", "share_charged_pct", fmt.pct, 0.0),
    number("share", "share_wall_pct", fmt.pct, 0.0),
)


def share(an: Analysis) -> Section:
    sh = an.state_rows(an.share)
    if sh.empty:
        return EMPTY
    return {"empty": False, "t_step": T_STEP_DEFINITION,
            "table": table(SHARE_COLUMNS, sh, (("", 5), ("consumer-only", 2), ("pin-charged", 2), ("wall clock", 1)))}


ROOFLINE_COLUMNS = (
    key("Profile"), rung(), number("bytes per call", "bytes_per_call", fmt.nbytes),
    number("median", "median_us", fmt.us), number("achieved", "achieved_GBps", fmt.gbps),
    number("HBM copy", "hbm_copy_GBps", fmt.gbps), number("fraction", "fraction", fmt.ratio),
)


def roofline(an: Analysis) -> Section:
    roof = an.state_rows(an.roofline)
    if roof.empty:
        return EMPTY
    return {"empty": False, "sources": sources_of(roof, "cells.csv"), "table": table(ROOFLINE_COLUMNS, roof),
            "missing": ("The ladder run's manifest records no measured HBM copy bandwidth (hbm_copy_GBps)."
                        if an.hbm_copy_GBps is None else "No achieved bandwidth in cells.csv.")}


# -- the kernel families side by side ----------------------------------------------------------

def _family_num(an: Analysis, field: str, formatter: Any, good_above: float | None = None) -> Any:
    """A number of a family row; a dash with the reason as its tooltip when missing."""
    def cell(r: dict[str, Any]) -> Cell:
        if is_missing(r.get(field)):
            return dash(fam.why_missing(an, r, field), "num")
        return num(r, field, formatter, good_above)
    return cell


def _dram(an: Analysis) -> Any:
    def cell(r: dict[str, Any]) -> Cell:
        if is_missing(r.get("dram_fraction")):
            return dash(fam.why_missing(an, r, "dram_fraction"), "num")
        read = r["dram_GBps"] / r["dram_fraction"] if r["dram_fraction"] else None
        return Cell(fam.dram_percent(r["dram_fraction"]), "num",
                    f"{fmt.gbps(r['dram_GBps'])} of {fmt.gbps(read)} measured read-only" if read else "")
    return cell


def family_columns(an: Analysis) -> tuple[Column, ...]:
    us = (lambda v: f"{v:,.1f}")  # noqa: E731  (the unit is in the header)
    return (
        Column("Family", lambda r: Cell(r["title"], "key", strong="(headline)" if r["headline_family"] else "")),
        Column("name", lambda r: text(r["unpinned"])),
        Column("median, µs", _family_num(an, "consumer_us", us), "num"),
        Column("× tuned OptMT", _family_num(an, "vs_tuned", fmt.times), "num"),
        Column("DRAM, % of read-only HBM", _dram(an), "num"),
        Column("consumer, µs",
               lambda r: _family_num(an, "pinned_consumer_us", us)(r).but(title=r["pinned"]), "num"),
        Column("pin kernel, µs", _family_num(an, "pin_us", us), "num"),
        Column("pin charged", lambda r: _family_num(an, "pin_speedup_charged", fmt.times)(r) if is_missing(
            r.get("pin_speedup_charged")) else judged("", "pin_speedup_charged", "pin_judgement_charged").cell(r), "num"),
        Column("pin free", _family_num(an, "pin_speedup_consumer", fmt.times), "num"),
    )


FAMILY_GROUPS = (("", 1), ("Consumer without a pin", 4), ("With the pin (L2P)", 2),
                 ("Speedup of the pin", 2))


def families(an: Analysis) -> Section | None:
    """The three families per profile (analysis.families): a table per profile, its sentences."""
    if not fam.shown(an):
        return None
    columns = family_columns(an)
    per_profile = []
    for profile in fam.profiles(an):
        recs = fam.rows(an, profile)
        per_profile.append({
            "profile": profile,
            "table": table(columns, recs, FAMILY_GROUPS),
            "sentences": [says(r["sentence"]) for r in recs],
        })
    return {"lead": fam.LEAD, "state": an.state, "measured": fam.families(an),
            "not_measured": fam.not_measured(an), "not_measured_what": fam.not_measured_text(an),
            "profiles": per_profile}


# -- whole study --------------------------------------------------------------------------------

PHASE_COLUMNS = (
    key("Phase", "phase"), number("start", "start_us", fmt.us), number("end", "end_us", fmt.us),
    number("duration", "duration_us", fmt.us), number("samples", "samples", fmt.count),
)


def timeline(an: Analysis) -> Section:
    tl, ph = an.study.timeline, an.study.phases
    if tl.empty:
        return EMPTY
    return {"empty": False, "sources": list(dict.fromkeys(tl["run"] + "/timeline.csv")),
            "phases": None if ph.empty else table(PHASE_COLUMNS, ph.assign(source=ph["run"] + "/phases.csv"))}


def caveats(an: Analysis) -> Section:
    return {"caveats": an.caveats}


COMPARE_COLUMNS = (
    Column("Cell", lambda r: text("/".join(str(r[k]) for k in ("family", "rung", "pin", "profile", "l2_state")),
                                  "key")),
    Column("Quantity", lambda r: text(quantity_label(r["quantity"], r["timer"]))),
    number("median, used run", "used_median_us", fmt.us),
    number("median, other run", "median_us", fmt.us),
    number("difference", "diff_pct", fmt.pct_signed),
    number("larger repeat spread", "spread_pct", fmt.pct),
    Column("beyond the spread?", lambda r: text("—" if r["exceeds_spread"] is None else
                                                  "yes" if r["exceeds_spread"] else "no")),
)
SETTING_COLUMNS = (plain("Setting", "setting"), plain("used run", "used_value"), plain("other run", "value"))
GPU_SPREAD_COLUMNS = (
    Column("Cell", lambda r: text("/".join(str(r[k]) for k in ("family", "rung", "pin", "profile", "l2_state")),
                                  "key")),
    Column("Quantity", lambda r: text(quantity_label(r["quantity"], r["timer"]))),
    plain("GPUs", "n_gpus"),
    plain("median per GPU", "gpus"),
    number("spread (max - min) / median", "spread_pct", fmt.pct),
)


def compare(an: Analysis) -> Section | None:
    """Runs that measured the same cells (analysis.compare): per pair of runs, one sentence per
    timer (report.compare's wording), the settings in which they differ, every cell in a fold."""
    if an.compare.empty:
        return None
    pairs = [{"title": p.title, "sentences": p.sentences,
              "settings": table(SETTING_COLUMNS, p.settings) if not p.settings.empty else None,
              "cells": table(COMPARE_COLUMNS, p.cells), "n": len(p.cells), "one_sided": p.one_sided}
             for p in compare_pairs(an)]
    gpus = table(GPU_SPREAD_COLUMNS, an.gpu_spread) if not an.gpu_spread.empty else None
    return {"pairs": pairs, "gpus": gpus}
