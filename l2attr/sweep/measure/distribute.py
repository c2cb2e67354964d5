"""`l2attr sweep AXIS --workers N`: one unit per family x profile, measured by run_sweep on a worker.

Why family x profile: everything a sweep's analysis compares is inside it (a point's arms, the
curve over points, its repeats), so no median and no ratio mixes two GPUs, and the workload of a
profile is built once per unit. The worker measures into a scratch run dir of its own and returns
its tables; the lead appends the samples, then the unit rows (with the GPU and host), then
rewrites sweep_points.csv, so the sweep's own `--resume` rule holds: a unit listed in
sweep_units.csv has all its samples. A unit group found part-measured (a one-process run cut
short) is measured again whole, so its point arms share one GPU.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from l2attr.distribute.cluster import using_cluster
from l2attr.distribute.options import Distribute
from l2attr.distribute.record import merge_facts, probe, probe_workers, record_unit, run_gpu
from l2attr.distribute.units import Arrived, Counter, Unit, missing_error, run_units
from l2attr.dlrm.config import WorkloadConfig
from l2attr.manifest_model import sections
from l2attr.sweep.measure.run import MODES, finished_units
from l2attr.sweep.declare import SweepOptions, points, validate_device
from l2attr.sweep.table import SWEEP_POINTS, SWEEP_SAMPLES, SWEEP_UNITS, UNIT_KEYS
from l2attr.rundir import RunDir
from l2attr.vocab import Command

SCRATCH_KEYS = ("workloads", "variants", "checks", "real_data_checks", "limits",
                "persisting_setaside_bytes", "persisting_limit_before_bytes")


def unit_key(family: str, profile: str) -> str:
    return f"sweep:{family}:{profile}"


def group_units(cfg: WorkloadConfig, opts: SweepOptions, limits: Any, family: str,
                profile: str) -> list[tuple[str, str, str, str, int, str]]:
    """Every sweep_units key of one family x profile (what the one-process path would measure)."""
    modes = MODES if opts.host_repeat else MODES[:1]
    return [(family, profile, p.point, a.value, r, m) for r in range(opts.repeats) for p in points(cfg, opts, limits)
            for a in p.arms for m in modes]


def device_checks(cfg: WorkloadConfig, opts: SweepOptions) -> Any:
    """On a worker, before anything is written: the checks the one-process path makes on its GPU."""
    from l2attr.gpu.persisting import device_limits
    from l2attr.dlrm.measure.gpu import check_fits

    limits = device_limits()
    validate_device(cfg, opts, limits)
    check_fits(cfg)
    return limits


def measure_unit(cfg: WorkloadConfig, opts: SweepOptions, limits: Any,
                 device_factory: Callable[..., Any] | None = None) -> dict[str, Any]:
    """On a worker: run_sweep of one family x profile into a scratch run dir; its tables back."""
    from l2attr.sweep.measure.run import run_sweep

    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="l2attr-unit-") as tmp:
        scratch = RunDir.create(Path(tmp), "unit", {"kind": Command.SWEEP.value, "config": cfg.to_dict(),
                                                    "sweep": opts.manifest()})
        run_sweep(cfg, opts, scratch, limits, device_factory=device_factory, log=lines.append)
        m, source = scratch.manifest(), f"{scratch.path}/manifest.json"      # a worker's: nothing checked it
        timed = sections(m, ("timings", "sweep_timings"), source)
        return {"samples": scratch.read(SWEEP_SAMPLES), "units": scratch.read(SWEEP_UNITS),
                "points": scratch.read(SWEEP_POINTS), "facts": sections(m, SCRATCH_KEYS, source),
                "timings": {**(timed.get("timings") or {}), **(timed.get("sweep_timings") or {})}, "log": lines}


def _drop_groups(run: RunDir, groups: set[tuple[str, str]]) -> None:
    """Remove every row of these family x profile groups (a part-measured group is measured again)."""
    for table in (SWEEP_SAMPLES, SWEEP_UNITS, SWEEP_POINTS):
        if run.has(table):
            df = run.read(table)
            keep = ~pd.Series(list(zip(df["family"].astype(str), df["profile"].astype(str))),
                              index=df.index).isin(groups)
            if not keep.all():
                run.write(table, df[keep].reset_index(drop=True))


def plan(run: RunDir, cfg: WorkloadConfig, opts: SweepOptions, limits: Any,
         device_factory: Callable[..., Any] | None, log: Callable[[str], None]) -> list[Unit]:
    """The groups still to measure; part-measured ones are emptied first (said in one line)."""
    done = finished_units(run)
    todo, partial = [], set()
    for family in opts.families:
        for profile in opts.profiles:
            want = group_units(cfg, opts, limits, family.value, profile)
            have = sum(1 for k in want if k in done)
            if have == len(want):
                continue
            if have:
                partial.add((family.value, profile))
            todo.append(Unit(unit_key(family.value, profile), measure_unit,
                             (cfg, replace(opts, families=[family], profiles=[profile]), limits, device_factory)))
    if partial:
        log(f"resume: {len(partial)} family x profile group(s) were part-measured "
            f"({', '.join('/'.join(g) for g in sorted(partial))}); each is measured again whole, on one GPU")
        _drop_groups(run, partial)
    if done:
        log(f"resume: {len(opts.families) * len(opts.profiles) - len(todo)} finished group(s) kept")
    return todo


def write_unit(run: RunDir, arrived: Arrived) -> None:
    """The lead's write of one arrived group: samples, then unit rows (the commit), then points."""
    v = arrived.value
    if len(v["samples"]):
        run.append(SWEEP_SAMPLES, v["samples"])
    run.append(SWEEP_UNITS, v["units"].assign(**arrived.where.columns()))
    pts = v["points"]
    if run.has(SWEEP_POINTS):
        old = run.read(SWEEP_POINTS)
        fam, prof = arrived.key.split(":")[1:3]
        old = old[~((old["family"].astype(str) == fam) & (old["profile"].astype(str) == prof))]
        pts = pd.concat([old, pts], ignore_index=True)
    run.write(SWEEP_POINTS, pts)
    m, source = run.manifest(), f"{run.path}/manifest.json"
    facts = merge_facts(sections(m, SCRATCH_KEYS, source), v["facts"])
    unit_timings = {**(sections(m, ("unit_timings",), source).get("unit_timings") or {}), arrived.key: v["timings"]}
    run.update_manifest(**facts, unit_timings=unit_timings)
    record_unit(run, arrived)


