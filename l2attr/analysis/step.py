"""What inter-kernel L2 reuse is worth in a whole step, from step_kernels.csv and step_ops.csv.

Per kernel (op, order within the op): natural against cold medians with their intervals, judged by
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

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from l2attr.analysis.significance import Interval, compare
from l2attr.measure.stats import bootstrap_median_ci
from l2attr.vocab import Judgement, Command, L2Condition

OUTSIDE = -1   # producer index of bytes no op of the step wrote
UNMATCHED = -2  # op_index of a graph kernel no eager op launched (attributed by its name, name_op)
EDGE_COLUMNS = ["producer", "consumer", "bytes", "attributed_saving_us"]   # op indices, bytes, µs


def name_op(kernel: str) -> str:
    """An op name from a kernel's own name, for kernels no eager op launched: Inductor's
    `triton_<kind>_fused_<ops>_<n>` says what it fused; any other, its function's identifier."""
    s = str(kernel)
    if s.startswith("triton_"):
        parts = s.split("_")
        body = parts[2:-1] if parts[-1].isdigit() else parts[2:]
        return "triton:" + "_".join(body)
    s = s.removeprefix("void ")
    head = s.split("(")[0].split("<")[0]
    return head.rsplit("::", 1)[-1] or s[:40]


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
    beside = overlapped(k) if every_kernel else pd.Series(False, index=k.index)
    for (op, ki), g in k.groupby(["op_index", "kernel_index"], sort=True):
        nat = g.loc[g["condition"] == L2Condition.NATURAL.value, "duration_us"].to_numpy(float)
        cold = g.loc[g["condition"] == L2Condition.COLD.value, "duration_us"].to_numpy(float)
        if not len(nat) or not len(cold):
            continue
        ni, ci = Interval.of(nat), Interval.of(cold)
        j = compare(ci, ni)
        dirty = g.loc[g["condition"] == L2Condition.COLD_DIRTY.value, "duration_us"].to_numpy(float)
        di = Interval.of(dirty) if len(dirty) else None
        jd = compare(di, ni).judgement if di is not None else None
        op_name = names.get(op, name_op(g["kernel"].iloc[0]) if int(op) == UNMATCHED else "?")
        row = {"op_index": int(op), "kernel_index": int(ki), "op": op_name, "module": modules.get(op, ""),
               "kernel": g["kernel"].iloc[0], "natural_us": ni.median, "natural_lo": ni.lo, "natural_hi": ni.hi,
               "cold_us": ci.median, "cold_lo": ci.lo, "cold_hi": ci.hi, "saving_us": ci.median - ni.median,
               "judgement": bracket(j.judgement, jd).value, "clean_judgement": j.judgement.value,
               "overlapped": bool(beside.loc[g[g["condition"] == L2Condition.NATURAL.value].index].mean() > 0.5),
               "met_flush": every_kernel or (bool(flushed.get(op, False)) and int(ki) == 0)}
        if "node" in g.columns:
            row["node"] = int(g["node"].iloc[0])
        if row["overlapped"]:
            row["judgement"] = Judgement.OVERLAPPED.value
        if di is not None:
            row.update({"dirty_us": di.median, "dirty_lo": di.lo, "dirty_hi": di.hi,
                        "saving_dirty_us": di.median - ni.median, "dirty_judgement": jd.value,
                        "write_back_bound_us": max(0.0, di.median - ci.median)})
        rows.append(row)
    return pd.DataFrame(rows)


