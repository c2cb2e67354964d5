"""The study as Markdown: the summary page (verdict, ladder, families, layer B, compare), the docs'
results block and the timer comparison, for pasting into issues and papers; the tables are the
declared ones (report/columns.py, report/results_table.py) drawn by table_text."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pandas as pd

from l2attr.ladders.analyse.answer import headline, pin_answer
from l2attr.analysis.load import manifest_value
from l2attr.ladders.analyse.share import T_STEP_DEFINITION
from l2attr.analysis.spread import launch_lag_effect, repeat_spread
from l2attr.study.study import Analysis, series_view
from l2attr.analysis.timer_compare import TimerRun, kernel_timer
from l2attr.report import families as fam
from l2attr.report import fmt
from l2attr.report.html_sections import ladder_table, spread_table, verdict_table, window_lines
from l2attr.report.html_study import family_table, gpu_spread_table, settings_table
from l2attr.report.results_table import ladder_results, pin_only_results
from l2attr.report.table_text import markdown
from l2attr.analysis.control import describe_control
from l2attr.report.titles import series_title, view_family
from l2attr.report.compare import pairs as compare_pairs
from l2attr.report.layer_b import consumer_grid, dram_lines, grid_title
from l2attr.vocab import Command, RungId, TimerKind, Verdict


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    lines = ["| " + " | ".join(_escape(h) for h in headers) + " |",
             "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def verdict_markdown(an: Analysis) -> str:
    """The verdict table the HTML card draws (html_sections.VERDICT_COLUMNS), in Markdown."""
    v = an.verdict
    if v.empty:
        return "_Verdict: not measured (no ladder run and no profile run)._"
    return markdown(verdict_table(v, view_family(an)))


def ladder_markdown(an: Analysis) -> str:
    """The ladder table the HTML card draws (html_sections.LADDER_COLUMNS), in Markdown."""
    lad = an.state_rows(an.ladder)
    if lad.empty:
        return "_Latency ladder: not measured (no ladder run)._"
    return markdown(ladder_table(lad))


def families_markdown(an: Analysis, with_sentences: bool = True) -> str:
    """The three kernel families per profile (study.families): one table per profile, then
    the sentences (left out where the answer at the top already lists them)."""
    if not fam.shown(an):
        return ""
    parts = [fam.LEAD + f" L2 state: {an.state}.", ""]
    gone = fam.not_measured_text(an)
    if gone:
        parts += [f"_{gone} Run `l2attr ladder --family {','.join(fam.not_measured(an))}`._", ""]
    for profile in fam.profiles(an):
        parts += [f"*{profile}*", "", markdown(family_table(an, profile)), ""]
        if with_sentences:
            parts += [f"- {r['sentence']}" for r in fam.rows(an, profile)] + [""]
    return "\n".join(parts).rstrip() + "\n"


def families_answer_markdown(an: Analysis) -> str:
    """For the top of the summary when more than one family was measured: one line on them all,
    then each (profile, family and pin)'s sentence."""
    if not fam.many_families(an):
        return ""
    return "\n".join([f"**The pin across the kernel families** — {fam.summary(an)}", "",
                      *[f"- {x}" for x in fam.sentences(an)]]) + "\n"


def layer_b_markdown(an: Analysis) -> str:
    """The consumer grid and the DRAM lines of one series (report.layer_b's wording)."""
    profiles, rows = consumer_grid(an.l2)
    if not rows:
        return "_Layer B: this series was not profiled._"
    lines = [md_table(["rung", *profiles], rows, [False] + [True] * len(profiles)), ""]
    lines += [f"- {line}" for line in dram_lines(an.l2)]
    return "\n".join(lines)


def control_markdown(an: Analysis) -> str:
    """Each profile run's validity control (analysis.control's judgement, as the HTML report's)."""
    lines = [describe_control(vc) for vc in an.controls.values()
             if vc is not None and not (vc.get("verdict") == Verdict.INCONCLUSIVE and "after_pin" not in vc)]
    return "\n".join(lines)


