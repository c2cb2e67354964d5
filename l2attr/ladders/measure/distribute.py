"""`l2attr ladder --workers N`: one unit per family x profile, measured by run_ladder on a worker.

Why family x profile: a family's rungs on one profile are what the ladder compares (speedups,
break-even, pin-charged ratios), so they are measured together, interleaved as in one process, on
one GPU; the torch reference goes with the first family's units. The worker measures into a
scratch run dir and returns its samples and cells; the lead appends the samples and replaces the
unit's cells (with the GPU and host) as each unit arrives. `--resume` keeps every unit whose
repeats are all on disk and measures the rest; a unit found part-measured is measured again
whole (so a cell's repeats never span two GPUs). The bandwidths are measured by the first unit
on each GPU (manifest `gpus`; the first to arrive also at the top, where one-process runs keep it).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from l2attr.distribute.cluster import using_cluster
from l2attr.distribute.options import Distribute
from l2attr.distribute.record import merge_facts, probe, probe_workers, record_unit, run_gpu
from l2attr.distribute.units import Arrived, Counter, Unit, missing_error, run_units
from l2attr.distribute.where import where_am_i
from l2attr.dlrm.config import WorkloadConfig
from l2attr.dlrm.declare import Variant
from l2attr.manifest_model import sections
from l2attr.ladders.measure.run import LadderOptions, complete_repeats, drop_incomplete_repeats, repeat_plan
from l2attr.measure.stats import CELL_KEYS
from l2attr.rundir import RunDir
from l2attr.schema import CELLS, SAMPLES
from l2attr.vocab import ConsumerCode

MERGED = ("variants", "checks", "ptxas", "workloads", "real_data_checks", "telemetry", "repeat_start_state")
PER_GPU = ("hbm_copy_GBps", "hbm_read_GBps", "l2_read_GBps")
_MEASURED_BANDWIDTH: set[str] = set()     # GPUs this worker process has measured the bandwidths of


def unit_key(family: str, profile: str) -> str:
    return f"ladder:{family}:{profile}"


def unit_options(opts: LadderOptions) -> list[tuple[str, LadderOptions]]:
    """(key, options) of every family x profile unit, in the one-process order (profile outer)."""
    out = []
    for profile in opts.profiles:
        for i, fam in enumerate(opts.families):
            rungs = opts.rungs if i == 0 else [r for r in opts.rungs if r.consumer != ConsumerCode.TORCH]
            mine = opts.model_copy(update={"families": [fam], "rungs": rungs, "profiles": [profile]})
            if mine.variants:
                out.append((unit_key(fam.value, profile), mine))
    return out


def repeat_keys(opts: LadderOptions) -> set[tuple[str, str, str, str, str, int]]:
    """measure/run.py's RepeatKey of every repeat a unit's options measure."""
    return {(*v.key, p, st, rep) for p in opts.profiles for v in opts.variants for st in opts.states
            for rep, _ in repeat_plan(opts)}


def device_checks(cfg: WorkloadConfig, opts: LadderOptions) -> None:
    """On every worker, before anything is written: what the one-process path checks on its GPU."""
    if any(r.window for r in opts.rungs):
        from l2attr.gpu.persisting import device_limits
        from l2attr.dlrm.measure.residency import check_window_fits

        check_window_fits(cfg, device_limits())
    from l2attr.dlrm.measure.gpu import check_fits

    check_fits(cfg)


def measure_unit(cfg: WorkloadConfig, opts: LadderOptions) -> dict[str, Any]:
    """On a worker: run_ladder of one unit into a scratch run dir; its tables and facts back."""
    from l2attr.ladders.measure.run import ladder_manifest, run_ladder

    gpu = where_am_i().gpu_uuid
    opts = opts.model_copy(update={"bandwidth": opts.bandwidth and gpu not in _MEASURED_BANDWIDTH})
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="l2attr-unit-") as tmp:
        scratch = RunDir.create(Path(tmp), "unit", ladder_manifest(cfg, opts, "", {}, {}))
        run_ladder(cfg, opts, scratch, log=lines.append)
        manifest, source = scratch.manifest(), f"{scratch.path}/manifest.json"
        out = {"samples": scratch.read(SAMPLES), "cells": scratch.read(CELLS),
               "facts": sections(manifest, MERGED, source), "gpu_facts": sections(manifest, PER_GPU, source),
               "timings": sections(manifest, ("timings",), source).get("timings") or {}, "log": lines}
    if opts.bandwidth:
        _MEASURED_BANDWIDTH.add(gpu)
    return out


def _cell_ids(df: pd.DataFrame) -> pd.Series:
    return df[list(CELL_KEYS)].astype(str).apply(tuple, axis=1)


def _drop_repeats(run: RunDir, keys: set[tuple[str, ...]]) -> None:
    """Remove the sample rows of these (family, rung, pin, profile, l2_state) cells (one rewrite)."""
    if not keys or not run.has(SAMPLES):
        return
    s = run.read(SAMPLES)
    keep = ~_cell_ids(s).isin(keys)
    if not keep.all():
        run.write(SAMPLES, s[keep].reset_index(drop=True))


def plan(run: RunDir, cfg: WorkloadConfig, opts: LadderOptions, measure: Callable[..., Any],
         log: Callable[[str], None]) -> list[Unit]:
    """The units still to measure; a part-measured unit loses its rows first (said in one line)."""
    cut = drop_incomplete_repeats(run, cfg)
    if cut:
        log(f"resume: dropped {cut} rows of repeats cut short")
    done = complete_repeats(run, cfg)
    todo, partial, kept = [], [], 0
    for key, mine in unit_options(opts):
        want = repeat_keys(mine)
        have = want & done
        if have == want:
            kept += 1
            continue
        if have:
            partial.append((key, {k[:5] for k in want}))
        todo.append(Unit(key, measure, (cfg, mine)))
    if partial:
        log(f"resume: {len(partial)} unit(s) were part-measured ({', '.join(k for k, _ in partial)}); each is "
            "measured again whole, on one GPU")
        _drop_repeats(run, set().union(*(cells for _, cells in partial)))
    if kept:
        log(f"resume: {kept} finished unit(s) kept")
    return todo


def write_unit(run: RunDir, a: Arrived) -> None:
    """The lead's write of one arrived unit: samples appended, its cells replaced, its facts kept."""
    v = a.value
    run.append(SAMPLES, v["samples"])
    cells = v["cells"].assign(**a.where.columns())
    if run.has(CELLS):
        old = run.read(CELLS)
        old = old[~_cell_ids(old).isin(set(_cell_ids(cells)))]
        cells = pd.concat([old, cells], ignore_index=True)
    run.write(CELLS, cells)
    manifest, source = run.manifest(), f"{run.path}/manifest.json"
    facts = merge_facts(sections(manifest, MERGED, source), v["facts"])
    have = sections(manifest, PER_GPU, source)
    top = {k: x for k, x in v["gpu_facts"].items() if k not in have}
    timed = sections(manifest, ("unit_timings",), source).get("unit_timings") or {}
    run.update_manifest(**facts, **top, unit_timings={**timed, a.key: v["timings"]})
    record_unit(run, a, v["gpu_facts"])


