"""The Markdown summary: the verdict table and the ladder table, for pasting into issues and papers."""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence


from l2attr.analysis.common import is_missing, ordered_profiles, rung_label, why
from l2attr.analysis.load import manifest_value
from l2attr.analysis.share import T_STEP_DEFINITION
from l2attr.analysis.study import Analysis
from l2attr.report import fmt


def _cell(row: dict[str, Any], field: str, formatter: Callable[[Any], str]) -> str:
    value = row.get(field)
    if is_missing(value):
        reason = why(row, field)
        return f"n/a ({reason})" if reason and len(reason) <= 60 else "n/a"
    return formatter(value)


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    lines = ["| " + " | ".join(_escape(h) for h in headers) + " |",
             "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def verdict_markdown(an: Analysis) -> str:
    v = an.verdict
    if v.empty:
        return "_Verdict: not measured (no ladder run and no profile run)._"
    be = lambda x: "never" if math.isinf(x) else f"{x:.0f}"  # noqa: E731
    rows = [[r["profile"], _cell(r, "speedup_consumer", fmt.times), _cell(r, "speedup_kernels", fmt.times),
             _cell(r, "speedup_wall", fmt.times), _cell(r, "pin_speedup_consumer", fmt.times),
             _cell(r, "pin_speedup_charged", fmt.times), _cell(r, "share_consumer_pct", fmt.pct),
             _cell(r, "share_charged_pct", fmt.pct), _cell(r, "break_even_calls", be),
             _cell(r, "hit_gain_pp", fmt.pp)] for r in v.to_dict("records")]
    return md_table(["profile", "L2P+OptMT vs baseline, consumer-only (artifact)", "pin + consumer", "wall",
                     "vs OptMT, consumer-only", "vs OptMT, pin-charged", "L2 share of step", "L2 share, pin-charged",
                     "break-even calls per pin (vs OptMT)", "consumer L2 hit-rate gain"],
                    rows, [False] + [True] * 9)


def ladder_markdown(an: Analysis) -> str:
    lad = an.state_rows(an.ladder)
    if lad.empty:
        return "_Latency ladder: not measured (no ladder run)._"
    rows = []
    for profile in ordered_profiles(lad["profile"]):
        for r in lad[lad["profile"] == profile].to_dict("records"):
            rows.append([profile, rung_label(r["rung"]),
                         fmt.ci(r["consumer_us"], r["consumer_ci_lo_us"], r["consumer_ci_hi_us"]),
                         _cell(r, "delta_consumer_us", fmt.us_signed) if isinstance(r["below"], str) else "—",
                         _cell(r, "pin_us", fmt.us) if r["pins"] else "—",
                         _cell(r, "kernels_us", fmt.us), _cell(r, "wall_us", fmt.us),
                         _cell(r, "speedup_consumer", fmt.times), _cell(r, "speedup_kernels", fmt.times),
                         _cell(r, "speedup_wall", fmt.times)])
    return md_table(["profile", "rung", "consumer median [95% CI]", "Δ vs rung below", "pin", "pin + consumer",
                     "call wall", "speedup consumer-only", "speedup pin + consumer", "speedup wall"],
                    rows, [False, False] + [True] * 8)


def render_markdown(an: Analysis) -> str:
    study = an.study
    c = study.config
    gpu = ", ".join(sorted({str(manifest_value(r.manifest, "gpu.name")) for r in study.runs}))
    parts = [
        f"### L2 pinning, charged — {gpu}",
        "",
        f"DLRM EmbeddingBag: {c.get('tables')} tables × {c.get('rows')} rows × {c.get('dim')} {c.get('dtype')}, "
        f"batch {c.get('batch_size')}, pooling {c.get('pooling')}, {c.get('hot_rows')} hot rows pinned. "
        f"L2 state: {an.state}. Runs: {', '.join(f'`{r.name}` ({r.kind})' for r in study.runs)}.",
        "",
    ]
    errors = [cv for cv in an.caveats if cv.level == "error"]
    parts += [f"> **Warning:** {cv.text}" for cv in errors] + ([""] if errors else [])
    parts += ["**Verdict**", "", verdict_markdown(an), "",
              "Consumer-only = the artifact's timer (starts after the pin and the sync). Pin + consumer = both "
              "kernels charged. vs OptMT = what the pin alone adds (L2P+OptMT is OptMT plus a pin). "
              f"{T_STEP_DEFINITION}", "",
              "**Latency ladder**", "", ladder_markdown(an), ""]
    return "\n".join(parts)
