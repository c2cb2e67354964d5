"""A step under Nsight Compute, cache control `none` (the L2 as the previous kernels leave it)
against `all` (ncu flushes caches before each profiled kernel, in application replay too): per op
of the eager step, and per kernel node of its captured graph.

Why one module: both readers profile one step twice, under the two cache controls, with the same
ncu options, and differ only in what a row is.

Per op (`profile_step`, step_dram.csv): application replay (the process re-run per pass, so the
child is the user's script, marked with @l2attr.step_range). `--cache-control none` leaves each
kernel the L2 its predecessors left; `--cache-control all` flushes caches before every profiled
kernel (measured on the H200: a consumer of a buffer its predecessor wrote reads none of it from
DRAM under none and all of it under all) — the self-check step shows it again on every run.
Kernels are matched to ops by their innermost NVTX range `op:<index>` and, inside one op, by
launch order.

Per kernel node (`profile_graph`, a second reader of graph surgery): the child captures the step
as `l2attr.step` does, replays it once unprofiled (the state a step leaves the next), then replays
it `replays` times between cudaProfilerStart and cudaProfilerStop: ncu (`--profile-from-start
off`) sees only those, kernel nodes in creation order, so launch i is replay i // K, node i % K.
Its per-node `gpu__time_duration` delta (all - none) is what the surgery's clean-cold delta (cold
- natural) claims; `dram__bytes_write` under none against all is the write-back a kernel pays in
natural for its predecessors' dirty lines.

    python -m l2attr.steps.measure.ncu child FILE.py:FACTORY       # FACTORY() -> (fn, args)
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pandas as pd

from l2attr.errors import UserError
from l2attr.manifest_model import StepManifest, typed
from l2attr.names import NVTX_DOMAIN, STEP_OP
from l2attr.rundir import RunDir
from l2attr.schema import STEP_DRAM
from l2attr.steps.measure.record import NVTX_OP_INCLUDE
from l2attr.vocab import Command, Job, Ncu, StepMode

CACHE_CONTROLS = (Ncu.NONE.value, Ncu.ALL.value)
KEYS = ("dram_read", "dram_write")


def profiled_child(fn: Callable[..., Any], args: tuple, kwargs: dict, warmup: int) -> None:
    """The child's side: warm-up steps, then one step with each op in its NVTX range."""
    import torch

    from l2attr.steps.measure.record import make_recorder

    for _ in range(warmup):
        fn(*args, **kwargs)
    torch.cuda.synchronize()
    rec = make_recorder(None, nvtx_ranges=True)
    with rec.modules, rec:
        fn(*args, **kwargs)
    torch.cuda.synchronize()


def _op_index(nvtx_range: object) -> int:
    name = str(nvtx_range)
    prefix = f"{NVTX_DOMAIN}@"
    got = STEP_OP.parse(name[len(prefix):]) if name.startswith(prefix) else None
    return int(got["op_index"]) if got else -1


def dram_frame(raw: pd.DataFrame, cache_control: str) -> pd.DataFrame:
    """Imported report rows -> step_dram rows (one per kernel launch and key)."""
    from l2attr.catalog.keys import catalog

    cat = catalog()
    names = {n: k for k in KEYS for n in cat.names(k)}
    df = raw[raw["metric"].isin(names)].copy()
    df["op_index"] = df["nvtx_range"].map(_op_index)
    df = df[df["op_index"] >= 0]
    df["key"] = df["metric"].map(names)
    order = df.drop_duplicates("launch").sort_values("launch")
    order["kernel_index"] = order.groupby("op_index").cumcount()
    df = df.merge(order[["launch", "kernel_index"]], on="launch")
    df["cache_control"] = cache_control
    return df[list(STEP_DRAM.columns)].reset_index(drop=True)


