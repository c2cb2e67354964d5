"""Step runs as Markdown: the README's generated block and the CLI share it (analysis/step.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from l2attr.analysis.step import compare_step_times, describe_kernel, top_edges, top_kernels, versus_claim
from l2attr.report.markdown import md_table


def step_markdown(ans: Any, path: Path, root: Path | None = None) -> str:
    name = (ans.manifest.get("step") or {}).get("name", path.name)
    gpu = ans.manifest.get("gpu") or {}
    where = path.relative_to(root) if root is not None else path
    m, lo, hi = ans.step_share
    lines = [f"**{name}** (`{where}`, {gpu.get('name', '?')} `{gpu.get('uuid', '?')}`)", "", ans.headline(name), "",
             f"Share of the untraced step time: {100 * m:+.2f} % [{100 * lo:+.2f}, {100 * hi:+.2f}], "
             f"{versus_claim(lo, hi)}.", ""]
    rows = [[describe_kernel(r), f"{r['natural_us']:.2f}", f"{r['cold_us']:.2f}", f"{r['saving_us']:+.2f}", r["judgement"]]
            for r in top_kernels(ans, 3).to_dict("records")]
    lines.append(md_table(["kernel (op#index)", "natural µs", "cold µs", "saving µs", "judgement"], rows,
                          [False, True, True, True, False]))
    edges = top_edges(ans, ans.ops, 3)
    if len(edges):
        lines += ["", "Top edges (saving split by input bytes: attributed): " + "; ".join(
            f"{r['producer_op']}#{r['producer']} -> {r['consumer_op']}#{r['consumer']} "
            f"{r['attributed_saving_us']:+.2f} µs ({r['bytes'] / 1e6:.1f} MB)" for r in edges.to_dict("records")) + "."]
    lines += dram_lines(path)
    lines.append("")
    return "\n".join(lines)


def dram_lines(path: Path) -> list[str]:
    """The step's DRAM bytes under Nsight Compute, where `l2attr step --ncu` measured them."""
    from l2attr.analysis.step import dram_totals
    from l2attr.rundir import RunDir
    from l2attr.schema import STEP_DRAM

    run = RunDir.open(path)
    if not run.has(STEP_DRAM):
        return []
    t = dram_totals(run.read(STEP_DRAM))
    return ["", f"DRAM read + write per step under Nsight Compute (application replay): "
                f"{t['none'] / 1e6:.2f} MB with cache control none, {t['all'] / 1e6:.2f} MB with cache control all "
                f"(flushed before every kernel): {(t['all'] - t['none']) / 1e6:+.2f} MB kept off DRAM by reuse."]


def steps_markdown(runs: list[tuple[Path, Any]], root: Path | None = None, base: str | None = None) -> str:
    """Every step run; with `base`, the untraced step times of the others against the run of that name."""
    out = [step_markdown(a, p, root) for p, a in runs]
    by_name = {(a.manifest.get("step") or {}).get("name"): a for _, a in runs}
    if base in by_name:
        out.append(f"Untraced step time against `{base}`:")
        out.append("")
        for n, a in by_name.items():
            if n != base and n and n.startswith(base.rsplit("-", 2)[0]):
                out.append(f"- `{n}`: {compare_step_times(by_name[base], a)}")
        out.append("")
    return "\n".join(out)
