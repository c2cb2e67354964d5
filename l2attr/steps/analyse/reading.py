"""The step's answer in one number: the write-back-matched saving, over a named denominator, split
by what was reused (docs/step-method.md says why each piece is measured the way it is).

Per repeat i of a graph-surgery run, over the kernels that met a flush (overlapping ones left out):
  S_i(arm)  = sum_k (arm_k,i - natural_k,i) for arm in cold (clean), cold_matched, cold_dirty, cold_start
  T_i       = sum_k natural_k,i (the step's kernel time)
The answer is the matched arm's: median S(matched) with its bootstrap interval, where a write-back
reading made the arm; without one the answer is the clean/dirty bracket, and says so.

Denominators, each named wherever its share is printed:
  kernel time  per repeat S_i / T_i, median and bootstrap interval over repeats;
  graph replay the natural graph's replays (step_times.csv, blocking timer);
  eager step   the function called in a loop as a program runs it (manifest surgery.eager_us).
A share of the replay or the eager step is the saving's median over the denominator's median; its
interval divides the saving's interval by the denominator's (the far ends: the wider bound).

The split (the study's quantity is the reuse of activations) is steps/analyse/split.py's: every
part an interval of paired per-repeat values, the non-data cost measured per kernel node.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from l2attr.analysis.significance import Interval, compare
from l2attr.manifest_model import StepManifest, typed
from l2attr.steps.analyse.edges import OUTSIDE
from l2attr.steps.analyse.split import (DECIDE_HALF_WIDTH, STUDY, STUDY_CLAIM, Split, split,  # noqa: F401  (re-exported)
                                        versus_claim)
from l2attr.vocab import Judgement, L2Condition

MATCHED, START = L2Condition.COLD_MATCHED.value, L2Condition.COLD_START.value
KERNEL_TIME, REPLAY, EAGER = "the step's kernel time", "the graph replay", "the eager step"
@dataclass(frozen=True)
class Share:
    """A saving (µs, with its interval) as a share of one named denominator."""

    what: str
    denominator: str
    saving: Interval
    denominator_us: Interval
    share: Interval

    @property
    def judgement(self) -> Judgement:
        return judge(self.share.lo, self.share.hi)

    def words(self) -> str:
        s = self.share
        return f"{100 * s.median:+.2f} % [{100 * s.lo:+.2f}, {100 * s.hi:+.2f}] of {self.denominator}"


def judge(lo: float, hi: float) -> Judgement:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return Judgement.NOT_MEASURED
    return Judgement.WITHIN_NOISE if lo <= 0 <= hi else (Judgement.FASTER if lo > 0 else Judgement.SLOWER)


def per_repeat(k: pd.DataFrame, met: set[tuple[int, int]], skip: set[tuple[int, int]]) -> pd.DataFrame:
    """Per repeat: S_i for every cold arm present (saving_<arm>_us) and T_i (kernel_time_us). An arm's
    kernels meet the natural ones by (op_index, kernel_index) on the table's arrays, in the natural
    rows' order (a merge per repeat and arm was most of a step run's analysis); a key named twice
    in one arm (a checked run has none) is left to the merge and its cross product."""
    if k.duplicated(["step", "condition", "op_index", "kernel_index"]).any():
        return _per_repeat_merged(k, met, skip)
    cond, ident = k["condition"].to_numpy(dtype=object), list(zip(k["op_index"], k["kernel_index"]))
    dur, start = k["duration_us"].to_numpy(float), k["start_us"].to_numpy(float)
    rows = []
    for i, at in sorted(k.groupby("step").indices.items()):
        nat = at[cond[at] == L2Condition.NATURAL.value]
        if not len(nat):
            continue
        row: dict[str, Any] = {"step": int(i)}
        for arm in sorted(set(cond[at]) - {L2Condition.NATURAL.value}):
            took = {ident[j]: dur[j] for j in at[cond[at] == arm]}
            row[f"saving_{arm}_us"] = float(pd.Series([took[ident[j]] - dur[j] for j in nat if ident[j] in took
                                                       and ident[j] in met], dtype=float).sum())
        keep = np.array([ident[j] not in skip for j in nat], dtype=bool)
        row["kernel_time_us"] = float(pd.Series(dur[nat][keep]).sum())
        ends, starts = pd.Series(start[nat] + dur[nat]), pd.Series(start[nat])
        row["span_us"] = float(ends.max() - starts.min())
        rows.append(row)
    return pd.DataFrame(rows)


def _per_repeat_merged(k: pd.DataFrame, met: set[tuple[int, int]], skip: set[tuple[int, int]]) -> pd.DataFrame:
    key = ["op_index", "kernel_index"]
    rows = []
    for i, g in k.groupby("step"):
        n = g[g["condition"] == L2Condition.NATURAL.value]
        if n.empty:
            continue
        row: dict[str, Any] = {"step": int(i)}
        for arm in sorted(set(g["condition"]) - {L2Condition.NATURAL.value}):
            both = n.merge(g[g["condition"] == arm], on=key, suffixes=("_n", "_c"))
            both = both[[(a, b) in met for a, b in zip(both["op_index"], both["kernel_index"])]]
            row[f"saving_{arm}_us"] = float((both["duration_us_c"] - both["duration_us_n"]).sum())
        keep = [(a, b) not in skip for a, b in zip(n["op_index"], n["kernel_index"])]
        row["kernel_time_us"] = float(n.loc[keep, "duration_us"].sum())
        row["span_us"] = float((n["start_us"] + n["duration_us"]).max() - n["start_us"].min())
        rows.append(row)
    return pd.DataFrame(rows)


def of_kernel_time(what: str, saving: np.ndarray, kernel_time: np.ndarray) -> Share:
    """Per-repeat shares of the kernel time: their median and interval."""
    sh = saving / kernel_time
    return Share(what, KERNEL_TIME, Interval.of(saving), Interval.of(kernel_time), Interval.of(sh))


def of_denominator(what: str, saving: Interval, denominator: str, d: Interval) -> Share | None:
    """The saving over a timed denominator: median over median; the interval's ends divide the
    saving's ends by the denominator's far ends (the wider bound of the two)."""
    if not d.valid or not math.isfinite(saving.median):
        return None
    lo = saving.lo / (d.hi if saving.lo >= 0 else d.lo)
    hi = saving.hi / (d.lo if saving.hi >= 0 else d.hi)
    return Share(what, denominator, saving, d, Interval(saving.median / d.median, lo, hi))


def out_of_bracket(kern: pd.DataFrame) -> pd.Series:
    """Per kernel: the matched reading's interval lies wholly below the clean one or wholly above
    the dirty one (the program leaves between none and one L2 of dirty lines, so the matched arm
    must fall between the two, within intervals)."""
    need = {f"{MATCHED}_lo", f"{MATCHED}_hi", "cold_lo", "dirty_hi"}
    if not need <= set(kern.columns):
        return pd.Series(False, index=kern.index)
    return (kern[f"{MATCHED}_hi"] < kern["cold_lo"]) | (kern[f"{MATCHED}_lo"] > kern["dirty_hi"])


def eager_interval(manifest: dict[str, Any]) -> Interval:
    sf = typed(manifest, model=StepManifest).surgery
    got = (sf.eager_us if sf is not None else None) or []
    vals = [float(x) for x in got if isinstance(x, (int, float)) and math.isfinite(x) and x > 0]
    return Interval.of(vals) if len(vals) >= 2 else Interval(math.nan, math.nan, math.nan)


def matched_headline(ans: Any, name: str) -> str:
    """One sentence: the matched saving as a share of the named denominator, its judgement, the
    activations' share, the bracket that holds it, and where it stands against the study's bound."""
    p = ans.primary
    j = p.judgement
    word = {Judgement.FASTER: "worth", Judgement.SLOWER: "a cost of", Judgement.WITHIN_NOISE: "within noise at",
            Judgement.NOT_MEASURED: "not measured at"}[j]
    sv = p.saving
    head = (f"{name}: inter-kernel L2 reuse is {word} {abs(100 * p.share.median) if j == Judgement.SLOWER else 100 * p.share.median:.2f} % "
            f"of {p.denominator} [{100 * p.share.lo:.2f}, {100 * p.share.hi:.2f}] "
            f"({sv.median:+.1f} µs [{sv.lo:+.1f}, {sv.hi:+.1f}] against the write-back-matched cold arm, "
            f"of {p.denominator_us.median:.1f} µs)")
    a = ans.activations
    acts = ""
    if a is not None:
        acts = (f"; activations (reuse of what this step's kernels made) {100 * a.share.median:+.2f} % "
                f"[{100 * a.share.lo:+.2f}, {100 * a.share.hi:+.2f}], {versus_claim(a.share.lo, a.share.hi)}")
    dl, dh = ans.share_dirty_ci
    lo, hi = ans.share_ci
    bracket = (f"; bracket over kernel time: clean {100 * ans.share:+.2f} % [{100 * lo:+.2f}, {100 * hi:+.2f}], "
               f"matched {ans.matched.words().split(' of ')[0]}, dirty {100 * ans.share_dirty:+.2f} % "
               f"[{100 * dl:+.2f}, {100 * dh:+.2f}]")
    flagged = int(ans.kernels["out_of_bracket"].sum()) if "out_of_bracket" in ans.kernels else 0
    flag = f"; {flagged} kernel(s) read outside their bracket (flagged in the table)" if flagged else ""
    return head + acts + bracket + flag + "."


def _pct(sh: Share | None) -> str:
    if sh is None:
        return "n/a"
    s = sh.share
    return f"{100 * s.median:+.2f} % [{100 * s.lo:+.2f}, {100 * s.hi:+.2f}]"


def grid_rows(answers: list[Any]) -> pd.DataFrame:
    """One row per step of a grid: the matched saving over each denominator, the activations' share
    of the eager step, and its place against the study's bound (text cells, ready to print)."""
    rows = []
    for a in answers:
        acts = a.share_of("activations", EAGER)     # of the eager step only: never the replay unsaid
        lo, hi = a.share_ci
        dl, dh = a.share_dirty_ci
        rows.append({"step": a.name, "eager_us": f"{a.eager.denominator_us.median:.1f}" if a.eager else "n/a",
                     "eager_share": _pct(a.eager), "activations_share": _pct(acts),
                     "versus_study": versus_claim(acts.share.lo, acts.share.hi) if acts else
                     "not measured" if a.eager else "not measured (no eager loop recorded)",
                     "replay_share": _pct(a.replay), "kernel_share": _pct(a.matched),
                     "clean_share": f"{100 * a.share:+.2f} % [{100 * lo:+.2f}, {100 * hi:+.2f}]",
                     "dirty_share": f"{100 * a.share_dirty:+.2f} % [{100 * dl:+.2f}, {100 * dh:+.2f}]",
                     "out_of_bracket": int(a.kernels["out_of_bracket"].sum()) if "out_of_bracket" in a.kernels else 0})
    return pd.DataFrame(rows)


