"""DRAM bytes per kernel of a step under Nsight Compute: cache control none against all.

Application replay (the process re-run per pass, so the child is the user's script, marked with
@l2attr.step_range). `--cache-control none` leaves each kernel the L2 its predecessors left;
`--cache-control all` flushes caches before every profiled kernel, in application replay too
(measured on the H200: a consumer of a buffer its predecessor wrote reads none of it from DRAM
under none and all of it under all) — the self-check step shows it again on every run. Kernels are matched to ops by their innermost NVTX
range `op:<index>` and, inside one op, by launch order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from l2attr.errors import UserError
from l2attr.rundir import RunDir
from l2attr.schema import STEP_DRAM
from l2attr.steps.record import NVTX_OP_INCLUDE
from l2attr.names import NVTX_DOMAIN, STEP_OP
from l2attr.vocab import Ncu, StepMode

CACHE_CONTROLS = (Ncu.NONE.value, Ncu.ALL.value)
KEYS = ("dram_read", "dram_write")


def profiled_child(fn: Callable[..., Any], args: tuple, kwargs: dict, warmup: int) -> None:
    """The child's side: warm-up steps, then one step with each op in its NVTX range."""
    import torch

    from l2attr.steps.record import make_recorder

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
    from l2attr.experiment.child import environment
    from l2attr.experiment.profile import QuietLog
    from l2attr.profile.runner import check_job, run_job, stream_run
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
    graph = (run.manifest().get("step") or {}).get("mode") == StepMode.GRAPH.value
    run.update_manifest(step_ncu={"argv": argvs, "chip": chip, "metrics": metrics,
                                  **({"graph": "DRAM bytes of the eager step (the function the graph captures)"}
                                     if graph else {})})
    log(f"step DRAM bytes: {df['launch'].nunique()} kernel launches profiled under cache control none and all")
    return df


def child_env(warmup: int) -> dict[str, str]:
    from l2attr.steps.record import ENV

    return {ENV: json.dumps({"mode": "ncu", "warmup": warmup})}


__all__ = ["profile_step", "profiled_child", "dram_frame", "child_env", "Path"]
