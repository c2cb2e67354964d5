"""Experiment runs as Markdown: the README's generated block and `report --format md` share it.

Every figure comes from analysis (experiment.py, experiment_dram.py) over the run dirs named; a
test regenerates the README block from the committed runs and fails when they disagree.
"""

from __future__ import annotations

import math
from pathlib import Path

from l2attr.analysis.experiment_dram import describe
from l2attr.analysis.experiment_load import ExperimentAnalysis
from l2attr.report.markdown import md_table
from l2attr.vocab import L2Condition, Quantity, Role, Timer


def _ci(cells, cond: str, q: Quantity, t: Timer) -> str:
    m = cells[(cells["condition"] == cond) & (cells["quantity"] == q.value) & (cells["timer"] == t.value)]
    if m.empty:
        return "—"
    r = m.iloc[0]
    return f"{r['median_us']:.2f} [{r['ci95_lo_us']:.2f}, {r['ci95_hi_us']:.2f}]"


def _dram(an: ExperimentAnalysis, cond: str) -> str:
    d = an.dram
    if d.empty or "dram_read" not in d:
        return "—"
    m = d[(d["condition"] == cond) & (d["role"] == Role.CONSUMER.value)]
    return "—" if m.empty or not math.isfinite(float(m.iloc[0]["dram_read"])) else f"{m.iloc[0]['dram_read'] / 1e6:.2f} MB"


def experiment_markdown(an: ExperimentAnalysis, root: Path | None = None) -> str:
    """One experiment run: its headline, a table per condition, the control, where it ran."""
    m = an.run.manifest
    decl = m.get("experiment") or {}
    gpu = m.get("gpu") or {}
    where = an.run.path.relative_to(root) if root is not None else an.run.path
    lines = [f"**{decl.get('name', where.name)}** (`{where}`, {gpu.get('name', '?')} `{gpu.get('uuid', '?')}`, "
             f"timer {(m.get('timer') or {}).get('kind', '?')})", ""]
    lines += [f"{h}", ""] if not an.verdict.empty and (h := an.verdict.iloc[0]["headline"]) else []
    rows = []
    for cond in decl.get("conditions", []):
        rows.append([cond, _ci(an.run.cells, cond, Quantity.PRODUCER, Timer.KERNEL),
                     _ci(an.run.cells, cond, Quantity.CONSUMER, Timer.KERNEL),
                     _ci(an.run.cells, cond, Quantity.PRODUCER, Timer.WALL),
                     _ci(an.run.cells, cond, Quantity.CALL, Timer.WALL), _dram(an, cond)])
    lines.append(md_table(["condition", "producer kernel µs", "consumer kernel µs", "producer step (wall) µs",
                           "call (wall) µs", "consumer DRAM read"], rows, [False, True, True, True, True, True]))
    lines += ["", describe(an.control) if an.control else "validity control: not profiled", ""]
    return "\n".join(lines)


def experiments_markdown(analyses: list[ExperimentAnalysis], root: Path | None = None) -> str:
    return "\n".join(experiment_markdown(a, root) for a in analyses)


__all__ = ["experiment_markdown", "experiments_markdown", "L2Condition"]