def grid_sentence(answers: list[Any]) -> str:
    """The study's answer over a grid, in one line: how many steps' activations lie below, above or
    not distinguishable from the bound, and the largest activations' share of the eager step."""
    got = [(a.name, a.share_of("activations", EAGER)) for a in answers]
    lost = sum(a.matched is not None and a.eager is None for a in answers)
    got = [(n, s) for n, s in got if s is not None]    # a step without its eager loop is left out, and said
    left = f" {lost} step(s) with no eager loop recorded are left out." if lost else ""
    if not got:
        return "No step of the grid has a matched arm and an eager step: the study's question is not answered." + left
    words = [versus_claim(s.share.lo, s.share.hi) for _, s in got]
    below = sum(w.startswith("below") for w in words)
    above = sum(w.startswith("above") for w in words)
    name, top = max(got, key=lambda x: x[1].share.median)
    return (f"Reuse of activations, as a share of the eager step, against the study's 0.65 %: {below} of {len(got)} "
            f"steps below it, {above} above it, {len(got) - below - above} not distinguishable from it; the largest is "
            f"{name} at {100 * top.share.median:.2f} % [{100 * top.share.lo:.2f}, {100 * top.share.hi:.2f}] "
            "(write-back-matched cold arm, eager step as it runs)." + left)


