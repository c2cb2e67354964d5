"""Step runs as Markdown: the README's generated block, examples/steps/runs/report.md and the CLI share
it (steps/analyse/answer.py, steps/analyse/edges.py judge; this lays out)."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from l2attr.steps.analyse.reading import dram_lines, edges_how, graph_line, measured_edge_lines  # noqa: F401
from l2attr.steps.analyse.answer import describe_kernel, top_edges, top_kernels, versus_claim
from l2attr.steps.analyse.reading import compare_step_times
from l2attr.steps.analyse.edges import describe as describe_edge
from l2attr.manifest_model import Surgery, recorded
from l2attr.steps.table import is_graph, step_manifest, step_name
from l2attr.steps.check.program import program_check, program_line
from l2attr.report.fmt import text_table
from l2attr.report.markdown import md_table
from l2attr.report.provenance import undeclared_line
from l2attr.vocab import Judgement

EDGE_HEADERS = ["edge (producer -> consumer)", "MB", "natural µs", "edge_cold µs", "rewarmed µs", "cold µs",
                "saving µs [interval]", "control (rewarmed vs natural)", "judgement"]


def edge_rows(ans: Any, n: int = 5) -> list[list[str]]:
    e = getattr(ans, "measured_edges", None)
    if e is None or not len(e):
        return []
    return [[f"{r['producer_op']}#{r['producer']} -> {r['consumer_op']}#{r['consumer']}", f"{r['bytes'] / 1e6:.2f}",
             f"{r['natural_us']:.2f}", f"{r['edge_cold_us']:.2f}", f"{r['rewarmed_us']:.2f}", f"{r['cold_us']:.2f}",
             f"{r['saving_us']:+.2f} [{r['saving_lo']:+.2f}, {r['saving_hi']:+.2f}]",
             f"{r['control']} ({r['control_pct']:+.1f} %)", _edge_words(r)]
            for r in e.head(n).to_dict("records")]


def _edge_block(ans: Any) -> list[str]:
    rows = edge_rows(ans)
    why = step_manifest(ans.manifest).edges_error
    if why:
        return ["", f"Edges measured apart: not measured ({why})."]
    if not rows:
        return []
    method = edges_how(ans.manifest)
    return ["", f"Edges measured apart ({method}; saving = edge_cold - natural, judged only where the control "
                "holds):", "", md_table(EDGE_HEADERS, rows, [False, True, True, True, True, True, True, False, False])]


def step_markdown(ans: Any, path: Path, root: Path | None = None) -> str:
    name = step_name(ans)
    gpu = [recorded(ans.manifest, f"gpu.{k}", "?") for k in ("name", "uuid")]
    where = path.relative_to(root) if root is not None else path
    m, lo, hi = ans.step_share
    lines = [f"**{name}** (`{where}`, {gpu[0]} `{gpu[1]}`)", "", *undeclared_line(ans.manifest), ans.headline(name), "",
             f"Share of the untraced step time: {100 * m:+.2f} % [{100 * lo:+.2f}, {100 * hi:+.2f}], "
             f"{versus_claim(lo, hi)}.", ""]
    if ans.judgement in (Judgement.WRITE_BACK.value, Judgement.DEPENDS.value):
        lines[-2] = (f"Share of the untraced step time, clean-cold reading: {100 * m:+.2f} % [{100 * lo:+.2f}, "
                     f"{100 * hi:+.2f}]; not held against the study's bound ({ans.judgement}).")
    if graph_line(ans):
        lines += [graph_line(ans), ""]
    if "dirty_us" in ans.kernels:
        lines += surgery_lines(ans)
    else:
        rows = [[describe_kernel(r), f"{r['natural_us']:.2f}", f"{r['cold_us']:.2f}", f"{r['saving_us']:+.2f}",
                 _words(r["judgement"])] for r in top_kernels(ans, 3).to_dict("records")]
        lines.append(md_table(["kernel (op#index)", "natural µs", "cold µs", "saving µs", "judgement"], rows,
                              [False, True, True, True, False]))
    edges = top_edges(ans, ans.ops, 3)
    if len(edges):
        lines += ["", "Top edges (saving split by input bytes: attributed): " + "; ".join(
            f"{r['producer_op']}#{r['producer']} -> {r['consumer_op']}#{r['consumer']} "
            f"{r['attributed_saving_us']:+.2f} µs ({r['bytes'] / 1e6:.1f} MB)" for r in edges.to_dict("records")) + "."]
    lines += _edge_block(ans)
    lines += dram_lines(path)
    lines.append("")
    return "\n".join(lines)


SURGERY_HEADERS = ["node", "kernel (op#index)", "natural µs", "clean-cold µs", "dirty-cold µs", "saving clean / dirty µs",
                   "write-back ≤ µs (% of natural)", "judgement"]


def surgery_intro(ans: Any) -> str:
    """How a graph-surgery run's graph was measured, beside the program it stands for (the Markdown
    section and the HTML card print the same text)."""
    sf = step_manifest(ans.manifest).surgery or Surgery()
    k = ans.kernels
    call, torch_g = sf.call_us or [], sf.torch_graph_us or []
    said = (lambda v: "?" if v is None else v)  # noqa: E731
    med = (lambda xs: f"{sorted(xs)[len(xs) // 2]:.1f} µs" if xs else "not measured")
    wb = float(k["write_back_bound_us"].sum())
    check = program_check(ans.manifest, k)
    return (f"Graph surgery: {said(sf.graph_kernels)} kernel nodes, each after its own flush node; "
            f"{said(sf.matched_kernels)} attributed to eager ops, the rest by kernel name. Natural replay "
            f"{ans.step_time.median:.1f} µs, torch's own replay of the same capture {med(torch_g)}, the function "
            f"called on its own {med(call)} (every launch queued first; the GPU's own per-launch gaps included). "
            f"Write-back bound over all kernels: ≤ {wb:.1f} µs ({100 * wb / float(k['natural_us'].sum()):.1f} % "
            f"of natural kernel time)." + (f" {program_line(check)}" if check else "")
            + (f" Natural arm, as this run made it: {sf.natural}." if sf.natural is not None else ""))


def surgery_lines(ans: Any, every_up_to: int = 12, top: int = 8) -> list[str]:
    """A graph-surgery run: how its graph was measured, and its kernels with both cold readings and
    the write-back bound (dirty-cold - clean-cold: what a full L2 of dirty lines costs the kernel,
    at least what natural's own dirty lines can)."""
    k = ans.kernels.sort_values("node") if "node" in ans.kernels else ans.kernels
    shown = k if len(k) <= every_up_to else k.reindex(k["saving_us"].abs().sort_values(ascending=False).index).head(top)
    lines = [surgery_intro(ans), "",
             f"{'Every kernel' if len(shown) == len(k) else f'The {len(shown)} kernels of largest |saving| (all {len(k)}: the HTML page, folded, and step_kernels.csv)'} "
             "(saving = cold - natural; a judgement word only where both cold readings agree" + _tick(k) + "):", ""]
    return lines + [md_table(SURGERY_HEADERS, [surgery_row(r) for r in shown.to_dict("records")],
                             [True, False, True, True, True, True, True, False])]


def _tick(k: Any) -> str:
    """The clause that says the intervals include the timer's tick (steps/analyse/answer.per_kernel)."""
    tick = float(k["clock_tick_us"].iloc[0]) if "clock_tick_us" in k and len(k) else 0.0
    return f"; intervals include the GPU timer's {1000 * tick:.0f} ns tick" if tick > 0 else ""


def surgery_row(r: dict[str, Any]) -> list[str]:
    """One kernel of a graph-surgery run under SURGERY_HEADERS (the Markdown table and the HTML page)."""
    return [str(int(r["node"])) if "node" in r else "", describe_kernel(r), f"{r['natural_us']:.2f}", f"{r['cold_us']:.2f}",
            f"{r['dirty_us']:.2f}", f"{r['saving_us']:+.2f} / {r['saving_dirty_us']:+.2f}",
            f"{r['write_back_bound_us']:.2f} ({100 * r['write_back_bound_us'] / r['natural_us']:.0f} %)",
            _words(r["judgement"])]


def _facts(ans: Any) -> dict[str, Any]:
    return dict(recorded(ans.manifest, "step.facts") or {})      # as recorded: the page prints them


def grids(runs: list[tuple[Path, Any]]) -> list[tuple[str, list[str], list[list[str]]]]:
    """One table per sweep grid (runs whose manifest's step.facts name a `series`): the shape, the
    untraced step time, the share of it that reuse is worth, against the study's claim, and the
    top measured edge. (grid, headers, rows)."""
    groups: dict[str, list[Any]] = {}
    for _, a in runs:
        g = _facts(a).get("series")
        if g:
            groups.setdefault(str(g), []).append(a)
    out = []
    for grid, members in groups.items():
        keys: list[str] = []
        for a in members:
            keys += [k for k in _facts(a) if k != "series" and k not in keys]
        rows = []
        for a in members:
            f = _facts(a)
            m, lo, hi = a.step_share
            e = getattr(a, "measured_edges", None)
            top = "" if e is None or not len(e) else (
                f"{e.iloc[0]['producer_op']} -> {e.iloc[0]['consumer_op']} {e.iloc[0]['saving_us']:+.2f} µs "
                f"({_edge_words(e.iloc[0].to_dict())})")
            act = a.activations          # the study's quantity, over the answer's own denominator
            study = ("not measured (no write-back-matched arm)" if act is None else
                     f"{100 * act.share.median:+.2f} % [{100 * act.share.lo:+.2f}, {100 * act.share.hi:+.2f}] of "
                     f"{act.denominator}: {versus_claim(act.share.lo, act.share.hi)}")
            rows.append([step_name(a), *[str(f.get(k, "")) for k in keys],
                         f"{a.step_time.median:.1f}" if math.isfinite(a.step_time.median) else "n/a",
                         f"{a.saving_us:+.2f} [{a.saving_ci[0]:+.2f}, {a.saving_ci[1]:+.2f}]",
                         f"{100 * m:+.2f} [{100 * lo:+.2f}, {100 * hi:+.2f}]", study, top])
        out.append((grid, ["run", *keys, "graph replay µs", "clean saving µs", "clean saving, % of the graph replay",
                           "activations (write-back-matched cold arm; % of the denominator named) against the study's 0.65 %",
                           "top measured edge"], rows))
    return out


def grid_tables(runs: list[tuple[Path, Any]]) -> list[str]:
    out = []
    for grid, headers, rows in grids(runs):
        n = len(headers) - 6
        out += [f"Sweep grid `{grid}` (clean saving over the graph replay; the study's column: the activations' "
                "share of the eager step, or of the graph replay where no eager loop was timed):", "",
                md_table(headers, rows, [False, *[True] * n, True, True, True, False, False]), ""]
    return out


def steps_markdown(runs: list[tuple[Path, Any]], root: Path | None = None, base: str | None = None) -> str:
    """Every step run, then the sweep grids; with `base`, the untraced step times of the others of
    its family, measured by the same command (one process: in-run intervals), against it."""
    out = [step_markdown(a, p, root) for p, a in runs]
    by_name = {step_name(a): a for _, a in runs}
    if base in by_name:
        ref = by_name[base]
        out.append(f"Untraced step time against `{base}` (same process; a pin inside the step is charged):")
        out.append("")
        for n, a in by_name.items():
            if (n != base and n and n.startswith(base.rsplit("-", 2)[0])
                    and step_manifest(a.manifest).command == step_manifest(ref.manifest).command):
                out.append(f"- `{n}`: {compare_step_times(ref, a)}")
        out.append("")
    out += grid_tables(runs)
    return "\n".join(out)


def study_lines(answers: list[Any]) -> list[str]:
    """The first screen's lines where steps carry the study's split: per GPU (a count is one
    comparison: one GPU), its models and how many steps' activations (write-back-matched cold arm)
    fall on each side of the study's bound, once per denominator (the eager step, the graph replay).
    [] where no step carries the split."""
    from l2attr.steps.analyse.reading import EAGER, REPLAY
    from l2attr.steps.analyse.split import STUDY_CLAIM, study_counts

    by_gpu: dict[str, list[Any]] = {}
    for a in answers:
        if a.parts is not None:
            by_gpu.setdefault(str(recorded(a.manifest, "gpu.name") or "an unnamed GPU"), []).append(a)
    bound = f"{100 * STUDY_CLAIM:.2f} %"

    def said(split: list[Any], d: str, what: str) -> str:
        c = study_counts(split, d)
        return (f"of {what}: {c['below']} below {bound}, {c['above']} above, {c['at']} at it (within ± 0.15 pp), "
                f"{c['undecided']} undecided" + (f", {c['not measured']} not measured" if c["not measured"] else ""))

    out = []
    for gpu, split in sorted(by_gpu.items()):
        models = sorted({str(recorded(a.manifest, "step.facts.model") or step_name(a))
                         for a in split})
        out += [f"GPU: {gpu}. Models: {', '.join(models)}",
                f"On {gpu}, the activations' share (reuse of what the step's own kernels made, against the "
                f"write-back-matched cold arm) of {len(split)} step(s) {said(split, EAGER, 'the eager step')}; "
                f"{said(split, REPLAY, 'the graph replay')}"]
    return out


def page_markdown(title: str, runs: list[tuple[Path, Any]]) -> str:
    """`l2attr report --format md` of step runs: one index table (a row per step, linked to its
    section), then a section per step (its answer, the measured edges, the graph method), then the
    sweep grids."""
    slugs = anchors([p for p, _ in runs])
    cols, said = index_layout([a.index_row() for _, a in runs])
    rows = [[f"[{c.text(a.index_row())}](#{slug})" if c.link else c.text(a.index_row()) for c in cols]
            for (_, a), slug in zip(runs, slugs)]
    study = study_lines([a for _, a in runs])
    lines = [f"# {title}", "", *[y for x in study for y in (f"{x}.", "")],
             *[f"{x[0].upper()}{x[1:]}." for x in said], *([""] if said else []),
             md_table([c.header for c in cols], rows, [c.right for c in cols]), ""]
    for (p, a), slug in zip(runs, slugs):
        lines += [f'<a id="{slug}"></a>', "", f"## {step_name(a)}", "", f"Run dir `{slug_path(p, [q for q, _ in runs])}`.", "",
                  *undeclared_line(a.manifest), *[x for line in a.headline().splitlines() for x in (line, "")]]
        if edge_rows(a):
            lines += [f"Edges measured by selective eviction ({edges_how(a.manifest)}):", "",
                      md_table(EDGE_HEADERS, edge_rows(a), [False, True, True, True, True, True, True, False, False]), ""]
        if graph_line(a):
            lines += [graph_line(a), ""]
    grids = grid_tables(runs)
    if grids:
        lines += ["## Sweep grids", "", *grids]
    return "\n".join(lines).rstrip("\n") + "\n"


# -- the index of many steps: one column spec, drawn as HTML, Markdown and console text ----------
@dataclass(frozen=True)
class IndexColumn:
    """One column of the index: the row key it reads, its header, right-aligned or not, its text,
    and whether it is the link to the row's section (the first: the step's name)."""
    key: str
    header: str
    right: bool
    text: Callable[[dict[str, Any]], str]
    link: bool = False


INDEX_HEADERS = {"share": "share [95 % CI]", "denominator": "share of", "activations": "activations' share [95 % CI]",
                 "versus_study": "against the study"}
INDEX_PERCENT = ("share", "activations")        # interval columns that are shares: printed in %
INDEX_KEPT = "judgement"                        # a column each row keeps even where all rows agree


def index_columns(rows: list[dict[str, Any]]) -> list[IndexColumn]:
    """The columns of StepAnswer.index_row() dicts, whatever keys they hold: `X` with `X_lo` and
    `X_hi` is one interval column (a percentage where X names a share), any other key its own
    column; the first (the step's name) links to the row's section, `run_dir` is said beside it,
    not a column of its own; a column n/a (or not measured) in every row is left out."""
    keys = list(dict.fromkeys(k for r in rows for k in r))
    out = []
    for k in keys:
        if k == "run_dir" or (k.endswith(("_lo", "_hi")) and k[:-3] in keys):
            continue
        if f"{k}_lo" in keys and f"{k}_hi" in keys:
            col = IndexColumn(k, INDEX_HEADERS.get(k, f"{k.replace('_', ' ')} [95 % CI]"), True,
                              lambda r, k=k: _interval(r.get(k), r.get(f"{k}_lo"), r.get(f"{k}_hi"),
                                                          any(w in k for w in INDEX_PERCENT)))
        else:
            col = IndexColumn(k, INDEX_HEADERS.get(k, k.replace("_", " ")), False, lambda r, k=k: _cell(r.get(k)),
                              link=k == keys[0])
        if any(col.text(r) not in ("", "n/a", "not measured") for r in rows):
            out.append(col)
    return out


def index_layout(rows: list[dict[str, Any]]) -> tuple[list[IndexColumn], list[str]]:
    """The index's columns, less any words every row shares (the denominator of every row, say):
    those are said once above the table ("share of: ..."), not repeated in each row."""
    cols = index_columns(rows)
    same = [c for c in cols if len(rows) > 1 and not c.link and not c.right and c.key != INDEX_KEPT
            and len({c.text(r) for r in rows}) == 1]
    return [c for c in cols if c not in same], [f"{c.header}: {c.text(rows[0])}" for c in same]


def _interval(m: Any, lo: Any, hi: Any, pct: bool) -> str:
    vals = [float(x) if isinstance(x, (int, float)) else math.nan for x in (m, lo, hi)]
    if not all(math.isfinite(v) for v in vals):
        return "n/a"
    if pct:
        return f"{100 * vals[0]:+.2f} % [{100 * vals[1]:+.2f}, {100 * vals[2]:+.2f}]"
    return f"{vals[0]:+.2f} [{vals[1]:+.2f}, {vals[2]:+.2f}]"


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    return f"{v:.2f}" if isinstance(v, float) else _words(str(v))


def slug_path(path: Path, paths: list[Path]) -> str:
    """A run dir as the page names it: relative to the folder all the page's runs share."""
    resolved = [Path(p).resolve() for p in paths]
    root = Path(os.path.commonpath([r.parent for r in resolved])) if resolved else Path()
    return Path(path).resolve().relative_to(root).as_posix()


def anchors(paths: list[Path]) -> list[str]:
    """Each run dir's anchor on the page (from its path below the shared folder: names may repeat)."""
    return ["step-" + re.sub(r"[^a-z0-9]+", "-", slug_path(p, paths).lower()).strip("-") for p in paths]


def index_text(runs: list[tuple[Path, Any]]) -> str:
    """The index on a terminal: the same columns, aligned, and the run dir of each row."""
    cols, said = index_layout([a.index_row() for _, a in runs])
    body = [[c.text(a.index_row()) for c in cols] + [slug_path(p, [q for q, _ in runs])] for p, a in runs]
    return "\n".join([*said, text_table([c.header for c in cols] + ["run dir"], body, [c.right for c in cols] + [False])])


def _words(judgement: str) -> str:
    """A judgement as prose (the enum's values are data, `not_measured` reads as two words)."""
    return "not measured" if judgement == Judgement.NOT_MEASURED.value else str(judgement)


def _edge_words(row: dict[str, Any]) -> str:
    """An edge's judgement: not judged where its control (rewarmed vs natural) fails."""
    if row["judgement"] == Judgement.NOT_MEASURED.value and str(row.get("control", "")).startswith("fail"):
        return "not judged (control fails)"
    return _words(row["judgement"])