def sweep_on_workers(cfg: WorkloadConfig, opts: SweepOptions, run: RunDir | None, dist: Distribute,
                     out: Path, name: str, command: str, log: Callable[[str], None] = print,
                     device_factory: Callable[..., Any] | None = None,
                     probe_fn: Callable[..., dict[str, Any]] = probe, client: Any = None) -> RunDir:
    """The whole distributed sweep: cluster, per-GPU checks, run dir, units, missing ones said."""
    with using_cluster(dist, log, client) as c:
        t0 = time.perf_counter()
        probes = probe_workers(c, device_checks, (cfg, opts), fn=probe_fn)
        limits = probes[0]["check"]
        gpu, gpus = run_gpu(probes)
        if run is None:
            run = RunDir.create(out, name, {
                "kind": Command.SWEEP.value, "command": command, "config": cfg.to_dict(), "sweep": opts.manifest(),
                "versions": probes[0]["versions"], "gpu": gpu, "gpus": gpus, "distribute": dist.manifest()})
        else:
            known = sections(run.manifest(), ("gpus",), f"{run.path}/manifest.json").get("gpus") or {}
            run.update_manifest(gpus={**known, **gpus})
        log(f"run dir: {run.path}")
        units = plan(run, cfg, opts, limits, device_factory, log)
        written = Counter(len(units), log)

        def arrived(a: Arrived) -> None:
            write_unit(run, a)
            written.said(a)

        outcome = run_units(c, units, arrived, log)
        _order_points(run, opts)
        run.update_manifest(sweep_timings={"total_s": time.perf_counter() - t0},
                            missing_units=outcome.missing or None)
    if outcome.missing:
        raise missing_error(outcome, run.path)
    return run


def _order_points(run: RunDir, opts: SweepOptions) -> None:
    """sweep_points.csv in the one-process order (family, profile as declared), not arrival order."""
    if not run.has(SWEEP_POINTS):
        return
    df = run.read(SWEEP_POINTS)
    fam = {f.value: i for i, f in enumerate(opts.families)}
    prof = {p: i for i, p in enumerate(opts.profiles)}
    order = sorted(range(len(df)), key=lambda i: (fam.get(str(df["family"].iloc[i]), 99),
                                                  prof.get(str(df["profile"].iloc[i]), 99), i))
    run.write(SWEEP_POINTS, df.iloc[order].reset_index(drop=True))


__all__ = ["sweep_on_workers", "measure_unit", "plan", "write_unit", "UNIT_KEYS"]
