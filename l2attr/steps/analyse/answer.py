"""What inter-kernel L2 reuse is worth in a whole step, from step_kernels.csv and step_ops.csv.

Per kernel (op, order within the op): natural against cold medians with their intervals (each
widened by one tick of the clock that timed it: significance.clock_tick_us), judged by
analysis.significance. A kernel's saving is cold - natural; only the first kernel of each flushed
op met a flush (an op's later kernels run after its first, so their L2 is the op's own): the
others are reported, never summed. Per step pair i (the natural and the cold step of the same
index): the saving S_i is the sum over flushed kernels, the step time T_i the natural step's
kernel time; the answer is median(S_i / T_i) with a bootstrap interval over the pairs, "within
noise" when the interval holds 0.

Edges come from tensor identity: op C read bytes that op P (the latest earlier op to write them)
returned. A consumer kernel's saving is split over its inputs by bytes (produced in the step by
an edge's producer, or from before the step: weights, inputs, caches): an attribution, not a
separate measurement, and said so wherever it is shown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from l2attr.analysis.significance import Interval, clock_tick_us, compare
from l2attr.manifest_model import StepManifest, Surgery, typed
from l2attr.measure.stats import bootstrap_median_ci
from l2attr.steps.analyse.reading import (EAGER, KERNEL_TIME, MATCHED, REPLAY, START, STUDY, STUDY_CLAIM, Share,  # noqa: F401
                                          Split, eager_interval, of_denominator, of_kernel_time, out_of_bracket,
                                          describe_kernel, dram_per_kernel, dram_totals, matched_headline, per_repeat, split, top_edges,
                                          top_kernels, versus_claim)
from l2attr.steps.analyse.edges import EDGE_COLUMNS, OUTSIDE, edges  # noqa: F401  (re-exported)
from l2attr.steps.analyse.split import first_node, losses
from l2attr.names import UNMATCHED, name_op  # noqa: F401  (re-exported: the readers call them here)
from l2attr.vocab import Judgement, Command, L2Condition, StepMode

KERNEL_TIME_CLEAN = "the step's kernel time (clean-cold arm: no write-back reading)"



def bracket(clean: Judgement, dirty: Judgement | None) -> Judgement:
    """One judgement from the two cold readings. The program leaves at most one L2 of dirty lines, so
    the cold arm that pays natural's write-back lies between clean-cold and dirty-cold: a word holds
    only where both readings say it; slower than clean-cold alone is the predecessors' write-back."""
    if dirty is None or dirty == Judgement.NOT_MEASURED:
        return clean
    if clean == dirty:
        return clean
    if clean == Judgement.SLOWER:
        return Judgement.WRITE_BACK
    return Judgement.DEPENDS


def overlapped(k: pd.DataFrame) -> pd.Series:
    """Per row of `k`: did this natural kernel run at the same time as another kernel of its replay?
    (Sorted by start, kernel i overlaps an earlier one when the latest end before it passes its
    start, and a later one when the next start comes before its end.) Cold rows: False."""
    out = pd.Series(False, index=k.index)
    nat = k[k["condition"] == L2Condition.NATURAL.value]
    for _, g in nat.groupby("step"):
        g = g.sort_values("start_us")
        s = g["start_us"].to_numpy(float)
        e = s + g["duration_us"].to_numpy(float)
        before = np.concatenate([[-np.inf], np.maximum.accumulate(e)[:-1]]) > s
        after = np.concatenate([s[1:] < e[:-1], [False]])
        out.loc[g.index] = before | after
    return out


