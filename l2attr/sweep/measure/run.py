"""A sweep's run loop: every (profile, repeat, family, point, arm, mode) unit measured in turn and
appended to the run dir at once; point summaries rewritten after each point's last repeat.

Order: per profile the workload is built once; repeats are the outer loop (a slow drift of the
GPU touches every point alike), device and host repeats alternate per arm. Every unit starts
from a flushed L2 with persisting priorities reset (measure/gpu.Gpu.flush_l2) and one artifact-loop
warm-up batch that is not kept. `--resume` keeps the units listed in sweep_units.csv, drops
sample rows of any other (a crash between the two appends) and measures the rest.
With an adaptive rule (`opts.rule`, sweep/measure/adaptive.py) each point repeats until its arms'
intervals close or it reaches the limit; its summaries follow the profile's last round.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from typing import Any, Callable

import pandas as pd

from l2attr.dlrm.config import WorkloadConfig
from l2attr.gpu.persisting import DeviceLimits
from l2attr.manifest_model import sections
from l2attr.rundir import RunDir
from l2attr.sweep.measure.adaptive import adaptive_points
from l2attr.sweep.measure.protocol import run_calls, schedule
from l2attr.sweep.declare import Point, SweepOptions, points
from l2attr.sweep.table import SWEEP_POINTS, SWEEP_SAMPLES, SWEEP_UNITS, UNIT_KEYS, summarize_point
from l2attr.vocab import Arm, Family, RepeatMode

UnitKey = tuple[str, str, str, str, int, str]
MODES = (RepeatMode.DEVICE.value, RepeatMode.HOST.value)


def finished_units(run: RunDir) -> set[UnitKey]:
    """Units whose rows are all on disk; sample rows of other units are removed (one rewrite)."""
    if not run.has(SWEEP_UNITS):
        done: set[UnitKey] = set()
    else:
        u = run.read(SWEEP_UNITS)
        done = {(str(r.family), str(r.profile), str(r.point), str(r.arm), int(r.repeat), str(r.mode))
                for r in u.itertuples()}
    if run.has(SWEEP_SAMPLES):
        s = run.read(SWEEP_SAMPLES)
        keys = list(zip(s["family"].astype(str), s["profile"].astype(str), s["point"].astype(str),
                        s["arm"].astype(str), s["repeat"].astype(int), s["mode"].astype(str)))
        kept = pd.Series([k in done for k in keys], index=s.index, dtype=bool)
        if not kept.all():
            run.write(SWEEP_SAMPLES, s[kept].reset_index(drop=True))
    return done


def family_pins(opts: SweepOptions) -> dict[Family, Any]:
    """The pin granularity each family's L2P+OptMT uses in this sweep (as the ladder plans it)."""
    from l2attr.dlrm.declare import RUNG_BY_NAME, plan_variants
    from l2attr.vocab import Pin

    pin = Pin(opts.pin_granularity) if opts.pin_granularity else None
    return {v.family: v.pin for v in plan_variants(list(opts.families), [RUNG_BY_NAME["l2p_optmt"]], pin)}


def nvtx_ranges(family: Family, profile: str, p: Point, arm: Arm) -> Callable[..., Any]:
    """NVTX ranges (l2attr domain) around the pin and consumer kernels of the first PROFILED_TABLES
    tables in the unit's last pin group only: a few kernels per point keep the ncu pass short."""
    import nvtx

    from l2attr.sweep.measure.dram import PROFILED_ROLES, PROFILED_TABLES
    from l2attr.names import NVTX_DOMAIN, sweep_range_name

    def ranges(c: Any, role: Any) -> Any:
        if c.group != p.groups - 1 or c.table >= PROFILED_TABLES or role.value not in PROFILED_ROLES:
            return nullcontext()
        return nvtx.annotate(sweep_range_name(role.value, family.value, profile, arm.value, c.table, c.group,
                                              c.position, p.point), domain=NVTX_DOMAIN)
    return ranges


def point_facts(axis: str, family: Family, pin: str, profile: str, p: Point, arm: Arm,
                cfg: WorkloadConfig) -> dict[str, Any]:
    return {"axis": axis, "family": family.value, "pin": pin, "profile": profile, "point": p.point,
            "x": p.x, "order": p.order.value, "k": p.k, "arm": arm.value,
            "hot_rows": cfg.hot_rows if p.hot_rows < 0 else p.hot_rows,
            "hit_ratio": p.hit_ratio if arm == Arm.WINDOW else 0.0,
            "occupy_bytes": p.occupy_bytes, "pollute_bytes": p.pollute_bytes}


def _repeats_of(samples: dict, family: Family, profile: str, p: Point) -> int:
    """How many repeats of a point are on disk (its first arm's)."""
    frames = samples.get((family.value, profile, p.point, p.arms[0].value), [])
    return len(set().union(*(set(f["repeat"].astype(int)) for f in frames))) if frames else 0