def profile_step(command: Sequence[str], run: RunDir, env: dict[str, str], chip: str | None = None,
                 runner: Any = None, ncu: str = "ncu", log: Callable[[str], None] = print,
                 metrics: str = "l2") -> pd.DataFrame:
    """Both cache-control runs of `command` into `run`: step_dram.csv. `metrics`: the set asked
    for (`dram`: DRAM bytes only, the fewest replay passes; `l2`: the L2 counters too)."""
    from l2attr.profile.metricsets import resolve_metrics
    from l2attr.profile.ncu_cmd import NcuOptions, build_ncu_argv
    from l2attr.profile.ncu_import import read_report
    from l2attr.annotation import environment
    from l2attr.profile.runner import QuietLog, check_job, run_job, stream_run
    from l2attr.profile.tools import detect_chip

    chip = chip or detect_chip()
    metric_names = resolve_metrics(metrics, chip).metrics
    frames, argvs = [], {}
    for cc in CACHE_CONTROLS:
        out = run.path / "ncu" / f"step-cache-{cc}"
        out.parent.mkdir(parents=True, exist_ok=True)
        opts = NcuOptions(cache_control=cc, allow_cache_flush=(cc == Ncu.ALL), nvtx_include=(NVTX_OP_INCLUDE,))
        argv = build_ncu_argv(list(command), metric_names, out, opts, ncu)
        argvs[cc] = argv
        with environment(env):
            result = run_job(f"ncu (cache control {cc})", argv, QuietLog(log), runner or stream_run)
        check_job(result, out.with_suffix(".ncu-rep"), chip)
        frames.append(dram_frame(read_report(out.with_suffix(".ncu-rep"), condition="").table, cc))
    df = pd.concat(frames, ignore_index=True)
    if df.empty:
        raise UserError("ncu profiled no kernel inside an l2attr op range (is the step marked with @l2attr.step_range?)")
    run.write(STEP_DRAM, df)
    graph = typed(run.manifest(), f"{run.path}/manifest.json", StepManifest).mode == StepMode.GRAPH.value
    run.update_manifest(step_ncu={"argv": argvs, "chip": chip, "metrics": metrics,
                                  **({"graph": "DRAM bytes of the eager step (the function the graph captures)"}
                                     if graph else {})})
    log(f"step DRAM bytes: {df['launch'].nunique()} kernel launches profiled under cache control none and all")
    return df


def child_env(folder: Path, warmup: int, program: Job = Job.STEP_OPS, replays: int = 1) -> dict[str, str]:
    """How a marked script is told to be an ncu child: its options' `program` is step-ops (each op
    in its NVTX range, per-op DRAM bytes) or step-graph (its step captured and replayed, per kernel
    node: the write-back), in a file under `folder` whose path the variable holds."""
    from l2attr.steps.declare import StepOptions

    return StepOptions(program=program, warmup=warmup, replays=replays).to_child(folder)


# -- per kernel node of the captured graph ------------------------------------------------------
GRAPH_SETS = "duration,dram"          # metric sets by name (metrics/duration.toml, metrics/dram.toml)


def load_factory(target: str) -> Callable[[], tuple[Callable[..., Any], tuple]]:
    path, _, name = target.rpartition(":")
    if not path or not name or not Path(path).is_file():
        raise UserError(f"{target!r}: give FILE.py:FACTORY")
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(Path(path).parent))
    spec.loader.exec_module(mod)
    return getattr(mod, name)


COUNTS_ENV = "L2ATTR_NCU_COUNTS"      # where the child writes each step's kernel-node count (JSON)
ERROR_ENV = "L2ATTR_NCU_CHILD_ERROR"  # where the child writes its own error, one line (a path, no data)


def graph_child(target: str, replays: int, warmup: int = 3) -> None:
    """The profiled child: FACTORY() gives one step `(fn, args)` or many `[(name, fn, args), ...]`
    (a grid: one process, one model build, one ncu run for all of them). Each is captured as
    `l2attr.step` captures it, replayed once unprofiled (the state a step leaves the next), then
    `replays` times between cudaProfilerStart and cudaProfilerStop. Its own error (the factory's,
    the step's) is one line on stderr and in ERROR_ENV's file: ncu's output would bury it."""
    import os

    try:
        made = load_factory(target)()
        replay_steps(made if isinstance(made, list) else [(Command.STEP.value, made[0], made[1], {})], replays, warmup)
    except Exception as exc:                  # the user's code: any error, said in one line
        line = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}".rstrip(": ")
        print(f"l2attr write_back child: {line}", file=sys.stderr, flush=True)
        if os.environ.get(ERROR_ENV):
            Path(os.environ[ERROR_ENV]).write_text(line + "\n")
        raise SystemExit(1) from None