# -- the answer in words for a terminal: what repr(StepAnswer) and `l2attr step --show` print ------
def graph_line(ans: Any) -> str:
    """How a graph step's arms were made, and how well its replay matched the eager step."""
    from l2attr.steps.table import is_graph

    if not is_graph(ans.manifest):
        return ""
    g = typed(ans.manifest, model=StepManifest).graph
    said = g.model_dump(exclude_unset=True) if g is not None else {}      # as recorded: '?' where absent
    differ = "" if said.get("capture_ops_same", True) else "; the captured ops differ from the eager step's"
    return (f"CUDA graph step: natural = {said.get('natural', '?')}; cold = {said.get('cold', '?')}; "
            f"{said.get('matched_kernels', '?')} of {said.get('replay_kernels', '?')} replayed kernels matched to "
            f"the eager step's {said.get('eager_kernels', '?')} by name and order{differ}.")


def edges_how(m: dict[str, Any]) -> str:
    """How a run's edges were measured and at which level (kernel nodes or ops), and why not kernel-level."""
    t = typed(m, model=StepManifest)
    why = t.kernel_edges_error
    parts = [t.edges_method, t.edges_level,
             f"kernel-level edges not read: {why}" if why else ""]
    return "; ".join(str(p) for p in parts if p)


def measured_edge_lines(ans: Any, n: int = 5) -> list[str]:
    """The CLI's lines: the measured edges, one sentence each (steps/analyse/edges.describe)."""
    e = getattr(ans, "measured_edges", None)
    if e is None or not len(e):
        return []
    from l2attr.steps.analyse.edges import describe as describe_edge

    return [f"edges measured by selective eviction ({edges_how(ans.manifest)}):",
            *[describe_edge(r) for r in e.head(n).to_dict("records")]]


