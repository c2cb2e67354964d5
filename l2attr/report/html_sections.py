"""What each section of the HTML report shows, as data for its template (reports/sections/).

One function per section takes the names its declaration reads (report/registry.py), as a view of
the analysis (one series' view for the per-series sections: report/reads.py), and returns the
template's `sec` fields: tables, formatted figures, file lists and reasons. They
compute nothing (every number comes from l2attr.analysis) and write no HTML; `{"empty": True}`
makes a section say what was not measured and how to measure it.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import pandas as pd

from l2attr.analysis.calls import headline_rate, label as metric_label
from l2attr.ladders.analyse.charges import NOTHING
from l2attr.ladders.analyse.amortisation import AMORTISATION_PAIRS, said
from l2attr.ladders.analyse.answer import QUESTION, comparand, headline, overall, pin_answer, scope
from l2attr.analysis.common import is_missing, ordered_profiles, rung_label, why
from l2attr.ladders.analyse.share import t_step_definition
from l2attr.report.reads import SectionView
from l2attr.report import fmt
from l2attr.report.columns import (
    Cell, Column, dash, family_of, grouped_table, key, missing, num, number, rung, sources_of, table, text, under,
)
from l2attr.report.titles import view_family
from l2attr.dlrm.declare import RUNG_BY_NAME
from l2attr.vocab import Judgement, Role, RungId

Section = dict[str, Any]
EMPTY: Section = {"empty": True}


def says(headline: str) -> tuple[str, str]:
    """('reuse_high (artifact kernels, element pin)', 'L2P+OptMT vs baseline: ...'): a verdict
    sentence split at its first colon, whom it is about and what it says."""
    who, _, rest = headline.partition(": ")
    return (who, rest) if rest else ("", who)


# -- the answer at the top ----------------------------------------------------------------------

def answer(an: SectionView) -> Section:
    """The one-line answer (ladders.analyse.answer: does the pin pay once charged, per family), what its
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


def verdict_columns(family: str = "") -> tuple[Column, ...]:
    """The verdict table's columns, its rungs named in `family`'s words."""
    pin, unpinned = rung_label(RungId.L2P_OPTMT, family), rung_label(RungId.OPTMT, family)
    return (
        key("Profile"),
        *under(f"{pin} vs baseline, pin charged",
               judged("pin + consumer kernels", "speedup_kernels", "judgement_kernels"),
               judged("+ the pin step's launch + sync", "speedup_host", "judgement_host"),
               judged("whole call, wall clock", "speedup_wall", "judgement_wall")),
        *under(f"{pin} vs baseline, pin free",
               judged("artifact's timer, consumer only", "speedup_artifact", "judgement_artifact"),
               judged("consumer kernel only", "speedup_consumer", "judgement_consumer")),
        *under(f"What the pin adds (vs {unpinned})",
               judged("consumer-only", "pin_speedup_consumer", "pin_judgement_consumer"),
               judged("pin-charged", "pin_speedup_charged", "pin_judgement_charged"),
               judged("+ launch + sync", "pin_speedup_host", "pin_judgement_host"),
               number("pin step's launch + sync", "pin_host_us", fmt.us)),
        *under("L2 share of step time",
               number("consumer-only", "share_consumer_pct", fmt.pct),
               number("pin-charged", "share_charged_pct", fmt.pct)),
        *under(f"Break-even calls per pin (vs {unpinned})",
               break_even("kernel-charged", "break_even", "break_even_calls"),
               break_even("wall-charged (pin step)", "break_even_wall", "break_even_calls_wall")),
        *under("Layer B", number("L2 hit-rate gain", "hit_gain_pp", fmt.pp)),
    )


VERDICT_COLUMNS = verdict_columns()


def verdict_table(v: pd.DataFrame, family: str = "") -> Any:
    """The verdict table of one series: the HTML card's and the Markdown page's."""
    return table(verdict_columns(family), v)


def verdict(an: SectionView) -> Section:
    v = an.verdict
    if v.empty:
        return EMPTY
    return {"empty": False, "state": an.state, "headlines": [says(h) for h in v["headline"]],
            "table": verdict_table(v, view_family(an)),
            "t_step": t_step_definition(rung_label(RungId.OPTMT, view_family(an))),
            "hit_rate_label": metric_label(headline_rate())}