def compare_markdown(an: Analysis) -> str:
    """Runs that measured the same cells: per pair, what differs in their settings and how far
    their medians move (report.compare's wording)."""
    if an.compare_summary.empty:
        return ""
    parts = []
    for pair in compare_pairs(an):
        parts += [f"*{pair.title}*", ""] + [f"- {line}" for line in pair.sentences]
        if pair.settings.empty:
            parts += ["- settings: none of the recorded settings differ"]
        else:
            used, run = pair.cells["used_run"].iloc[0], pair.cells["run"].iloc[0]
            parts += ["", f"Used run `{used}`, other run `{run}`:", "", markdown(settings_table(pair.settings))]
        parts.append("")
    return "\n".join(parts)


def kernel_timer_words(an: Analysis) -> str:
    """How the ladder runs' kernel timer kept launch lag out (analysis.timer_compare.kernel_timer of
    each run's manifest)."""
    words = []
    for run in an.study.runs_of_kind(Command.LADDER):
        kind, spin = kernel_timer(run.manifest)
        words.append("a blocking start" if kind == TimerKind.BLOCKING.value else f"a {spin:g} µs spin head start")
    return " or ".join(dict.fromkeys(words)) or "no ladder run"


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
    line = headline(pin_answer(an.verdict), an.verdict)   # the one-line answer (ladders.analyse.answer.headline)
    parts += [f"**{line}**", ""] if line else []
    errors = [cv for cv in an.caveats if cv.level == "error"]
    parts += [f"> **Warning:** {cv.text}" for cv in errors] + ([""] if errors else [])
    views = [series_view(an, s) for s in an.series] or [an]
    answer_families = families_answer_markdown(an)
    for i, view in enumerate(views):
        title = f" — {series_title(view)}" if view.series else ""
        heads = [f"- {h}" for h in view.verdict["headline"]] if not view.verdict.empty else []
        parts += [f"**Verdict{title}**", "", *heads, "", verdict_markdown(view), ""]
        if i == 0 and answer_families:   # the answer: the headline's verdict, then every family's
            parts += [answer_families]
    parts += [f"Pin + consumer kernels = both kernels on the kernel timer (CUDA events, {kernel_timer_words(an)}). "
              "Whole call = host clock around pin → sync → consumer → sync. Artifact's timer = event → "
              "consumer launch → stream sync → event, started after the pin and its sync (the artifact's "
              "own number). Consumer kernel = the consumer alone on the kernel timer. vs OptMT = what the pin "
              f"alone adds (L2P+OptMT is OptMT plus a pin). {T_STEP_DEFINITION}", ""]
    if fam.shown(an):
        parts += [f"**{fam.TITLE}**", "", families_markdown(an, with_sentences=not answer_families)]
    for view in views:
        title = f" — {series_title(view)}" if view.series else ""
        parts += [f"**Latency ladder{title}**", "", ladder_markdown(view), ""]
        windows = window_lines(view.state_rows(view.ladder))
        parts += [f"- {x}" for x in windows] + ([""] if windows else [])
        if consumer_grid(view.l2)[1]:
            parts += [f"**Layer B{title}** ({grid_title()})", "", layer_b_markdown(view), ""]
        if not view.spread.empty:
            parts += ["Spread of the medians between repeats (one process):", "", markdown(spread_table(view.spread)), ""]
    parts += generic_markdown(an, views)
    control = control_markdown(an)
    if control:
        parts += [control, ""]
    compare = compare_markdown(an)
    if compare:
        parts += ["**Compare runs** (cells measured by more than one run)", "", compare]
    gpus = gpu_spread_markdown(an)
    if gpus:
        parts += ["**Per-GPU spread** (cells measured on more than one GPU)", "", gpus]
    return "\n".join(parts)