def order_cells(run: RunDir, opts: LadderOptions) -> None:
    """cells.csv in the one-process order (profile, L2 state, variant), not in arrival order."""
    if not run.has(CELLS):
        return
    df = run.read(CELLS)
    variants: list[Variant] = opts.variants
    rank = {(p, st, *v.key): i for i, (p, st, v) in enumerate(
        (p, st, v) for p in opts.profiles for st in opts.states for v in variants)}
    ids = df[["profile", "l2_state", "family", "rung", "pin"]].astype(str).apply(tuple, axis=1)
    order = sorted(range(len(df)), key=lambda i: (rank.get(ids.iloc[i], len(rank)), i))
    run.write(CELLS, df.iloc[order].reset_index(drop=True))


def ladder_on_workers(cfg: WorkloadConfig, opts: LadderOptions, run: RunDir | None, dist: Distribute,
                      out: Path, name: str, manifest: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]],
                      log: Callable[[str], None] = print, measure: Callable[..., Any] = measure_unit,
                      probe_fn: Callable[..., dict[str, Any]] = probe, client: Any = None) -> RunDir:
    """The whole distributed ladder: cluster, per-GPU checks, run dir, units, missing ones said.

    `manifest(versions, gpu)` makes the new run's manifest (the command's ladder_manifest)."""
    with using_cluster(dist, log, client) as c:
        t0 = time.perf_counter()
        probes = probe_workers(c, device_checks, (cfg, opts), fn=probe_fn)
        gpu, gpus = run_gpu(probes)
        if run is None:
            run = RunDir.create(out, name, {**manifest(probes[0]["versions"], gpu), "gpus": gpus,
                                            "distribute": dist.manifest()})
        else:
            known = sections(run.manifest(), ("gpus",), f"{run.path}/manifest.json").get("gpus") or {}
            run.update_manifest(gpus={**known, **gpus})
        log(f"run dir: {run.path}")
        units = plan(run, cfg, opts, measure, log)
        counter = Counter(len(units), log)

        def arrived(a: Arrived) -> None:
            write_unit(run, a)
            counter.said(a)

        outcome = run_units(c, units, arrived, log)
        order_cells(run, opts)
        run.update_manifest(timings={"total_s": time.perf_counter() - t0}, missing_units=outcome.missing or None)
    if outcome.missing:
        raise missing_error(outcome, run.path)
    return run