def _ci(r: dict[str, Any]) -> Cell:
    if is_missing(r["consumer_us"]):
        return missing(why(r, "consumer_us"), "num")
    return Cell(fmt.ci(r["consumer_us"], r["consumer_ci_lo_us"], r["consumer_ci_hi_us"]), "num wraps")


def _below(r: dict[str, Any]) -> str | None:
    return r["below"] if isinstance(r["below"], str) else None


def _delta(r: dict[str, Any]) -> Cell:
    if is_missing(r["delta_consumer_pct"]):
        return num(r, "delta_consumer_us", fmt.us_signed)
    below = _below(r)
    return Cell(f"{fmt.us_signed(r['delta_consumer_us'])} ({r['delta_consumer_pct']:+.1f} %)"
                + (f" vs {rung_label(below, family_of(r))}" if below else ""), "num wraps")


LADDER_COLUMNS = (
    key("Profile"), rung(), Column("Consumer median [95% CI]", _ci, "num", hide_when_empty=False),
    Column("Δ consumer vs the rung below", _delta, "num"),
    number("artifact's timer", "artifact_us", fmt.us), number("host overhead", "host_overhead_us", fmt.us_signed),
    number("Pin", "pin_us", fmt.us), number("Pin + consumer", "kernels_us", fmt.us),
    Column("host charge", lambda r: dash(NOTHING, "num") if r.get("host_charge_name") == NOTHING
           else num(r, "host_charge_us", fmt.us).but(title=str(r.get("host_charge_name") or "")), "num"),
    number("Call wall", "wall_us", fmt.us),
    *under("Speedup over baseline",
           number(Role.CONSUMER.value, "speedup_consumer", fmt.times),
           number("artifact's timer", "speedup_artifact", fmt.times),
           number("pin + consumer", "speedup_kernels", fmt.times),
           number("+ host charge", "speedup_host", fmt.times), number("wall clock", "speedup_wall", fmt.times)),
)
SPREAD_COLUMNS = (
    key("Timer", "timer"), number("cells", "cells", fmt.count), number("repeats", "repeats", fmt.count),
    number("median spread", "median_spread_pct", fmt.pct), number("worst", "worst_spread_pct", fmt.pct),
    Column("worst cell", lambda r: text(r["worst_cell"])),
)


def ladder_table(lad: pd.DataFrame) -> Any:
    """The ladder of one series and L2 state, rows of a profile together: the card's and the page's."""
    return grouped_table(LADDER_COLUMNS, lad, "profile", ordered_profiles(lad["profile"]))


def spread_table(spread: pd.DataFrame) -> Any:
    return table(SPREAD_COLUMNS, spread.assign(source="samples.csv"))


def ladder(an: SectionView) -> Section:
    if an.ladder.empty:
        return EMPTY
    lad = an.state_rows(an.ladder)
    others = an.ladder[an.ladder["l2_state"] != an.state]
    overhead = lad["host_overhead_us"].dropna()
    return {
        "empty": False, "sources": sources_of(lad, "cells.csv"), "table": ladder_table(lad),
        "bases": "; ".join(sorted({b for b in an.ladder["kernels_basis"] if b})),
        "windows": window_lines(lad),
        "charges": "; ".join(sorted({str(b) for b in an.ladder.get("pin_step_basis", pd.Series(dtype=str))
                                     if isinstance(b, str) and b})),
        "other_states": [(s, ladder_table(others[others["l2_state"] == s])) for s in sorted(set(others["l2_state"]))],
        "spread": None if an.spread.empty else spread_table(an.spread),
        "overhead": None if overhead.empty else {
            "median": f"{overhead.median():.1f}", "lo": f"{overhead.min():.1f}", "hi": f"{overhead.max():.1f}"},
    }


def speedup(an: SectionView) -> Section:
    return {"empty": an.ladder.empty}