def generic_markdown(an: Analysis, views: list[Analysis]) -> list[str]:
    """The sections declared in report/registry.py alone (generic): title, lead, tables, notes."""
    from l2attr.report.registry import generic_views

    parts: list[str] = []
    for spec, series, fields in generic_views(an, [("", v) for v in views]):
        parts += [f"**{spec.title}{f' — {series}' if series else ''}**", ""]
        parts += [fields["lead"], ""] if fields.get("lead") else []
        for t in fields.get("tables", []):
            parts += [markdown(t), ""]
        parts += [f"- {line}" for line in fields.get("notes", [])] + ([""] if fields.get("notes") else [])
    return parts


def gpu_spread_markdown(an: Analysis) -> str:
    """Each cell several GPUs measured: every GPU's median and the spread between them."""
    if an.gpu_spread.empty:
        return ""
    return markdown(gpu_spread_table(an.gpu_spread)) + "\n"


SPREAD_LEAD = "Spread of the medians between the repeats of one process (median / worst over cells): "


def _spread_line(view: Analysis) -> str:
    return SPREAD_LEAD + "; ".join(f"{r['timer']} {fmt.pct(r['median_spread_pct'])} / {fmt.pct(r['worst_spread_pct'])}"
                                   for r in view.spread.to_dict("records")) + "."


def results_markdown(an: Analysis) -> str:
    """The README's results: per series, consumer medians per rung and the L2P verdict.

    One table per series (headline first), declared in report/results_table.py: rows profiles; the
    rungs' consumer medians (kernel timer), the pin, then L2P+OptMT vs baseline four ways and the
    break-even vs OptMT.
    Where the runs include a profile: the series' layer-B grid and DRAM lines, then the control,
    in the words the report and `l2attr profile` use."""
    out = []
    for s in an.series:
        view = series_view(an, s)
        lad = view.state_rows(view.ladder)
        if lad.empty:
            continue
        results = ladder_results(view, s.pin) if RungId.BASELINE in set(lad["rung"]) else pin_only_results(an, view, s)
        out += [f"**{s.title}** (L2 state {an.state})", "", markdown(results), ""]
        if not view.spread.empty:
            out += [_spread_line(view), ""]
        if consumer_grid(view.l2)[1]:
            out += [f"Layer B, {s.title} ({grid_title()}):", "", layer_b_markdown(view), ""]
    control = control_markdown(an)
    if control:
        out += [control, ""]
    return "\n".join(out).rstrip() + "\n"


# -- the timer comparison (analysis/timer_compare.py judges; docs/layer-a.md's block) ----------------

def _timer_name(r: TimerRun) -> str:
    return r.timer if r.timer == TimerKind.BLOCKING.value else f"{r.timer} {r.spin_us:g} µs"


def timer_table(compared: tuple[list[TimerRun], pd.DataFrame], root: Path | None = None) -> str:
    """Markdown: the runs (timer, late share, spread) and the per-cell differences."""
    runs, m = compared
    head = []
    for r in runs:
        lag = launch_lag_effect(r.samples, r.spin_us, r.timer) or {"lagged_pct": float("nan")}
        sp = repeat_spread(r.samples)
        where = r.path.relative_to(root) if root is not None else r.path
        head.append([f"`{where}`", _timer_name(r), f"{float(lag['lagged_pct']):.1f} %",
                     f"{sp['spread_pct'].median():.2f} %", f"{sp['spread_pct'].max():.2f} %", f"`{r.uuid}`"])
    out = [md_table(["run", "kernel timer", "late / timed-out samples", "consumer spread, median",
                     "consumer spread, worst", "GPU"], head, [False, False, True, True, True, False]), ""]
    rows = [[r.family, r.rung, r.profile, f"{r.median_us_a:.2f}", f"{r.median_us_b:.2f}", f"{r.diff_pct:+.2f} %"]
            for r in m.itertuples()]
    out.append(md_table(["family", "rung", "profile", f"{_timer_name(runs[0])}, µs", f"{_timer_name(runs[1])}, µs",
                         "difference"], rows, [False, False, False, True, True, True]))
    out.append("")
    out.append(f"Largest difference: {m['diff_pct'].abs().max():.2f} % over {len(m)} consumer cells.")
    out.append("")
    return "\n".join(out)