def per_kernel(k: pd.DataFrame, ops: pd.DataFrame, every_kernel: bool = False) -> pd.DataFrame:
    """One row per (op_index, kernel_index): medians, intervals, saving, judgement. `every_kernel`:
    graph surgery flushed before each kernel (else only an op's first kernel met the flush). With a
    cold_dirty arm, both savings and the bracketed judgement."""
    rows = []
    flushed = dict(zip(ops["op_index"], ops["flushed_in_cold"].astype(str).str.lower() == "true")) if len(ops) else {}
    names = dict(zip(ops["op_index"], ops["op"])) if len(ops) else {}
    modules = dict(zip(ops["op_index"], ops["module"].map(lambda x: "" if pd.isna(x) else str(x)))) if len(ops) else {}
    # one kernel's rows by position in the table's arrays (its group's row order), not a frame per
    # kernel filtered once per arm: that was half of a step run's analysis
    beside = (overlapped(k) if every_kernel else pd.Series(False, index=k.index)).to_numpy(bool)
    cond, dur = k["condition"].to_numpy(dtype=object), k["duration_us"].to_numpy(float)
    tick = clock_tick_us(dur)            # every interval at least one clock tick each side of its median
    of = (lambda v: Interval.of(v).widened(tick))                 # noqa: E731
    kernels, nodes = k["kernel"].to_numpy(dtype=object), k["node"].to_numpy() if "node" in k.columns else None
    for (op, ki), at in sorted(k.groupby(["op_index", "kernel_index"]).indices.items()):
        arms = {c: dur[at[cond[at] == c]] for c in set(cond[at])}
        nat, cold = (arms.get(c, dur[:0]) for c in (L2Condition.NATURAL.value, L2Condition.COLD.value))
        if not len(nat) or not len(cold):
            continue
        ni, ci = of(nat), of(cold)
        j = compare(ci, ni)
        dirty = arms.get(L2Condition.COLD_DIRTY.value, dur[:0])
        di = of(dirty) if len(dirty) else None
        jd = compare(di, ni).judgement if di is not None else None
        op_name = names.get(op, name_op(kernels[at[0]]) if int(op) == UNMATCHED else "?")
        row = {"op_index": int(op), "kernel_index": int(ki), "op": op_name, "module": modules.get(op, ""),
               "kernel": kernels[at[0]], "natural_us": ni.median, "natural_lo": ni.lo, "natural_hi": ni.hi,
               "cold_us": ci.median, "cold_lo": ci.lo, "cold_hi": ci.hi, "saving_us": ci.median - ni.median,
               "judgement": bracket(j.judgement, jd).value, "clean_judgement": j.judgement.value,
               "overlapped": bool(beside[at[cond[at] == L2Condition.NATURAL.value]].mean() > 0.5),
               "met_flush": every_kernel or (bool(flushed.get(op, False)) and int(ki) == 0)}
        if nodes is not None:
            row["node"] = int(nodes[at[0]])
        if row["overlapped"]:
            row["judgement"] = Judgement.OVERLAPPED.value
        if di is not None:
            row.update({"dirty_us": di.median, "dirty_lo": di.lo, "dirty_hi": di.hi,
                        "saving_dirty_us": di.median - ni.median, "dirty_judgement": jd.value,
                        "write_back_bound_us": max(0.0, di.median - ci.median)})
        arm_iv = {}
        for arm in (MATCHED, START, L2Condition.REWARMED.value, L2Condition.WARM_INPUTS.value):
            v = arms.get(arm, dur[:0])
            if len(v):
                ai = arm_iv[arm] = of(v)
                row.update({f"{arm}_us": ai.median, f"{arm}_lo": ai.lo, f"{arm}_hi": ai.hi,
                            f"saving_{arm}_us": ai.median - ni.median})
        if MATCHED in arm_iv:                  # the answer's arm judges the kernel
            row["judgement"] = (Judgement.OVERLAPPED.value if row["overlapped"] else
                                compare(arm_iv[MATCHED], ni).judgement.value)
        rows.append(row)
    out = pd.DataFrame(rows)
    return out.assign(out_of_bracket=out_of_bracket(out), clock_tick_us=tick) if len(out) else out


