"""Read a step run dir (refusing damaged data) and answer it (steps/analyse/answer.py, step_edges.py); and
answer the paper's pipeline claim from the shipped rung steps' answers.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from l2attr.analysis.significance import compare
from l2attr.steps.check.program import compiled_caveat, program_caveat, program_check
from l2attr.errors import STRICT, Damage, UserError
from l2attr.integrity.manifest import check_manifest
from l2attr.manifest_model import StepManifest, recorded, typed
from l2attr.steps.check.rules import check_step_dram, check_step_tables, replays_a_graph
from l2attr.steps.check.counts import check_declared, check_graph_counts
from l2attr.steps.declare import StepOptions
from l2attr.rundir import COMPLETE, RunDir
from l2attr.schema import KERNEL_EDGES, STEP_DRAM, STEP_EDGES, STEP_KERNELS, STEP_OPS, STEP_TIMES
from l2attr.vocab import EDGE_ARMS, Command, RungId, StepMode, condition_words

KIND = Command.STEP.value


def _finite(df: pd.DataFrame, col: str, where: Path, positive: bool = False) -> None:
    bad = ~df[col].apply(lambda x: isinstance(x, (int, float)) and math.isfinite(x) and (x > 0 if positive else x >= 0))
    if bad.any():
        raise UserError(f"{where}: row {int(bad.idxmax()) + 2}: {col} must be finite and {'>' if positive else '>='} 0")


def _unique(df: pd.DataFrame, key: tuple[str, ...], where: Path) -> None:
    dup = df.duplicated(list(key), keep=False)
    if dup.any():
        raise UserError(f"{where}: row {int(dup.idxmax()) + 2}: key is not unique")


def load_edges(run: RunDir) -> pd.DataFrame:
    """step_edges.csv where measured (an empty table otherwise), checked."""
    if not run.has(STEP_EDGES):
        return pd.DataFrame(columns=list(STEP_EDGES.columns))
    e = run.read(STEP_EDGES)
    where = run.path / STEP_EDGES.filename
    _unique(e, STEP_EDGES.key, where)
    _finite(e, "consumer_us", where)
    bad = ~e["arm"].isin(condition_words(EDGE_ARMS))
    if bad.any():
        raise UserError(f"{where}: row {int(bad.idxmax()) + 2}: arm {e['arm'][bad].iloc[0]!r} is not one of "
                        f"{', '.join(condition_words(EDGE_ARMS))}")
    return e


# `report --allow-partial` over step runs: the Damage the loader reads with (STRICT unless a page sets
# one, commands/report_pages.py) and, per manifest read under it, what it read past, which the
# answer's first line says (first_line). A context, so the answer's own path (steps/analyse/answer.py
# analyse_step) needs no argument for it.
_DAMAGE: ContextVar[Damage] = ContextVar("step_damage", default=STRICT)
_PARTIAL: dict[int, tuple[dict[str, Any], list[str]]] = {}


@contextmanager
def partial_reading(damage: Damage) -> Iterator[Damage]:
    token = _DAMAGE.set(damage)
    try:
        yield damage
    finally:
        _DAMAGE.reset(token)
        _PARTIAL.clear()


def load_step(path: Path, damage: Damage | None = None) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    damage = damage or _DAMAGE.get()
    before = len(damage.messages)
    run = RunDir.open(Path(path))
    m = run.manifest()
    kind = typed(m).kind
    if kind != KIND:
        raise UserError(f"{path} is a {kind!r} run, not a step run")
    check_manifest(m, run.path, STRICT, StepOptions)    # the fields every step writer records
    t = step_manifest(m)
    if t.status != COMPLETE:
        raise UserError(f"{path}: the step run did not finish (manifest status {t.status!r}): partial data")
    k, ops = run.read(STEP_KERNELS), run.read(STEP_OPS)
    where = run.path / STEP_KERNELS.filename
    dram = run.read(STEP_DRAM) if run.has(STEP_DRAM) else None
    times = run.read(STEP_TIMES) if run.has(STEP_TIMES) else pd.DataFrame(columns=list(STEP_TIMES.columns))
    edges = run.read(STEP_EDGES) if run.has(STEP_EDGES) else None
    check_step_tables({STEP_KERNELS.name: k, STEP_OPS.name: ops, STEP_TIMES.name: times, STEP_DRAM.name: dram,
                       STEP_EDGES.name: edges}, replays_a_graph(m), run.path,      # steps/check/rules.py
                      kernel_edges=bool(t.edges_kernel_level))
    check_graph_counts(m, k, run.path)
    _unique(k, STEP_KERNELS.key, where)
    _finite(k, "duration_us", where)
    # every step of one condition holds the same kernels (a graph's replay may hold others than the eager step)
    for cond, g in k.groupby("condition"):
        counts = g.groupby("step").size()
        if counts.nunique() > 1:
            raise UserError(f"{where}: {cond} steps hold different numbers of kernels "
                            f"({counts.min()}-{counts.max()}): cut or mixed data")
    if not is_graph(m) and k.groupby("condition").size().nunique() > 1:
        raise UserError(f"{where}: natural and cold steps hold different numbers of kernels: cut or mixed data")
    check_declared(m, k, times if run.has(STEP_TIMES) else None, dram, run.path, damage)   # the declared arms, repeats
    if dram is not None:            # read by `step show` and the step pages: whole, or the run is refused
        check_step_dram(dram, run.path)
    _finite(times, "step_us", run.path / STEP_TIMES.filename, positive=True)
    if len(damage.messages) > before:
        _PARTIAL[id(m)] = (m, damage.messages[before:])
    return m, k, ops, times


def step_manifest(manifest: dict[str, Any]) -> StepManifest:
    """A step run's manifest through the step's model (what check_manifest said reads as absent)."""
    return typed(manifest, model=StepManifest)


def is_graph(manifest: dict[str, Any]) -> bool:
    return step_manifest(manifest).mode == StepMode.GRAPH.value


def _edge_fields(m: dict[str, Any], path: Path) -> None:
    """The manifest fields that say how measured edges were made (every page prints them); the
    model says each one's type (kernel_edges_error: a string), check_manifest refuses another."""
    t = step_manifest(m)
    need = [("edges_method", t.edges_method), *([("edges_level", t.edges_level)] if t.edges_kernel_level else [])]
    for f, value in need:
        if not value:
            raise UserError(f"{path / 'manifest.json'}: {f} must be a non-empty string when "
                            f"{STEP_EDGES.filename} holds edges (the step writer records how they were measured)")
    recorded_level = recorded(m, KERNEL_EDGES, absent="absent") != "absent"       # null is recorded
    if (recorded_level or t.mode == StepMode.SURGERY.value) and t.edges_kernel_level is None:
        raise UserError(f"{path / 'manifest.json'}: {KERNEL_EDGES} must be true or false (a graph-surgery run's "
                        "edges join kernel nodes or ops, and its writer says which)")