def _pairs(k: pd.DataFrame, met: set[tuple[int, int]], skip: set[tuple[int, int]] | None = None) -> pd.DataFrame:
    """Per step index: saving S_i over kernels that met a flush, natural kernel time T_i, span;
    the `skip` kernels (ran beside another in natural) left out of S_i and T_i, not of the span."""
    out = []
    skip = skip or set()
    for i, g in k.groupby("step"):
        n = g[g["condition"] == L2Condition.NATURAL.value]
        c = g[g["condition"] == L2Condition.COLD.value]
        if n.empty or c.empty:
            continue
        key = ["op_index", "kernel_index"]
        both = n.merge(c, on=key, suffixes=("_n", "_c"))
        mine = both[[(a, b) in met for a, b in zip(both["op_index"], both["kernel_index"])]]
        d = g[g["condition"] == L2Condition.COLD_DIRTY.value]
        dmine = n.merge(d, on=key, suffixes=("_n", "_d"))
        dmine = dmine[[(a, b) in met for a, b in zip(dmine["op_index"], dmine["kernel_index"])]]
        out.append({"step": int(i), "saving_us": float((mine["duration_us_c"] - mine["duration_us_n"]).sum()),
                    "saving_dirty_us": float((dmine["duration_us_d"] - dmine["duration_us_n"]).sum()) if len(d) else math.nan,
                    "kernel_time_us": float(n.loc[[(a, b) not in skip for a, b in zip(n["op_index"], n["kernel_index"])],
                                                  "duration_us"].sum()),
                    "span_us": float((n["start_us"] + n["duration_us"]).max() - n["start_us"].min())})
    return pd.DataFrame(out)


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

    # -- the result-object shape every front-door verb shares (.cells, .verdict, .run_dir, repr) --
    @property
    def cells(self) -> pd.DataFrame:
        """The tidy per-kernel table the answer was judged from."""
        return self.kernels

    @property
    def verdict(self) -> pd.DataFrame:
        """One row: the judgement and the share of kernel time with its interval."""
        return pd.DataFrame([{"name": self.name, "judgement": self.judgement, "share": self.share,
                              "share_lo": self.share_ci[0], "share_hi": self.share_ci[1],
                              "saving_us": self.saving_us, "headline": self.headline(self.name or Command.STEP.value)}])

    def __repr__(self) -> str:
        where = f"\n  run dir: {self.run_dir}" if self.run_dir is not None else ""
        return f"<StepAnswer: {len(self.kernels)} kernels>\n{self.headline(self.name or Command.STEP.value)}{where}"

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
        from l2attr.analysis.step_load import analyse_step, step_name

        ans = analyse_step(Path(path))
        return replace(ans, name=step_name(ans), run_dir=Path(path))

    def index_row(self) -> dict[str, Any]:
        """One row of a many-step index: the step, its answer in words, the denominator the answer's
        share is of, the judgement, where it lives."""
        lo, hi = self.share_ci
        return {"step": self.name or Command.STEP.value, "share": self.share, "share_lo": lo, "share_hi": hi,
                "denominator": "the step's kernel time", "judgement": self.judgement,
                "run_dir": str(self.run_dir) if self.run_dir is not None else ""}

    def headline(self, name: str | None = None) -> str:
        """One sentence; 'worth' / 'costs' only beyond noise (the share's interval excludes 0) and, with
        a write-back-paying cold arm, only where both cold readings agree (analysis.step.bracket)."""
        name = name or self.name or Command.STEP.value
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
                            f"{self.kernel_time_us:.1f} µs of kernels per step).")
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
            step = f", {100 * m:+.2f} % [{100 * a:+.2f}, {100 * b:+.2f}] of the {self.step_time.median:.1f} µs step"
        where = "kernel node" if self.every_kernel else "op"
        return first + (f"{name}: inter-kernel L2 reuse is {what}; cold before each {where}, the kernels take "
                f"{self.saving_us:+.1f} µs [{self.saving_ci[0]:+.1f}, {self.saving_ci[1]:+.1f}]{step} "
                f"({self.kernel_time_us:.1f} µs of kernels per step).")


def edges(ops: pd.DataFrame, kern: pd.DataFrame) -> pd.DataFrame:
    """Producer -> consumer edges by bytes, with each consumer's first-kernel saving split by bytes.
    Views are neither: they launch nothing and write nothing (their output aliases their input). An
    op whose schema may alias but that launched a kernel (`contiguous` of a strided tensor copies)
    wrote its output, so it is no view here."""
    from l2attr.analysis.step_edges import views

    writers: list[tuple[int, int, int]] = []        # (start, end, op) of every output so far
    saving = {int(r.op_index): float(r.saving_us) for r in kern.itertuples() if r.met_flush} if len(kern) else {}
    skip = views(ops) - (set(kern["op_index"].astype(int)) if len(kern) else set())
    rows = []
    for r in ops.sort_values("op_index").itertuples():
        if int(r.op_index) in skip:
            continue
        ins = [tuple(x) for x in json.loads(r.inputs or "[]")]
        parts: dict[int, int] = {}
        for ptr, n in ins:
            left = n
            for s, e, p in reversed(writers):
                overlap = min(e, ptr + n) - max(s, ptr)
                if overlap > 0:
                    parts[p] = parts.get(p, 0) + overlap
                    left -= overlap
                    break
            if left > 0:
                parts[OUTSIDE] = parts.get(OUTSIDE, 0) + left
        total = sum(parts.values())
        for p, nbytes in parts.items():
            rows.append({"producer": p, "consumer": int(r.op_index), "bytes": nbytes,
                         "attributed_saving_us": saving.get(int(r.op_index), math.nan) * nbytes / total if total else math.nan})
        for ptr, n in (tuple(x) for x in json.loads(r.outputs or "[]")):
            writers.append((ptr, ptr + n, int(r.op_index)))
    return pd.DataFrame(rows, columns=EDGE_COLUMNS)