@dataclass(frozen=True)
class StepAnswer:
    kernels: pd.DataFrame
    pairs: pd.DataFrame
    edges: pd.DataFrame
    kernel_time_us: float
    span_us: float
    saving_us: float
    saving_ci: tuple[float, float]
    share: float
    share_ci: tuple[float, float]
    judgement: str
    step_time: Interval = Interval(math.nan, math.nan, math.nan)
    share_dirty: float = math.nan                       # the write-back-paying cold arm's reading
    share_dirty_ci: tuple[float, float] = (math.nan, math.nan)
    clean_judgement: str = ""
    note: str = ""                                      # a first line the answer must open with
    every_kernel: bool = False                          # graph surgery: every kernel met its own flush
    name: str = ""                                      # the step's name (l2attr.step sets it)
    run_dir: Path | None = None                         # where it was written (l2attr.step sets it)
    manifest: dict[str, Any] = field(default_factory=dict)   # the run's manifest (a loaded run's answer)
    ops: pd.DataFrame | None = None                     # the step's ops (a loaded run's answer)
    measured_edges: pd.DataFrame = field(default_factory=pd.DataFrame)   # edges by selective eviction
    matched: Share | None = None                        # the write-back-matched saving over kernel time
    replay: Share | None = None                         # ... over the graph replay
    eager: Share | None = None                          # ... over the eager step (a function's loop)
    parts: Split | None = None                          # the matched saving split by what was reused
    write_back_missing: str = ""                        # why there is no matched arm (the bracket is the answer)

    @property
    def primary(self) -> Share | None:
        """The answer's share: the matched saving over the eager step for a function, over the replay
        for the user's own graph; over kernel time where neither was timed."""
        return self.eager or self.replay or self.matched

    @property
    def activations(self) -> Share | None:
        """The activations' share of the primary denominator (the split's activations over it)."""
        p, sp = self.primary, self.parts
        if p is None or sp is None:
            return None
        return of_denominator("activations", sp.activations, p.denominator, p.denominator_us)

    @property
    def headroom(self) -> Share | None:
        """Natural minus every kernel's inputs resident, over the primary denominator: what perfect
        residency would add to what reuse is worth today (None without the warm_inputs arm)."""
        p, sp = self.primary, self.parts
        if p is None or sp is None or sp.headroom is None:
            return None
        return of_denominator("headroom", sp.headroom, p.denominator, p.denominator_us)

    def share_of(self, what: str, denominator: str) -> Share | None:
        """The matched saving's or a part's share of a named denominator (EAGER, REPLAY, KERNEL_TIME)."""
        base = {EAGER: self.eager, REPLAY: self.replay, KERNEL_TIME: self.matched}.get(denominator)
        if base is None:
            return None
        if what == "matched":
            return base
        part = getattr(self.parts, what, None) if self.parts is not None else None
        if part is None:
            return None
        d = base.denominator_us if denominator != KERNEL_TIME else Interval.of(self.pairs["kernel_time_us"])
        return of_denominator(what, part, denominator, d)

    # -- the result-object shape every front-door verb shares (.cells, .verdict, .run_dir, repr) --
    @property
    def cells(self) -> pd.DataFrame:
        """The tidy per-kernel table the answer was judged from."""
        return self.kernels

    @property
    def verdict(self) -> pd.DataFrame:
        """One row: the index row (the answer's share, its denominator, the activations' share) with
        the headline."""
        return pd.DataFrame([{**self.index_row(), "headline": self.headline()}])

    def __repr__(self) -> str:
        """What `l2attr step --show` prints: the headline, the top kernels and edges, where it lives."""
        from l2attr.steps.analyse.reading import summary

        return summary(self)

    @property
    def step_share(self) -> tuple[float, float, float]:
        """Saving over the untraced step time: (median, lo, hi), the bounds from both intervals."""
        t = self.step_time
        if not t.valid:
            return (math.nan, math.nan, math.nan)
        lo, hi = self.saving_ci
        return (self.saving_us / t.median, lo / t.hi if lo >= 0 else lo / t.lo, hi / t.lo if hi >= 0 else hi / t.hi)

    @classmethod
    def from_run(cls, path: Path | str) -> "StepAnswer":
        """The answer of a step run dir on disk (checked as `l2attr report` checks it), named and
        placed: what `l2attr.step` returned when it measured it."""
        return analyse_step(Path(path))

    def index_row(self) -> dict[str, Any]:
        """One row of a many-step index: the step, its answer's share (the matched saving over the
        eager step or the replay where measured, else the clean reading over kernel time) with the
        denominator it is of, the activations' share and its place against the study's bound, the
        judgement, where it lives."""
        p, a = self.primary, self.activations
        share = p.share if p is not None else Interval(self.share, *self.share_ci)
        return {"step": self.name or Command.STEP.value, "share": share.median, "share_lo": share.lo,
                "share_hi": share.hi, "denominator": p.denominator if p is not None else KERNEL_TIME_CLEAN,
                "activations": a.share.median if a is not None else math.nan,
                "activations_lo": a.share.lo if a is not None else math.nan,
                "activations_hi": a.share.hi if a is not None else math.nan,
                "versus_study": versus_claim(a.share.lo, a.share.hi) if a is not None else "not measured",
                "judgement": self.judgement, "run_dir": str(self.run_dir) if self.run_dir is not None else ""}

    def headline(self, name: str | None = None) -> str:
        """One sentence; 'worth' / 'costs' only beyond noise (the share's interval excludes 0) and, with
        a write-back-paying cold arm, only where both cold readings agree (analysis.step.bracket)."""
        name = name or self.name or Command.STEP.value
        if self.primary is not None:
            return (f"{self.note}\n" if self.note else "") + matched_headline(self, name)
        lo, hi = self.share_ci
        span = f"[{100 * lo:.2f}, {100 * hi:.2f}]"
        first = f"{self.note}\n" if self.note else ""
        if self.judgement in (Judgement.WRITE_BACK.value, Judgement.DEPENDS.value):
            dlo, dhi = self.share_dirty_ci
            verb = "the difference is" if self.judgement == Judgement.WRITE_BACK.value else "its sign"
            what = (f"{verb} {self.judgement}: against a clean-cold arm the kernels are {100 * self.share:+.2f} % "
                    f"{span} of the step's kernel time, against a cold arm that pays a full L2 of write-back "
                    f"{100 * self.share_dirty:+.2f} % [{100 * dlo:.2f}, {100 * dhi:.2f}]")
            return first + (f"{name}: for inter-kernel L2 reuse {what} (saving = cold - natural; "
                            f"{self.kernel_time_us:.1f} µs of kernels per step){self._no_match()}.")
        if self.judgement == Judgement.WITHIN_NOISE.value:
            what = f"within noise: {100 * self.share:+.2f} % of the step's kernel time {span}"
        elif self.judgement == Judgement.FASTER.value:
            what = f"worth {100 * self.share:.2f} % of the step's kernel time {span}"
        else:
            what = (f"a cost, not a saving: the kernels are {100 * -self.share:.2f} % slower as the program "
                    f"leaves L2 than after a clean flush {span}")
        step = ""
        if self.step_time.valid:
            m, a, b = self.step_share
            whole = REPLAY.removeprefix("the ") if self.every_kernel else Command.STEP.value
            step = f", {100 * m:+.2f} % [{100 * a:+.2f}, {100 * b:+.2f}] of the {self.step_time.median:.1f} µs {whole}"
        where = "kernel node" if self.every_kernel else "op"
        return first + (f"{name}: inter-kernel L2 reuse is {what}; clean-cold before each {where}, the kernels take "
                f"{self.saving_us:+.1f} µs [{self.saving_ci[0]:+.1f}, {self.saving_ci[1]:+.1f}]{step} "
                f"({self.kernel_time_us:.1f} µs of kernels per step){self._no_match()}.")

    def _no_match(self) -> str:
        return (f"; no write-back-matched arm ({self.write_back_missing}): the clean and dirty readings are the "
                "bracket" if self.write_back_missing and self.every_kernel else "")


