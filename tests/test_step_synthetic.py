"""Synthetic step runs for the CPU tests (made here, never measured): kineto traces built by hand,
eager and CUDA-graph, turned into run dirs by the same code a real run uses (steps/measure/trace.py,
steps/graph.py, RunDir). The tests of this file check the builders themselves."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from l2attr.rundir import RunDir
from l2attr.schema import STEP_EDGES, STEP_KERNELS, STEP_OPS, STEP_TIMES
import difflib

from l2attr.errors import UserError
from l2attr.names import UNMATCHED
from l2attr.steps.measure.trace import SLOTS_KEY, Slots, kernels as read_kernels
from l2attr.vocab import L2Condition

KERNELS = ("produce", "consume")
OPS = pd.DataFrame([
    {"op_index": 0, "op": "mul", "module": "", "flushed_in_cold": True, "inputs": json.dumps([[1000, 400]]),
     "outputs": json.dumps([[5000, 400]]), "view": False},
    {"op_index": 1, "op": "sum", "module": "", "flushed_in_cold": True, "inputs": json.dumps([[5000, 400]]),
     "outputs": json.dumps([[9000, 4]]), "view": False},
])


def trace(steps: int, natural: dict[str, float], cold: dict[str, float], graph: bool = False,
          extra: str | None = None) -> dict:
    """Natural and cold steps on thread 1, two ops (op 0 launches `produce`, op 1 `consume`).
    Eager natural steps launch like the cold ones (without the flush); `graph`: a natural step is
    one cudaGraphLaunch whose kernels share its correlation id, after a fill kernel that replay()
    launches itself (which must be dropped), and `extra` one more graph kernel at its end."""
    ev, corr, t, slots = [], 0, 0.0, Slots()

    def launch(name: str, ts: float, api: str = "cudaLaunchKernel") -> int:
        nonlocal corr
        corr += 1
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": api, "tid": 1, "ts": ts, "dur": 1, "args": {"correlation": corr}})
        return corr

    def kernel(name: str, ts: float, dur: float, c: int) -> None:
        ev.append({"ph": "X", "cat": "kernel", "name": name, "tid": 7, "ts": ts, "dur": dur,
                   "args": {"correlation": c, "stream": 7}})

    for i in range(steps):
        for cond, times in (("natural", natural), ("cold", cold)):
            start = t
            if cond == "natural" and graph:
                kernel("fill_rng_offsets", t + 3, 1.0, launch("fill", t + 1))
                c = launch("graph", t + 5, "cudaGraphLaunch")
                ts = t + 10
                for name in (*KERNELS, *([extra] if extra else [])):
                    kernel(name, ts, times.get(name, 1.0), c)
                    ts += times.get(name, 1.0) + 1
                t = ts + 20
            else:
                for op, name in enumerate(KERNELS):
                    if cond == "cold":
                        kernel("flush_l2", t + 2, 30, launch("flush", t + 0.5))
                        t += 40
                    ev.append({"ph": "X", "cat": "user_annotation", "name": f"l2attr:op:{op}", "tid": 1, "ts": t, "dur": 5})
                    kernel(name, t + 3, times[name], launch(name, t + 1))
                    t += 100
            ev.append({"ph": "X", "cat": "user_annotation", "name": slots.name(condition=cond, step=i), "tid": 1,
                       "ts": start - 1, "dur": t - start + 2})
            t += 50
    return {"traceEvents": ev, SLOTS_KEY: slots.table()}


def kernels(trace: dict, graph: bool = False):
    """The kernels of a hand-made trace, read through the replays it carries (as a kept trace)."""
    return read_kernels(trace, Slots.kept(trace), graph=graph)


def make_run(root: Path, name: str, natural: dict[str, float], cold: dict[str, float], steps: int = 6,
             graph: bool = False, extra: str | None = None, step_us: float = 40.0, facts: dict | None = None,
             edge_arms: dict[str, float] | None = None, command: str = "synthetic (tests/test_step_synthetic.py)") -> Path:
    """A step run dir (synthetic: the manifest says so) from a hand-made trace."""
    k = kernels(trace(steps, natural, cold, graph, extra), graph=graph)
    counts = {}
    if graph:
        k, counts = align(k)
    step = {"name": name, "repeats": steps, "warmup": 0, "mode": "graph" if graph else "eager", "edges": 1,
            "facts": facts or {}}
    manifest = {"kind": "step", "step": step, "command": command,
                "gpu": {"name": "synthetic", "uuid": "none"}, "software": {"l2attr": "synthetic"}, "cold": "synthetic"}
    if graph:
        manifest["graph"] = {"natural": "graph replays (synthetic)", "cold": "eager (synthetic)", **counts}
    if edge_arms:
        manifest["edges_method"] = "synthetic arms"
    run = RunDir.create(root, name, manifest)
    run.write(STEP_OPS, OPS)
    run.write(STEP_KERNELS, k)
    run.write(STEP_TIMES, pd.DataFrame({"repeat": range(2 * steps), "step_us": step_us + 0.01 * (np.arange(2 * steps) % steps),
                                        "discard": [""] * (2 * steps)}))     # two per repeat, as steps/measure/run.py times
    if edge_arms:
        rows = [{"edge": 0, "producer": 0, "consumer": 1, "bytes": 400, "arm": a, "repeat": r,
                 "consumer_us": v + 0.01 * r, "n_kernels": 1, "warmed_bytes": 0 if a in ("natural", "cold") else 400}
                for a, v in edge_arms.items() for r in range(steps)]
        run.write(STEP_EDGES, pd.DataFrame(rows))
    run.update_manifest(status="complete")
    return run.path


def test_graph_trace_keeps_only_the_graphs_kernels_in_natural_steps():
    k = kernels(trace(2, {"produce": 10.0, "consume": 20.0}, {"produce": 12.0, "consume": 30.0}, graph=True), graph=True)
    nat = k[k["condition"] == "natural"]
    assert "fill_rng_offsets" not in set(nat["kernel"]) and len(nat) == 4 and (nat["op_index"] == -1).all()
    assert len(kernels(trace(2, {"produce": 1.0, "consume": 1.0}, {"produce": 1.0, "consume": 1.0}, graph=True))) == 10


def test_make_run_writes_a_loadable_run(tmp_path):
    from l2attr.steps.table import load_step

    m, k, ops, times = load_step(make_run(tmp_path, "x", {"produce": 10.0, "consume": 20.0},
                                          {"produce": 12.0, "consume": 30.0}))
    assert m["step"]["mode"] == "eager" and len(k) == 24 and len(ops) == 2 and len(times) == 12


# The retired graph writer's alignment (l2attr.step(graph=True) until issue 37), kept to make runs of
# that mode, which the readers still load.
def align(k: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """Give a graph run's natural kernels the op and order of the eager cold step's kernels they
    match (by name, in order); the others UNMATCHED. Returns the table and the counts."""
    cold = k[k["condition"] == L2Condition.COLD.value]
    nat = k[k["condition"] == L2Condition.NATURAL.value]
    if cold.empty or nat.empty:
        raise UserError("graph step: no kernels traced in the natural replays or the eager cold steps "
                        "(kineto recorded none of the graph's kernels?)")
    first = cold[cold["step"] == cold["step"].min()].sort_values("start_us")
    ref = list(zip(first["op_index"], first["kernel_index"], first["kernel"]))
    names = [x[2] for x in ref]
    out, worst = [], len(ref)
    for _, g in nat.groupby("step", sort=True):
        g = g.sort_values("start_us").reset_index(drop=True)
        ops, idx, hit = [UNMATCHED] * len(g), [0] * len(g), [False] * len(g)
        sm = difflib.SequenceMatcher(None, names, list(g["kernel"]), autojunk=False)
        matched = 0
        for a, b, size in sm.get_matching_blocks():
            for i in range(size):
                ops[b + i], idx[b + i], hit[b + i] = int(ref[a + i][0]), int(ref[a + i][1]), True
                matched += 1
        extra = 0
        for j in range(len(g)):
            if not hit[j]:
                idx[j] = extra
                extra += 1
        worst = min(worst, matched)
        out.append(g.assign(op_index=ops, kernel_index=idx))
    counts = {"eager_kernels": len(ref), "replay_kernels": int(nat.groupby("step").size().max()),
              "matched_kernels": worst}
    if worst == 0:
        raise UserError(f"graph step: none of the {counts['replay_kernels']} replayed kernels matches the "
                        f"eager step's {len(ref)} by name and order")
    merged = pd.concat([cold, *out], ignore_index=True)
    return merged.sort_values(["condition", "step", "start_us"]).reset_index(drop=True), counts
