"""Sweeps as text: the CLI's summary lines and the Markdown chapter (one per sweep run)."""

from __future__ import annotations

import math
from typing import Any, Callable

import pandas as pd

from l2attr.analysis.sweep import SweepAnalysis, analyse_sweep
from l2attr.analysis.sweep_amortisation import k_text
from l2attr.analysis.sweep_load import SweepRun
from l2attr.vocab import SweepAxis


def _f(fmt: str) -> Callable[[Any], str]:
    def show(v: Any) -> str:
        if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
            return "n/a" if not (isinstance(v, float) and math.isinf(v)) else "never"
        return format(v, fmt)
    return show


US, X, MIB, INT, RATIO = _f(".1f"), _f(".2f"), _f(".1f"), _f(",.0f"), _f("g")

# axis -> (column, header, formatter) of its main table
COLUMNS: dict[SweepAxis, list[tuple[str, str, Callable[[Any], str]]]] = {
    SweepAxis.AMORTISATION: [("family", "family", str), ("profile", "profile", str), ("order", "order", str),
                             ("k", "k", INT), ("ref_us", "OptMT per call (µs)", US),
                             ("pinned_us", "pin + k calls, per call (µs)", US),
                             ("speedup_kernel", "kernel-charged speedup", X), ("speedup_wall", "wall-charged speedup", X),
                             ("formula_speedup", "formula (from k = 1)", X),
                             ("consumer_first_us", "1st call after pin (µs)", US),
                             ("consumer_rest_us", "later calls (µs)", US)],
    SweepAxis.HOTSET: [("family", "family", str), ("profile", "profile", str), ("hot_rows", "hot rows", INT),
                       ("hot_mib", "MiB", MIB), ("pin_us", "pin (µs)", US), ("consumer_us", "consumer (µs)", US),
                       ("speedup_consumer", "consumer-only speedup", X),
                       ("speedup_charged", "pin-charged speedup", X), ("speedup_wall", "wall-charged speedup", X)],
    SweepAxis.WINDOW: [("family", "family", str), ("profile", "profile", str), ("arm", "arm", str),
                       ("hit_ratio", "hitRatio", RATIO), ("consumer_us", "consumer (µs)", US),
                       ("prepare_us", "host call per consumer (µs)", US),
                       ("speedup_vs_optmt", "vs OptMT", X), ("speedup_vs_remap", "vs remap alone", X),
                       ("speedup_wall_vs_optmt", "wall vs OptMT", X)],
    SweepAxis.CAPACITY: [("family", "family", str), ("profile", "profile", str),
                         ("effective_l2_mib", "effective L2 (MiB)", RATIO), ("optmt_us", "OptMT (µs)", US),
                         ("pinned_consumer_us", "L2P consumer (µs)", US), ("pin_us", "pin (µs)", US),
                         ("speedup_consumer", "consumer-only speedup", X),
                         ("speedup_charged", "pin-charged speedup", X), ("speedup_wall", "wall-charged", X)],
    SweepAxis.POLLUTION: [("family", "family", str), ("profile", "profile", str), ("pollute_mib", "MiB streamed", RATIO),
                          ("optmt_us", "OptMT (µs)", US), ("pinned_consumer_us", "L2P consumer (µs)", US),
                          ("pollute_us", "polluting read (µs)", US), ("speedup_consumer", "consumer-only speedup", X),
                          ("speedup_charged", "pin-charged speedup", X), ("gain_left", "gain left", X)],
}


DRAM_HEADERS = {"optmt_dram_mib": "OptMT DRAM (MiB/call)", "consumer_dram_mib": "consumer DRAM (MiB/call)",
                "pin_dram_mib": "pin DRAM (MiB/call)"}


def columns_of(an: SweepAnalysis) -> list[tuple[str, str, Callable[[Any], str]]]:
    """The axis' columns, plus the DRAM ones `--profile` measured."""
    extra = [(c, h, MIB) for c, h in DRAM_HEADERS.items()
             if c in an.table.columns and an.table[c].notna().any()]
    spread = [("spread_pct", "± (half 95 % CI, %)", X)] if "spread_pct" in an.table.columns else []
    return COLUMNS[an.axis] + spread + extra


def rows_of(an: SweepAnalysis) -> tuple[list[str], list[list[str]]]:
    cols = columns_of(an)
    rows = [[fmt(r.get(c)) for c, _, fmt in cols] for r in an.table.to_dict("records")]
    return [h for _, h, _ in cols], rows


def break_even_rows(be: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    headers = ["family", "profile", "order", "measured, kernel-charged", "measured, launch + sync charged (wall)",
               "formula (k = 1 figures)"]
    rows = [[r.family, r.profile, r.order, k_text(r.measured_kernel, r.max_k), k_text(r.measured_wall, r.max_k),
             k_text(r.formula)] for r in be.itertuples()]
    return headers, rows


def _md(headers: list[str], rows: list[list[str]]) -> str:
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    out = ["| " + " | ".join(map(esc, headers)) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(map(esc, r)) + " |" for r in rows]
    return "\n".join(out)


def markdown_chapter(an: SweepAnalysis) -> str:
    parts = [f"## {an.title}", "", f"Run `{an.run.name}` · `{an.run.manifest.get('command', '')}`", "",
             f"**Reading.** {an.reading}", ""]
    if an.axis == SweepAxis.AMORTISATION and not an.break_even.empty:
        parts += ["Break-even consumer calls per pin against OptMT:", "", _md(*break_even_rows(an.break_even)), ""]
    parts += [_md(*rows_of(an)), ""]
    if an.lag:
        parts += [an.lag, ""]
    if an.run.damage:
        parts += [f"- partial data: {m}" for m in an.run.damage] + [""]
    return "\n".join(parts)


def summary_lines(run: SweepRun) -> list[str]:
    """What `l2attr sweep` prints when it ends: the reading and, for amortisation, break-even per profile."""
    an = analyse_sweep(run)
    lines = [an.reading]
    if an.axis == SweepAxis.AMORTISATION and not an.break_even.empty:
        headers, rows = break_even_rows(an.break_even)
        lines += [" | ".join(headers)] + [" | ".join(r) for r in rows]
    return lines