def replay_steps(steps: list[tuple], replays: int, warmup: int = 3) -> None:
    """The child's work for each (name, fn, args[, kwargs]): captured as `l2attr.step` captures it
    (at least one warm-up, in the grad mode the step sets for itself: a different mode can capture
    other kernels, whose bytes would then be matched to the wrong nodes), replayed once unprofiled
    (the state a step leaves the next), then `replays` times between cudaProfilerStart and
    cudaProfilerStop; each step's kernel-node count to COUNTS_ENV's file."""
    import os

    import torch
    from cuda.bindings import runtime as rt

    from l2attr.steps.measure import surgery

    counts = {}
    for name, fn, args, *rest in steps:     # in the caller's grad mode, as l2attr.step captures it
        kwargs = rest[0] if rest else {}
        g = surgery.capture(torch, lambda: fn(*args, **kwargs), max(1, warmup))
        raw = surgery.raw_graph(g)
        counts[name] = len(surgery.shape(raw).kernels)
        ex = surgery.Exec(torch, raw)
        ex()
        torch.cuda.synchronize()
        rt.cudaProfilerStart()
        for _ in range(replays):
            ex()
            torch.cuda.synchronize()
        rt.cudaProfilerStop()
        ex.close()
        del g
    if os.environ.get(COUNTS_ENV):
        Path(os.environ[COUNTS_ENV]).write_text(json.dumps(list(counts.items())))