AMORTISATION_COLUMNS = (
    key("Profile"), rung("Pinning rung"),
    Column("Comparand", lambda r: Cell(rung_label(r["comparand"], family_of(r)), title=r["why_comparand"],
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


def amortisation(an: SectionView) -> Section:
    am = an.state_rows(an.amortisation)
    if am.empty:
        return EMPTY
    return {"empty": False, "table": table(AMORTISATION_COLUMNS, am),
            "pairs": [(rung_label(r, view_family(an)), rung_label(c, view_family(an)), said(w, view_family(an)))
                      for r, c, w in AMORTISATION_PAIRS]}


def share_columns(family: str = "") -> tuple[Column, ...]:
    unpinned, pin = rung_label(RungId.OPTMT, family), rung_label(RungId.L2P_OPTMT, family)
    return (
        key("Profile"), number("T_step", "t_step_us", fmt.us), number(f"T_cons {unpinned}", "t_cons_optmt_us", fmt.us),
        number(f"T_cons {pin}", "t_cons_l2p_us", fmt.us), number("T_pin", "t_pin_l2p_us", fmt.us),
        *under("consumer-only", number("saving", "saving_consumer_us", fmt.us_signed),
               number("share", "share_consumer_pct", fmt.pct, 0.0)),
        *under("pin-charged", number("saving", "saving_charged_us", fmt.us_signed),
               number("share", "share_charged_pct", fmt.pct, 0.0)),
        *under("wall clock", number("share", "share_wall_pct", fmt.pct, 0.0)),
    )


def share(an: SectionView) -> Section:
    sh = an.state_rows(an.share)
    if sh.empty:
        return EMPTY
    family = view_family(an)
    return {"empty": False, "t_step": t_step_definition(rung_label(RungId.OPTMT, family)),
            "table": table(share_columns(family), sh)}


ROOFLINE_COLUMNS = (
    key("Profile"), rung(), number("bytes per call", "bytes_per_call", fmt.nbytes),
    number("median", "median_us", fmt.us), number("achieved", "achieved_GBps", fmt.gbps),
    number("HBM copy", "hbm_copy_GBps", fmt.gbps), number("fraction", "fraction", fmt.ratio),
)


def roofline(an: SectionView) -> Section:
    roof = an.state_rows(an.roofline)
    if roof.empty:
        return EMPTY
    return {"empty": False, "sources": sources_of(roof, "cells.csv"), "table": table(ROOFLINE_COLUMNS, roof),
            "missing": ("The ladder run's manifest records no measured HBM copy bandwidth (hbm_copy_GBps)."
                        if an.hbm_copy_GBps is None else "No achieved bandwidth in cells.csv.")}


# -- the access-policy window's costs in words, for the Markdown and the HTML ladder alike: its host
# call per call (charged), its persisting-L2 set-aside and reset per repeat (printed beside it), each
# as measured or "not measured", never a zero (folded in from charges_text.py: one neighbour's job)

def measured(row: dict[str, Any], field: str, formatter: Callable[[Any], str]) -> str:
    """The figure, or 'n/a (why)' with the analysis' reason when it has a short one."""
    value = row.get(field)
    if is_missing(value):
        reason = why(row, field)
        return f"n/a ({reason})" if reason and len(reason) <= 60 else "n/a"
    return formatter(value)


def window_lines(lad: Any) -> list[str]:
    """Per APW+OptMT row: its window's host call per call and its set-aside and reset per repeat,
    each measured or 'not measured' with the reason (never a zero)."""
    if lad is None or lad.empty or "window_call_us" not in lad:
        return []
    out = []
    for r in lad.to_dict("records"):
        decl = RUNG_BY_NAME.get(r["rung"])
        if not (decl and decl.window):
            continue
        parts = [f"window host call {measured(r, 'window_call_us', fmt.us)} per call"]
        for f, what in (("window_setaside_us", "persisting set-aside"), ("window_reset_us", "reset")):
            value = r.get(f)
            parts.append(f"{what} {fmt.us(value)} per repeat" if not is_missing(value) else f"{what}: not measured")
        family = r.get("family") if isinstance(r.get("family"), str) else ""
        out.append(f"{rung_label(r['rung'], family)} on {r['profile']}: " + "; ".join(parts))
    return out