def edge_names(m: dict[str, Any], k: pd.DataFrame, ops: pd.DataFrame) -> pd.DataFrame:
    """What an edge's producer and consumer indices name: ops, or kernel nodes (named by kernel)
    when the run's edges are kernel-level."""
    from l2attr.names import name_op

    if not step_manifest(m).edges_kernel_level or "node" not in k.columns:
        return ops
    first = k.drop_duplicates("node").sort_values("node")
    return pd.DataFrame({"op_index": first["node"].astype(int), "op": first["kernel"].map(name_op)})


def step_name(ans: Any) -> str:
    """The name a step run was given (the kind's name when none was recorded); `ans` is an answer
    or a manifest."""
    step = step_manifest(ans if isinstance(ans, dict) else ans.manifest).step
    return str((step.name if step is not None else None) or KIND)


def overlap_line(kern: pd.DataFrame) -> str:
    """Kernels that ran beside another in natural are left out of the answer: their natural time is
    shared with another kernel, their cold time (serialised) is not."""
    if not len(kern) or "overlapped" not in kern.columns or not kern["overlapped"].any():
        return ""
    o = kern[kern["overlapped"].astype(bool)]
    share = float(o["natural_us"].sum() / kern["natural_us"].sum()) if kern["natural_us"].sum() else math.nan
    return (f"{len(o)} of {len(kern)} kernels ({100 * share:.1f} % of natural kernel time) ran beside another kernel "
            "in natural (streams in parallel) and one at a time in the cold arms: not comparable, so left out of "
            "the answer.")