def profile_graph(target: str | Sequence[str], out: Path, replays: int, ncu: str = "ncu", runner: Any = None,
                  log: Callable[[str], None] = print, sets: str = GRAPH_SETS,
                  env: dict[str, str] | None = None) -> pd.DataFrame:
    """Both cache controls of the child: one row per (cache_control, step, replay, node, key).
    `target`: FILE.py:FACTORY, or a command whose marked step replays itself (`env`: how it is
    told to, l2attr.step_range's child mode). `sets`: the metric sets (`dram` alone is all the
    matched arm needs: one pass)."""
    from l2attr.catalog.keys import catalog
    from l2attr.profile.metricsets import resolve_metrics
    from l2attr.profile.ncu_cmd import NcuOptions, build_ncu_argv
    from l2attr.profile.ncu_import import read_report
    from l2attr.profile.runner import QuietLog, check_job, run_job, stream_run
    from l2attr.profile.tools import detect_chip

    chip = detect_chip()
    names = resolve_metrics(sets, chip).metrics
    cat = catalog()
    key_of = {n: cat.key_of(n) for n in names}
    frames = []
    for cc in CACHE_CONTROLS:
        rep = out / f"graph-cache-{cc}"
        rep.parent.mkdir(parents=True, exist_ok=True)
        opts = NcuOptions(cache_control=cc, allow_cache_flush=(cc == Ncu.ALL), nvtx_include=(),
                          extra=("--profile-from-start", "off"))
        child = list(target) if not isinstance(target, str) else [
            sys.executable, "-m", "l2attr.steps.measure.ncu", "child", target, str(replays)]
        argv = build_ncu_argv(child, names, rep, opts, ncu)
        counts = out / f"graph-cache-{cc}.counts.json"
        failed = out / f"graph-cache-{cc}.error.txt"
        failed.unlink(missing_ok=True)
        from l2attr.annotation import environment

        with environment({**(env or {}), COUNTS_ENV: str(counts.resolve()), ERROR_ENV: str(failed.resolve())}):
            result = run_job(f"ncu graph (cache control {cc})", argv, QuietLog(log), runner or stream_run)
        if result.returncode != 0 and failed.is_file():
            said = failed.read_text(errors="replace")[:2000].strip()
            print(f"l2attr write_back child: {said}", file=sys.stderr, flush=True)
            raise UserError(f"write_back: the step's child failed under Nsight Compute (cache control {cc}, exit "
                            f"{result.returncode}) with the error above; call the factory {target if isinstance(target, str) else ''} "
                            "in Python without ncu to see its traceback")
        check_job(result, rep.with_suffix(".ncu-rep"), chip)
        t = read_report(rep.with_suffix(".ncu-rep"), condition="").table
        t = t[t["metric"].isin(key_of)].copy()
        order = sorted(t["launch"].unique())
        steps = json.loads(counts.read_text()) if counts.is_file() else [[Command.STEP.value, len(order) // max(replays, 1)]]
        if len(order) != replays * sum(n for _, n in steps):
            raise UserError(f"ncu profiled {len(order)} kernels, not {replays} replays of "
                            f"{' + '.join(str(n) for _, n in steps)} kernel nodes")
        where, at = {}, 0
        for name, n in steps:                       # launches in order: step by step, replay by replay
            for i in range(replays * n):
                where[order[at + i]] = (name, i // n, i % n)
            at += replays * n
        t["step"] = t["launch"].map(lambda x: where[x][0])
        t["replay"] = t["launch"].map(lambda x: where[x][1])
        t["node"] = t["launch"].map(lambda x: where[x][2])
        t["key"] = t["metric"].map(key_of)
        t["cache_control"] = cc
        frames.append(t[["cache_control", "step", "replay", "node", "kernel", "key", "value"]])
    return pd.concat(frames, ignore_index=True)


def deltas(ncu: pd.DataFrame) -> pd.DataFrame:
    """Per node: the median duration (µs) under each control, the delta all - none with a bootstrap
    interval over replays, and the DRAM write bytes under each control."""
    import numpy as np

    from l2attr.measure.stats import bootstrap_median_ci

    rows = []
    for node, g in ncu.groupby("node"):
        def vals(key: str, cc: str) -> Any:
            return g[(g["key"] == key) & (g["cache_control"] == cc)].sort_values("replay")["value"].to_numpy(float)
        none, full = vals("duration", CACHE_CONTROLS[0]) / 1e3, vals("duration", CACHE_CONTROLS[1]) / 1e3
        n = min(len(none), len(full))
        d = full[:n] - none[:n]
        lo, hi = bootstrap_median_ci(d) if n > 1 else (float("nan"), float("nan"))
        med = (lambda x: float(np.median(x)) if len(x) else float("nan"))
        rows.append({"node": int(node), "kernel": g["kernel"].iloc[0], "none_us": med(none),
                     "all_us": med(full), "delta_us": med(d), "delta_lo": lo,
                     "delta_hi": hi, "write_none_b": med(vals("dram_write", CACHE_CONTROLS[0])),
                     "write_all_b": med(vals("dram_write", CACHE_CONTROLS[1]))})
    return pd.DataFrame(rows)


# -- a layered model's write-back at any depth from readings at one and two layers ---------------
# ncu costs 60-85 ms a kernel node (H100), minutes for a full-depth 8B decode. A decoder's graph is a
# head, one block of nodes per layer, and a tail; every layer after the first meets what the one
# before it left, as layer 1 does at depth 2. So layer l >= 1 inherits what layer 1 does, the head,
# layer 0 and the tail what they do at depth 2. The shape comes from the kernel names of the one- and
# two-layer readings and is refused where they are no such sequence (docs/step-method.md).
@dataclass(frozen=True)
class Layered:
    """The two-layer graph's nodes as runs (start, end, repeated): a run kept once, or repeated once per
    layer after the first (what the second layer added: its block, and any per-layer node elsewhere)."""

    parts: tuple[tuple[int, int, bool], ...]

    def nodes(self, layers: int) -> int:
        return sum((e - s) * (layers - 1 if rep else 1) for s, e, rep in self.parts)


def layer_shape(one: list[str], two: list[str]) -> Layered:
    """The runs from the kernel names of the same step at one and two layers: the nodes the second layer
    added, wherever they stand (a per-layer cache counter reset sits at the head), and the rest."""
    import difflib

    if len(two) <= len(one):
        raise UserError(f"periodic write-back: {len(one)} kernel nodes at one layer and {len(two)} at two: "
                        "no layer block to repeat")
    parts = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=one, b=two, autojunk=False).get_opcodes():
        if tag not in ("equal", "insert"):
            raise UserError("periodic write-back: the two-layer step is not the one-layer step with nodes added "
                            "(kernel names differ): read the write-back at the depth measured")
        parts.append((j1, j2, tag == "insert"))
    return Layered(tuple(parts))


def at_depth(two: dict[int, float], shape: Layered, layers: int) -> dict[int, float]:
    """Per node of the step at `layers` (>= 2), the write-back of its counterpart at two layers."""
    if layers < 2:
        raise UserError(f"periodic write-back: {layers} layers; map from two layers to two or more")
    if sorted(two) != list(range(shape.nodes(2))):
        raise UserError(f"periodic write-back: the two-layer reading covers {len(two)} nodes, not {shape.nodes(2)}")
    out: dict[int, float] = {}
    for s, e, rep in shape.parts:
        for _ in range(layers - 1 if rep else 1):        # a later layer's nodes as layer 1's
            for k in range(s, e):
                out[len(out)] = two[k]
    return out


__all__ = ["profile_step", "profiled_child", "dram_frame", "child_env", "Path", "profile_graph", "graph_child",
           "load_factory", "deltas", "Layered", "layer_shape", "at_depth"]


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "child":
        graph_child(sys.argv[2], int(sys.argv[3]))
    else:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        raise SystemExit(2)