def _judge(lo: float, hi: float) -> Judgement:
    return Judgement.WITHIN_NOISE if lo <= 0 <= hi else (Judgement.FASTER if lo > 0 else Judgement.SLOWER)


def answer(k: pd.DataFrame, ops: pd.DataFrame, times: pd.DataFrame | None = None,
           every_kernel: bool = False, manifest: dict[str, Any] | None = None,
           first: Any = None, **facts: Any) -> StepAnswer:
    """The answer, built once from a run's tables and its manifest (the eager loop, the control,
    why no write-back reading): the clean and dirty readings always, the matched one where it was
    measured. `first(kernels)`: the line it must open with; `facts`: the run's name, place, ops
    and measured edges."""
    kern = per_kernel(k, ops, every_kernel)
    skip = {(int(r.op_index), int(r.kernel_index)) for r in kern.itertuples() if r.overlapped}
    met = {(int(r.op_index), int(r.kernel_index)) for r in kern.itertuples() if r.met_flush} - skip
    pairs = per_repeat(k, met, skip)
    pairs = pairs.rename(columns={"saving_cold_us": "saving_us", "saving_cold_dirty_us": "saving_dirty_us"})
    kt = pairs["kernel_time_us"].to_numpy(float)
    shares = pairs["saving_us"].to_numpy(float) / kt
    s_lo, s_hi = bootstrap_median_ci(pairs["saving_us"].to_numpy(float))
    lo, hi = bootstrap_median_ci(shares)
    clean = _judge(lo, hi)
    d_share, d_ci, dirty = math.nan, (math.nan, math.nan), None
    if "saving_dirty_us" in pairs and pairs["saving_dirty_us"].notna().all() and len(pairs):
        d = (pairs["saving_dirty_us"] / pairs["kernel_time_us"]).to_numpy(float)
        d_share, d_ci = float(np.median(d)), bootstrap_median_ci(d)
        dirty = _judge(*d_ci)
    judgement = bracket(clean, dirty).value
    step = Interval(math.nan, math.nan, math.nan)
    if times is not None and len(times):
        kept = times[times["discard"].map(lambda x: "" if pd.isna(x) else str(x)) == ""]["step_us"].to_numpy(float)
        if len(kept):
            step = Interval.of(kept)
    m = manifest or {}
    sf = typed(m, model=StepManifest).surgery or Surgery()
    matched = replay = eager = parts = None
    if f"saving_{MATCHED}_us" in pairs and len(pairs):
        matched = of_kernel_time("matched", pairs[f"saving_{MATCHED}_us"].to_numpy(float), kt)
        replay = of_denominator("matched", matched.saving, REPLAY, step)
        eager = of_denominator("matched", matched.saving, EAGER, eager_interval(m))
        judgement = (eager or replay or matched).judgement.value        # the headline's share's word
        control = [float(x) for x in sf.control_us or []]      # finite: the model's rule
        unread = sf.rewarm_unread
        first_d = first_node(k) if L2Condition.REWARMED.value in set(k["condition"]) else None
        parts = split(pairs, control, len(met), first_d, len(unread) if isinstance(unread, list) else None)
    return StepAnswer(kern, pairs, edges(ops, kern), float(np.median(kt)),
                      float(pairs["span_us"].median()), float(pairs["saving_us"].median()), (s_lo, s_hi),
                      float(np.median(shares)), (lo, hi), judgement, step, d_share, d_ci, clean.value,
                      every_kernel=every_kernel, matched=matched, replay=replay, eager=eager, parts=parts,
                      write_back_missing=str(sf.write_back_missing or ""),
                      note="\n".join(x for x in (losses(m, eager is not None, replay is not None, parts is not None)
                                                  if matched is not None else "", first(kern) if first else "") if x),
                      manifest=m,
                      ops=facts.pop("ops_table", None), **facts)


def analyse_step(path: Path) -> StepAnswer:
    """A step run dir's answer, checked as `l2attr report` checks it (steps/table.py)."""
    from l2attr.steps.analyse.edges import edge_results
    from l2attr.steps.table import _edge_fields, edge_names, first_line, load_edges, load_step, step_name
    from l2attr.rundir import RunDir

    m, k, ops, times = load_step(path)
    surgery = typed(m, model=StepManifest).mode == StepMode.SURGERY.value
    raw = load_edges(RunDir.open(Path(path)))
    if len(raw):
        _edge_fields(m, Path(path))
    edges = edge_results(raw, edge_names(m, k, ops)) if len(raw) else pd.DataFrame()
    return answer(k, ops, times, every_kernel=surgery, manifest=m, first=lambda kern: first_line(m, kern),
                  name=step_name(m), run_dir=Path(path), ops_table=ops, measured_edges=edges)