def first_line(manifest: dict[str, Any], kernels: pd.DataFrame) -> str:
    """What the answer must say before anything else: a step measured per op (it could not be
    captured, or eager was asked for) leaves kernels warm, and how much kernel time they hold; before
    it, what --allow-partial read past."""
    said = _PARTIAL.get(id(manifest))
    partial = [f"Partial data (--allow-partial): {m}" for m in said[1]] if said and said[0] is manifest else []
    line = _first_line(manifest, kernels)
    return "\n".join([*partial, *([line] if line else [])])


def _first_line(manifest: dict[str, Any], kernels: pd.DataFrame) -> str:
    t = step_manifest(manifest)
    if t.mode == StepMode.SURGERY.value:
        sf = t.surgery
        n, m = (sf.graph_kernels, sf.matched_kernels) if sf is not None else (None, None)
        lines = []
        if n is not None and m is not None and m < n:
            lines.append(f"Measured as the captured graph runs it: {n - m} of {n} kernels are not the eager ops' "
                         "(a compiled step's own kernels), attributed by kernel name.")
        check = program_check(manifest, kernels)
        lines += [compiled_caveat(manifest, kernels),
                  program_caveat(check, sf.call_kernel_difference if sf is not None else None),
                  overlap_line(kernels)]
        return "\n".join(x for x in lines if x)
    k = kernels
    why = t.fallback
    if not len(k) or not why:      # an eager run asked for is the per-op method by name
        return ""
    warm = k[~k["met_flush"].astype(bool)]
    share = float(warm["natural_us"].sum() / k["natural_us"].sum()) if k["natural_us"].sum() else math.nan
    how = f"could not be captured into a CUDA graph ({why})" if why else "was measured per op (eager)"
    return (f"Per-op method: the step {how}; {len(warm)} of {len(k)} kernels ({100 * share:.1f} % of kernel "
            "time) ran after their op's first kernel and were never made cold.")


# -- the paper's pipeline claim ------------------------------------------------------------------
# Answered from step runs: each rung's whole DLRM step (its consumer of the artifact family in place
# of torch's EmbeddingBag, the L2P pin inside the step) against the baseline rung's, on the untraced
# natural step time (same process and GPU: in-run intervals, the one significance rule).

SERIES = "dlrm-rungs"          # the facts' series of the shipped rung steps (examples/steps/dlrm_rungs.py)
BASE_RUNG = RungId.BASELINE.value


def rung_speedups(answers: list[Any]) -> list[tuple[str, str, Any]]:
    """(rung, label, Judged speedup over the baseline rung) for every rung step of one command."""
    models = {id(a): step_manifest(a.manifest) for a in answers}
    facts = {k: t.step.facts for k, t in models.items() if t.step is not None and t.step.facts is not None}
    rungs = [a for a in answers if id(a) in facts and facts[id(a)].series == SERIES]
    base = [a for a in rungs if facts[id(a)].rung == BASE_RUNG]
    if not base:
        return []
    ref = base[0]
    label = {k: f.label if "label" in f.model_fields_set else f.rung for k, f in facts.items()}
    return [(facts[id(a)].rung, str(label[id(a)]), compare(ref.step_time, a.step_time))
            for a in rungs if a is not ref and models[id(a)].command == models[id(ref)].command
            and facts[id(a)].rung not in (BASE_RUNG, RungId.TORCH.value)]


def pipeline_sentence(answers: list[Any], claim: str = "up to 1.77x on A100") -> str:
    """One line: the best rung's step-level speedup, pin charged, beside the paper's figure."""
    got = rung_speedups(answers)
    if not got:
        return "The DLRM rung steps are not measured."
    gpu = step_manifest(answers[0].manifest).gpu
    gpu = (gpu.name if gpu is not None else None) or "this GPU"
    parts = []
    for rung, label, j in got:
        word = j.judgement.value
        parts.append(f"{label} {j.speedup:.3f}x [{j.lo:.3f}, {j.hi:.3f}] ({word})")
    best = max(got, key=lambda x: x[2].speedup)
    return (f"Whole DLRM inference step on {gpu}, each rung's artifact consumer in place of EmbeddingBag, pins "
            f"charged, against the baseline rung: {'; '.join(parts)}. The best, {best[1]}, is "
            f"{best[2].speedup:.2f}x where the paper reports {claim}.")