def run_sweep(cfg: WorkloadConfig, opts: SweepOptions, run: RunDir, limits: DeviceLimits,
              device_factory: Callable[..., Any] | None = None, log: Callable[[str], None] = print,
              progress: Any = None) -> pd.DataFrame:
    """Measure every unit of the sweep into `run`; finished units are skipped."""
    if device_factory is None:
        from l2attr.sweep.measure.device import SweepDevice as device_factory  # noqa: N813
    t_start = time.perf_counter()
    pts = points(cfg, opts, limits)
    modes = MODES if opts.host_repeat else MODES[:1]
    done = finished_units(run)
    if done:
        log(f"resume: {len(done)} finished units kept")
    device: Any = None                       # made at the first unit to measure (a finished run needs none)
    pins = family_pins(opts)
    samples: dict[tuple[str, str, str, str], list[pd.DataFrame]] = {}
    if run.has(SWEEP_SAMPLES):
        old = run.read(SWEEP_SAMPLES)
        for key, frame in old.groupby(["family", "profile", "point", "arm"], sort=False):
            samples[tuple(str(x) for x in key)] = [frame]
    summaries: dict[tuple[str, str, str, str], pd.DataFrame] = {}
    repeats = opts.rule.max_repeats if opts.rule is not None else opts.repeats   # adaptive: the most
    per_profile = [(f, p, a, r, m) for r in range(repeats) for f in opts.families for p in pts
                   for a in p.arms for m in modes]
    task = progress.add_task(f"sweep {str(opts.axis)}", total=len(per_profile) * len(opts.profiles)) \
        if progress is not None else None
    workloads: dict[str, Any] = dict(sections(run.manifest(), ("workloads",), f"{run.path}/manifest.json")
                                     .get("workloads") or {})
    measure_s = 0.0
    for profile in opts.profiles:
        loaded: list[str] = []
        t0 = time.perf_counter()

        def unit(family: Family, p: Point, arm: Arm, repeat: int, mode: str) -> pd.DataFrame | None:
            nonlocal device
            key: UnitKey = (family.value, profile, p.point, arm.value, repeat, mode)
            if key in done:
                return None
            if device is None:         # made at the first unit to measure, its profile loaded once
                device = device_factory(cfg, opts, limits, log)
            if not loaded:
                workloads[profile] = device.load_profile(profile)
                run.update_manifest(workloads=workloads)
                loaded.append(profile)
            with device.arm(family, p, arm) as ops:
                device.start_repeat()
                calls = schedule(p.order, p.k, p.groups, cfg.tables, device.batches)
                rows = run_calls(device.gpu, ops, calls, mode == RepeatMode.DEVICE.value,
                                 nvtx_ranges(family, profile, p, arm) if opts.nvtx_ranges else None)
            facts = point_facts(str(opts.axis), family, pins[family].value, profile, p, arm, cfg)
            frame = pd.DataFrame(rows).assign(**{k: facts[k] for k in ("axis", "family", "pin", "profile",
                                                                      "point", "x", "order", "k", "arm")},
                                              repeat=repeat, mode=mode)
            frame = frame.reindex(columns=list(SWEEP_SAMPLES.columns))
            run.append(SWEEP_SAMPLES, frame)
            run.append(SWEEP_UNITS, pd.DataFrame([dict(zip(UNIT_KEYS, key), rows=len(frame))]))
            samples.setdefault(key[:4], []).append(frame)
            return frame

        def summarise(family: Family, p: Point, stop: Any = None) -> None:
            for a in p.arms:
                k4 = (family.value, profile, p.point, a.value)
                facts = point_facts(str(opts.axis), family, pins[family].value, profile, p, a, cfg)
                rows = summarize_point(pd.concat(samples.get(k4, []) or [pd.DataFrame(
                    columns=list(SWEEP_SAMPLES.columns))], ignore_index=True), facts)
                summaries[k4] = rows if stop is None else rows.assign(stopped=getattr(stop, "value", "") or "")
            run.write(SWEEP_POINTS, pd.concat(list(summaries.values()), ignore_index=True))

        if opts.rule is not None:
            cells = [(family, p) for family in opts.families for p in pts]

            def one_repeat(cell: Any, repeat: int) -> pd.DataFrame | None:
                frames = [f for arm in cell[1].arms for m in modes if (f := unit(cell[0], cell[1], arm, repeat, m)) is not None]
                if progress is not None:
                    progress.advance(task, len(cell[1].arms) * len(modes))
                return pd.concat(frames, ignore_index=True) if frames else None

            def on_disk(cell: Any, repeat: int) -> pd.DataFrame | None:
                frames = [f[f["repeat"] == repeat] for a in cell[1].arms
                          for f in samples.get((cell[0].value, profile, cell[1].point, a.value), [])]
                return pd.concat(frames, ignore_index=True) if frames else None

            stops = adaptive_points(cells, opts.rule, one_repeat, on_disk)
            for (family, p), stop in stops.items():
                summarise(family, p, stop)
                if progress is not None:    # the repeats a point did not need
                    progress.advance(task, len(p.arms) * len(modes) * (repeats - _repeats_of(samples, family, profile, p)))
        for family, p, arm, repeat, mode in ([] if opts.rule is not None else per_profile):
            unit(family, p, arm, repeat, mode)
            if progress is not None:
                progress.advance(task)
            last_of_point = repeat == opts.repeats - 1 and mode == modes[-1] and arm == p.arms[-1]
            if last_of_point:
                summarise(family, p)
        measure_s += time.perf_counter() - t0
        if loaded:
            device.unload_profile()
    run.update_manifest(workloads=workloads, **(device.describe() if device is not None else {}),
                        sweep_timings={"measure_s": measure_s, "total_s": time.perf_counter() - t_start})
    return run.read(SWEEP_POINTS) if run.has(SWEEP_POINTS) else pd.DataFrame(columns=list(SWEEP_POINTS.columns))
