"""A second reader of graph surgery: the same captured step under Nsight Compute, per kernel node,
cache control `none` (the L2 as the graph's previous kernels leave it) against `all` (ncu flushes
caches before each profiled kernel, in application replay too).

The child captures the step as `l2attr.step` does, replays it once unprofiled (the state a step
leaves the next), then replays it `replays` times between cudaProfilerStart and cudaProfilerStop:
ncu (`--profile-from-start off`) sees only those, kernel nodes in creation order, so launch i is
replay i // K, node i % K. Its per-node `gpu__time_duration` delta (all - none) is what the
surgery's clean-cold delta (cold - natural) claims; `dram__bytes_write` under none against all is
the write-back a kernel pays in natural for its predecessors' dirty lines.

    python -m l2attr.steps.ncu_graph child FILE.py:FACTORY       # FACTORY() -> (fn, args)
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from l2attr.errors import UserError
from l2attr.vocab import Ncu

CONTROLS = (Ncu.NONE.value, Ncu.ALL.value)
SETS = "duration,dram"          # metric sets by name (metrics/duration.toml, metrics/dram.toml)


def load_factory(target: str) -> Callable[[], tuple[Callable[..., Any], tuple]]:
    path, _, name = target.rpartition(":")
    if not path or not name or not Path(path).is_file():
        raise UserError(f"{target!r}: give FILE.py:FACTORY")
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(Path(path).parent))
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def child(target: str, replays: int, warmup: int = 3) -> None:
    import torch
    from cuda.bindings import runtime as rt

    from l2attr.steps import surgery

    fn, args = load_factory(target)()
    with torch.inference_mode():
        g = surgery.capture(torch, lambda: fn(*args), warmup)
        ex = surgery.Exec(torch, surgery.raw_graph(g))
        ex()
        torch.cuda.synchronize()
        rt.cudaProfilerStart()
        for _ in range(replays):
            ex()
            torch.cuda.synchronize()
        rt.cudaProfilerStop()
        ex.close()


def profile(target: str, out: Path, replays: int, ncu: str = "ncu", runner: Any = None,
            log: Callable[[str], None] = print) -> pd.DataFrame:
    """Both cache controls of the child: one row per (cache_control, replay, node, key)."""
    from l2attr.catalog.keys import catalog
    from l2attr.experiment.profile import QuietLog
    from l2attr.profile.metricsets import resolve_metrics
    from l2attr.profile.ncu_cmd import NcuOptions, build_ncu_argv
    from l2attr.profile.ncu_import import read_report
    from l2attr.profile.runner import check_job, run_job, stream_run
    from l2attr.profile.tools import detect_chip

    chip = detect_chip()
    names = resolve_metrics(SETS, chip).metrics
    cat = catalog()
    key_of = {n: cat.key_of(n) for n in names}
    frames = []
    for cc in CONTROLS:
        rep = out / f"graph-cache-{cc}"
        rep.parent.mkdir(parents=True, exist_ok=True)
        opts = NcuOptions(cache_control=cc, allow_cache_flush=(cc == Ncu.ALL), nvtx_include=(),
                          extra=("--profile-from-start", "off"))
        argv = build_ncu_argv([sys.executable, "-m", "l2attr.steps.ncu_graph", "child", target, str(replays)],
                              names, rep, opts, ncu)
        result = run_job(f"ncu graph (cache control {cc})", argv, QuietLog(log), runner or stream_run)
        check_job(result, rep.with_suffix(".ncu-rep"), chip)
        t = read_report(rep.with_suffix(".ncu-rep"), condition="").table
        t = t[t["metric"].isin(key_of)].copy()
        order = sorted(t["launch"].unique())
        if len(order) % replays:
            raise UserError(f"ncu profiled {len(order)} kernels, not a multiple of {replays} replays")
        k = len(order) // replays
        pos = {launch: i for i, launch in enumerate(order)}
        t["replay"] = t["launch"].map(lambda x: pos[x] // k)
        t["node"] = t["launch"].map(lambda x: pos[x] % k)
        t["key"] = t["metric"].map(key_of)
        t["cache_control"] = cc
        frames.append(t[["cache_control", "replay", "node", "kernel", "key", "value"]])
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
        none, full = vals("duration", CONTROLS[0]) / 1e3, vals("duration", CONTROLS[1]) / 1e3
        n = min(len(none), len(full))
        d = full[:n] - none[:n]
        lo, hi = bootstrap_median_ci(d) if n > 1 else (float("nan"), float("nan"))
        rows.append({"node": int(node), "kernel": g["kernel"].iloc[0], "none_us": float(np.median(none)),
                     "all_us": float(np.median(full)), "delta_us": float(np.median(d)), "delta_lo": lo,
                     "delta_hi": hi, "write_none_b": float(np.median(vals("dram_write", CONTROLS[0]))),
                     "write_all_b": float(np.median(vals("dram_write", CONTROLS[1])))})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "child":
        child(sys.argv[2], int(sys.argv[3]))
    else:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        raise SystemExit(2)