def dram_lines(path: Path) -> list[str]:
    """The step's DRAM bytes under Nsight Compute, where `l2attr step --ncu` measured them."""
    from l2attr.steps.check.rules import check_step_dram
    from l2attr.rundir import RunDir
    from l2attr.schema import STEP_DRAM

    run = RunDir.open(path)
    if not run.has(STEP_DRAM):
        return []
    t = dram_totals(check_step_dram(run.read(STEP_DRAM), run.path))
    return ["", f"DRAM read + write per step under Nsight Compute (application replay): "
                f"{t['none'] / 1e6:.2f} MB with cache control none, {t['all'] / 1e6:.2f} MB with cache control all "
                f"(flushed before every kernel): {(t['all'] - t['none']) / 1e6:+.2f} MB kept off DRAM by reuse."]


def top_kernels(ans: Any, n: int = 10) -> pd.DataFrame:
    k = ans.kernels[ans.kernels["met_flush"]] if len(ans.kernels) else ans.kernels
    return k.reindex(k["saving_us"].abs().sort_values(ascending=False).index).head(n)


def top_edges(ans: Any, ops: pd.DataFrame, n: int = 10) -> pd.DataFrame:
    e = ans.edges[ans.edges["producer"] != OUTSIDE].dropna(subset=["attributed_saving_us"])
    e = e.reindex(e["attributed_saving_us"].abs().sort_values(ascending=False).index).head(n)
    name = dict(zip(ops["op_index"], ops["op"]))
    return e.assign(producer_op=e["producer"].map(name), consumer_op=e["consumer"].map(name))


def describe_kernel(row: Any) -> str:
    return f"{row['op']}#{row['op_index']} {str(row['kernel'])[:60]}"


def dram_totals(dram: pd.DataFrame) -> dict[str, float]:
    """DRAM read + write bytes of one profiled step, per cache control (none, all)."""
    return {str(cc): float(g["value"].sum()) for cc, g in dram.groupby("cache_control")}


def dram_per_kernel(dram: pd.DataFrame) -> pd.DataFrame:
    """Per (op, kernel): read + write bytes with the L2 as left and with caches flushed."""
    s = dram.groupby(["op_index", "kernel_index", "kernel", "cache_control"])["value"].sum().unstack("cache_control")
    s.columns.name = None
    return s.reset_index()


def summary(ans: Any) -> str:
    """Everything a terminal shows of one step answer (`l2attr step --show` prints `repr(ans)`)."""
    lines = [f"<StepAnswer: {len(ans.kernels)} kernels>", ans.headline(), "top kernels (saving = cold - natural, median µs):"]
    top = top_kernels(ans, 8).to_dict("records")
    width = max((len(str(r["judgement"])) for r in top), default=0)      # the kernel column starts in one place
    for r in top:
        lines.append(f"  {r['saving_us']:+8.2f}  {r['natural_us']:8.2f} -> {r['cold_us']:8.2f}  "
                     f"{str(r['judgement']):<{width}}  {describe_kernel(r)}")
    edges = top_edges(ans, ans.ops, 5) if ans.ops is not None else []
    if len(edges):
        lines.append("top edges (a consumer's saving split over its inputs by bytes):")
        for r in edges.to_dict("records"):
            lines.append(f"  {r['attributed_saving_us']:+8.2f}  {r['producer_op']}#{r['producer']} -> "
                         f"{r['consumer_op']}#{r['consumer']}  {r['bytes'] / 1e6:.2f} MB")
    lines += [f"  {x}" if i else x for i, x in enumerate(measured_edge_lines(ans))]
    lines += [x for x in [graph_line(ans), *(dram_lines(ans.run_dir) if ans.run_dir is not None else [])] if x]
    if ans.run_dir is not None:
        lines.append(f"  run dir: {ans.run_dir}")
    return "\n".join(lines)


def compare_step_times(base: StepAnswer, other: StepAnswer) -> str:
    """Is `other`'s untraced step faster than `base`'s? (same process and GPU: in-run intervals)"""
    j = compare(base.step_time, other.step_time)
    if j.judgement == Judgement.NOT_MEASURED:
        return "step times not measured"
    word = {Judgement.WITHIN_NOISE: "no different within noise"}.get(j.judgement, j.judgement.value)
    return (f"{other.step_time.median:.1f} µs against {base.step_time.median:.1f} µs: {word} "
            f"({j.speedup:.3f}x [{j.lo:.3f}, {j.hi:.3f}])")
