"""Sweeps as text: the CLI's summary lines and the Markdown chapter (one per sweep run), for any
axis, from its declaration's columns (sweep/axes/)."""

from __future__ import annotations

import math
from typing import Any, Callable

from l2attr.sweep.analyse.judge import SweepAnalysis, analyse_sweep
from l2attr.sweep.analyse.break_even import k_text
from l2attr.manifest_model import recorded
from l2attr.report.provenance import undeclared_line
from l2attr.sweep.load import SweepRun
from l2attr.sweep.axes.declare import Speedup
from l2attr.vocab import SweepJudgement, Timer


def fmt(spec: str) -> Callable[[Any], str]:
    """A cell formatter: '' = text; missing numbers 'n/a', infinite 'never'."""
    if not spec:
        return lambda v: "" if v is None else str(v)

    def show(v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "n/a"
        if isinstance(v, float) and math.isinf(v):
            return "never"
        return format(v, spec)
    return show


MIB, X = fmt(".1f"), fmt(".2f")
DRAM_HEADERS = {"optmt_dram_mib": "OptMT DRAM (MiB/call)", "consumer_dram_mib": "consumer DRAM (MiB/call)",
                "pin_dram_mib": "pin DRAM (MiB/call)"}
JUDGEMENT_HEADER = "rule (95 % intervals)"
BREAK_EVEN_HEADERS = {Timer.KERNEL.value: "measured, kernel-charged",
                      Timer.WALL.value: "measured, launch + sync charged (wall)"}


def columns_of(an: SweepAnalysis) -> list[tuple[str, str, Callable[[Any], str]]]:
    """The axis' shown columns, the rule's word beside the judged speedup, the spread, and the
    DRAM columns `--profile` measured."""
    out = []
    for c in an.spec.table.columns:
        if not c.shown:
            continue
        out.append((c.name, c.header, fmt(c.fmt)))
        if c.name == an.spec.judgement.on and "judgement" in an.table.columns:
            out.append(("judgement", JUDGEMENT_HEADER, fmt("")))
    dram = [(c, DRAM_HEADERS.get(c, c), MIB) for c, _, _ in an.spec.table.dram
            if c in an.table.columns and an.table[c].notna().any()]
    spread = [("spread_pct", "± (half 95 % CI, %)", X)] if "spread_pct" in an.table.columns else []
    return out + spread + dram


def rows_of(an: SweepAnalysis) -> tuple[list[str], list[list[str]]]:
    cols = columns_of(an)
    rows = [[f(r.get(c)) for c, _, f in cols] for r in an.table.to_dict("records")]
    return [h for _, h, _ in cols], rows


def break_even_rows(an: SweepAnalysis) -> tuple[list[str], list[list[str]]]:
    """The break-even judgement's rows (BREAK_EVEN axes): measured per judged column, the formula."""
    j = an.spec.judgement
    be = an.break_even
    timers = []
    for name in (j.on, *j.also):
        value = next(c.value for c in an.spec.table.columns if c.name == name)
        if isinstance(value, Speedup):
            timers.append(value.timer.value)
    headers = ["family", "profile", *j.by, *(BREAK_EVEN_HEADERS.get(t, t) for t in timers)]
    headers += ["formula (k = 1 figures)"] if j.formula else []
    rows = []
    for r in be.to_dict("records"):
        row = [r["family"], r["profile"], *(str(r[b]) for b in j.by)]
        row += [k_text(r[f"measured_{t}"], r["max_x"], r[f"even_{t}"]) for t in timers]
        row += [k_text(r["formula"])] if j.formula else []
        rows.append(row)
    return headers, rows


def has_break_even(an: SweepAnalysis) -> bool:
    return an.spec.judgement.kind == SweepJudgement.BREAK_EVEN and not an.break_even.empty


def md(headers: list[str], rows: list[list[str]]) -> str:
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    out = ["| " + " | ".join(map(esc, headers)) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(map(esc, r)) + " |" for r in rows]
    return "\n".join(out)


def check_lines(an: SweepAnalysis) -> list[str]:
    return an.check.lines() if an.check is not None else []


def markdown_chapter(an: SweepAnalysis) -> str:
    parts = [f"## {an.title}", "", f"Run `{an.run.name}` · `{recorded(an.run.manifest, 'command', '')}`", "",
             *undeclared_line(an.run.manifest),
             f"**Reading.** {an.reading}", ""]
    parts += [f"**Check.** {line}" for line in check_lines(an)] + ([""] if an.check is not None else [])
    if has_break_even(an):
        parts += [f"Break-even in {an.spec.chart.x_title} against OptMT:", "", md(*break_even_rows(an)), "",
                  an.note, ""]
    parts += [md(*rows_of(an)), ""]
    if an.lag:
        parts += [an.lag, ""]
    if an.noisy:
        parts += [an.noisy, ""]
    if an.run.damage:
        parts += [f"- partial data: {m}" for m in an.run.damage] + [""]
    return "\n".join(parts)


def summary_lines(run: SweepRun) -> list[str]:
    """What `l2attr sweep` prints when it ends: the reading, any recorded check and, for a
    break-even axis, its rows."""
    an = analyse_sweep(run)
    lines = [an.reading, *check_lines(an)]
    if has_break_even(an):
        headers, rows = break_even_rows(an)
        lines += [" | ".join(headers)] + [" | ".join(r) for r in rows]
    return lines