def _judge(lo: float, hi: float) -> Judgement:
    return Judgement.WITHIN_NOISE if lo <= 0 <= hi else (Judgement.FASTER if lo > 0 else Judgement.SLOWER)


def answer(k: pd.DataFrame, ops: pd.DataFrame, times: pd.DataFrame | None = None,
           every_kernel: bool = False) -> StepAnswer:
    kern = per_kernel(k, ops, every_kernel)
    skip = {(int(r.op_index), int(r.kernel_index)) for r in kern.itertuples() if r.overlapped}
    met = {(int(r.op_index), int(r.kernel_index)) for r in kern.itertuples() if r.met_flush} - skip
    pairs = _pairs(k, met, skip)
    shares = (pairs["saving_us"] / pairs["kernel_time_us"]).to_numpy(float)
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
    return StepAnswer(kern, pairs, edges(ops, kern), float(pairs["kernel_time_us"].median()),
                      float(pairs["span_us"].median()), float(pairs["saving_us"].median()), (s_lo, s_hi),
                      float(np.median(shares)), (lo, hi), judgement, step, d_share, d_ci, clean.value,
                      every_kernel=every_kernel)


def top_kernels(ans: StepAnswer, n: int = 10) -> pd.DataFrame:
    k = ans.kernels[ans.kernels["met_flush"]] if len(ans.kernels) else ans.kernels
    return k.reindex(k["saving_us"].abs().sort_values(ascending=False).index).head(n)


def top_edges(ans: StepAnswer, ops: pd.DataFrame, n: int = 10) -> pd.DataFrame:
    e = ans.edges[ans.edges["producer"] != OUTSIDE].dropna(subset=["attributed_saving_us"])
    e = e.reindex(e["attributed_saving_us"].abs().sort_values(ascending=False).index).head(n)
    name = dict(zip(ops["op_index"], ops["op"]))
    return e.assign(producer_op=e["producer"].map(name), consumer_op=e["consumer"].map(name))


def describe_kernel(row: Any) -> str:
    return f"{row['op']}#{row['op_index']} {str(row['kernel'])[:60]}"


STUDY_CLAIM = 0.0065   # the study's bound for eager-mode LLM inference: under 0.65 % of step time


def versus_claim(lo: float, hi: float, claim: float = STUDY_CLAIM) -> str:
    """Where an interval of a share stands against the study's bound (the one rule: intervals)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "not measured"
    if hi < claim:
        return f"below the study's {100 * claim:.2f} %"
    if lo > claim:
        return f"above the study's {100 * claim:.2f} %"
    return f"not distinguishable from the study's {100 * claim:.2f} % (the interval holds it)"


def compare_step_times(base: StepAnswer, other: StepAnswer) -> str:
    """Is `other`'s untraced step faster than `base`'s? (same process and GPU: in-run intervals)"""
    j = compare(base.step_time, other.step_time)
    if j.judgement == Judgement.NOT_MEASURED:
        return "step times not measured"
    word = {Judgement.WITHIN_NOISE: "no different within noise"}.get(j.judgement, j.judgement.value)
    return (f"{other.step_time.median:.1f} µs against {base.step_time.median:.1f} µs: {word} "
            f"({j.speedup:.3f}x [{j.lo:.3f}, {j.hi:.3f}])")


def dram_totals(dram: pd.DataFrame) -> dict[str, float]:
    """DRAM read + write bytes of one profiled step, per cache control (none, all)."""
    return {str(cc): float(g["value"].sum()) for cc, g in dram.groupby("cache_control")}


def dram_per_kernel(dram: pd.DataFrame) -> pd.DataFrame:
    """Per (op, kernel): read + write bytes with the L2 as left and with caches flushed."""
    s = dram.groupby(["op_index", "kernel_index", "kernel", "cache_control"])["value"].sum().unstack("cache_control")
    s.columns.name = None
    return s.reset_index()
