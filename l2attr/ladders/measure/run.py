"""Layer A's run: compile and check every variant, then measure cell after cell, straight to disk.

Order of work: the workloads start building on a background thread (measure/prefetch.py) while
variants (families x rungs, torch once) are compiled side by side and checked against
torch.nn.functional.embedding_bag; once they are all built (nothing runs beside a timed kernel)
the bandwidths are measured and, per profile, every variant's repeats, device and host repeats
alternating and interleaved across the variants so a slow drift of the GPU touches all alike.
Each round of repeats (one of every variant) is appended to samples.csv at once
(ladders/table.py); once the last is timed, every cell is summarised into cells.csv.
`--resume` skips complete repeats and re-measures a repeat a crash cut short. The phases'
seconds are recorded (`timings`) and printed (`Phases`, `describe_phases`).
"""

from __future__ import annotations

import math
import os
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np
import pandas as pd

from l2attr.dlrm import ptxas
from l2attr.dlrm.config import WorkloadConfig
from l2attr.dlrm.declare import Variant
from l2attr.dlrm.measure.check import CheckMemo, check_profile, compile_and_check, variant_id, window_for
from l2attr.dlrm.measure.gpu import Gpu
from l2attr.dlrm.measure.gpu import describe as describe_gpu
from l2attr.dlrm.measure.options import LadderOptions
from l2attr.ladders.measure.protocol import CellRunner, samples_per_repeat
from l2attr.gpu.runtime import kernel_cache_record
from l2attr.manifest_model import sections
from l2attr.measure.adaptive import HOST_COLUMNS, column_values, measure_rounds
from l2attr.measure.stats import CELL_KEYS
from l2attr.rundir import RunDir
from l2attr.schema import CELLS, SAMPLES
from l2attr.vocab import Command


# -- where a run's wall time goes: named phases, summed, recorded and printed in one line --------
# Why: "the ladder took 48 s" says nothing about what to make faster. The manifest's `timings` keep the
# phases (seconds) the run went through, and the log prints them.

# Printed in this order (what is not listed follows); the manifest keeps every key.
ORDER = ("startup_s", "engine_s", "compile_s", "check_s", "workload_wait_s", "bandwidth_s", "upload_s",
         "warmup_s", "real_check_s", "repeats_s", "journal_s", "summaries_s", "total_s")
LABELS = {"startup_s": "process start (python, imports, CUDA, GPU facts)", "engine_s": "tables + engine kernels",
          "compile_s": "compile", "check_s": "checks vs torch", "workload_wait_s": "waiting for workloads",
          "workload_s": "building workloads (background)", "bandwidth_s": "bandwidths",
          "upload_s": "index uploads", "warmup_s": "warm-ups", "real_check_s": "real-data checks",
          "repeats_s": "timed repeats", "journal_s": "samples.csv appends", "summaries_s": "cell summaries",
          "total_s": "this run in all", "measure_s": "per-profile work", "table_generation_s": "table generation"}


def process_age_s() -> float:
    """Seconds since this process started (Linux /proc), NaN where that cannot be read."""
    try:
        with open("/proc/self/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as fh:
            uptime = float(fh.read().split()[0])
        return uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return math.nan


class Phases:
    """Seconds per named phase, accumulated (a phase may run once per profile)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t0)


def describe_phases(timings: dict[str, float]) -> str:
    """One line: each phase's seconds in run order (no brackets: the console reads those as markup)."""
    keys = [k for k in ORDER if k in timings] + sorted(k for k in timings if k not in ORDER)
    parts = [f"{LABELS.get(k, k.removesuffix('_s'))} {timings[k]:.1f}" for k in keys
             if isinstance(timings[k], (int, float)) and math.isfinite(timings[k])]
    return "ladder phases, seconds: " + ", ".join(parts)


def ladder_manifest(cfg: WorkloadConfig, opts: LadderOptions, command: str, versions: dict[str, Any],
                    gpu: dict[str, Any]) -> dict[str, Any]:
    """A ladder run's manifest as it starts: what was asked, of which code, on which GPU (run_ladder
    adds what it measures: variants, checks, bandwidths, workloads, timings)."""
    return {"kind": Command.LADDER.value, "command": command, "config": cfg.to_dict(), "measure": opts.manifest(),
            "versions": versions, "gpu": gpu}


def consumer_bytes_per_call(cfg: WorkloadConfig) -> int:
    """Bytes the consumer must read per call: one row per lookup, the indices and the offsets."""
    return cfg.lookups_per_batch * (cfg.dim * cfg.element_bytes + 8) + cfg.batch_size * 8


def repeat_plan(opts: LadderOptions) -> list[tuple[int, bool]]:
    """(repeat index, device_timed) in run order: device and host repeats alternate, so the
    wall-charged figures come from as many repeats as the kernel ones, spread through the run
    (an adaptive run: the most it may take; its rounds stop each cell earlier)."""
    plan: list[tuple[int, bool]] = []
    for r in range(opts.rule.max_repeats if opts.rule else opts.repeats):
        plan.append((len(plan), True))
        if opts.host_repeat:
            plan.append((len(plan), False))
    return plan


RepeatKey = tuple[str, str, str, str, str, int]


def complete_repeats(run: RunDir, cfg: WorkloadConfig) -> set[RepeatKey]:
    """(family, rung, pin, profile, l2_state, repeat) of every repeat with all its rows on disk."""
    if not run.has(SAMPLES):
        return set()
    s = run.read(SAMPLES)
    keys = [*CELL_KEYS, "repeat"]
    counts = s.groupby(keys, dropna=False).size()
    want = samples_per_repeat(cfg)
    return {tuple(str(x) for x in k[:-1]) + (int(k[-1]),) for k, n in counts.items() if n == want}


def drop_incomplete_repeats(run: RunDir, cfg: WorkloadConfig) -> int:
    """Remove the rows of repeats a crash cut short (rewrites samples.csv once); returns how many."""
    if not run.has(SAMPLES):
        return 0
    s = run.read(SAMPLES)
    keys = [*CELL_KEYS, "repeat"]
    sizes = s.groupby(keys, dropna=False)["batch"].transform("size")
    cut = sizes != samples_per_repeat(cfg)
    if cut.any():
        run.write(SAMPLES, s[~cut].reset_index(drop=True))
    return int(cut.sum())


# A profile's first cells follow host work (uploading its indices) with the GPU idle: it is kept
# busy for as long as it sat idle, up to this long, before anything is kept (the run's first
# warm-up, before the bandwidths, is this long too). Under ncu (no bandwidths) timing means
# nothing and no warm-up runs.
PROFILE_WARMUP_S = 0.5


def _workload_bytes(cfg: WorkloadConfig) -> int:
    from l2attr.dlrm.workload import workload_shape

    a, b, c = workload_shape(cfg)
    return a * b * c * 8 + cfg.hot_rows * 8


def ladder_profiles(opts: LadderOptions) -> list[str]:
    """The profiles a run measures, in order: its own, then those only an extra cell names."""
    return list(dict.fromkeys([*opts.profiles, *(p for _, p, _ in opts.extras)]))


def workload_builder(cfg: WorkloadConfig, opts: LadderOptions) -> Callable[[str], Any]:
    """A profile's workload (or the run's trace), from the cache when it holds it (its module is
    imported here, on the caller's thread, never on a builder's)."""
    from l2attr.dlrm.workload import build_workload

    def build(profile: str) -> Any:
        if opts.trace is not None:
            return build_workload(cfg, trace=opts.trace, hot=opts.hot, drop_out_of_range=opts.drop_out_of_range,
                                  cache_dir=opts.cache_dir)
        return build_workload(cfg, profile=profile, hot=opts.hot, cache_dir=opts.cache_dir)
    return build


def run_ladder(cfg: WorkloadConfig, opts: LadderOptions, run: RunDir,
               log: Callable[[str], None] = print, progress: Any = None, ahead: Any = None) -> pd.DataFrame:
    """Measure every (profile, variant) cell into `run`; complete repeats are skipped. `ahead`:
    the ladder command's head start (ladders/command.py head_start: workloads and kernels begun
    before torch was imported), used when its profiles are this run's to do."""
    from l2attr.ladders.table import SampleJournal, summarize_cells, with_stops, write_cells
    from l2attr.dlrm.measure.prefetch import WorkloadPrefetch

    t_start = time.perf_counter()
    clock = Phases()
    age = process_age_s()
    if age == age:
        clock.add("startup_s", age)
    cut = drop_incomplete_repeats(run, cfg)
    done = complete_repeats(run, cfg)
    plan = repeat_plan(opts)
    variants = opts.variants
    states = opts.states
    extras = [(v, p, st) for v, p, st in opts.extras if not (p in opts.profiles and st in states
                                                             and any(x.key == v.key for x in variants))]

    def key(v: Variant, profile: str, state: str, repeat: int) -> RepeatKey:
        return (*v.key[:2], v.key[2], profile, state, repeat)

    def cells_of(profile: str) -> list[tuple[Variant, str]]:
        """The (variant, state) cells of a profile, in the order they are measured."""
        main = [(v, st) for st in states for v in variants] if profile in opts.profiles else []
        return main + [(v, st) for v, p, st in extras if p == profile]

    todo_profiles = [p for p in dict.fromkeys([*opts.profiles, *(p for _, p, _ in extras)])
                     if any(key(v, p, st, rp) not in done for v, st in cells_of(p) for rp, _ in plan)]
    if ahead is not None and ahead.prefetch.names != todo_profiles:    # not this run's: finished, unused
        ahead.prefetch.wait_all()
        ahead = None
    prefetch = ahead.prefetch if ahead is not None else WorkloadPrefetch(workload_builder(cfg, opts), todo_profiles,
                                                                         _workload_bytes(cfg))
    try:
        with clock.phase("engine_s"):
            gpu = Gpu(cfg, opts.spin_us, log, timer=opts.timer)
        timings: dict[str, float] = {"table_generation_s": gpu.table_gen_s}
        memo = CheckMemo.open(opts.checks_memo, run.manifest(), run.path.name) if opts.checks_memo else None
        compiled, resources, checks = compile_and_check(cfg, opts, timings, ahead and ahead.compiling, memo)
        log("correctness vs torch.nn.functional.embedding_bag (worst relative error): " + ", ".join(
            f"{vid} {max(e.values()):.1e}" for vid, e in checks.items()))
    finally:
        with clock.phase("workload_wait_s"):
            prefetch.wait_all()          # nothing in the background once anything is timed
    bandwidth: dict[str, float] = {}
    t0 = time.perf_counter()
    if opts.bandwidth:
        gpu.warm_up(PROFILE_WARMUP_S)
        bandwidth = {"hbm_copy_GBps": gpu.hbm_copy_GBps(),
                     "hbm_read_GBps": gpu.read_GBps(1 << 32),                    # 4 GiB: ~70x the H200's L2
                     # a quarter of L2 read 32 times per kernel (~0.5 GB of L2 traffic on an H200)
                     "l2_read_GBps": gpu.read_GBps(max(gpu.l2_bytes // 4, 1 << 20), passes=32)}
        log(f"HBM device-to-device copy: {bandwidth['hbm_copy_GBps']:.0f} GB/s (read + write); read-only: "
            f"HBM {bandwidth['hbm_read_GBps']:.0f} GB/s, L2 {bandwidth['l2_read_GBps']:.0f} GB/s")
    gpu.flush_l2()
    gpu_busy_until = time.perf_counter()
    clock.add("bandwidth_s", gpu_busy_until - t0)
    run.update_manifest(variants=resources, checks=checks, **bandwidth, kernel_cache=kernel_cache_record(),
                        ptxas=ptxas.for_variants([variant_id(v) for v in opts.all_variants]),
                        telemetry="NVML per repeat (samples.csv: sm_clock_mhz ... clock_event_reasons)"
                        if gpu.telemetry.available else "unavailable (no pynvml)", **describe_gpu(gpu))

    if cut:
        log(f"resume: dropped {cut} rows of repeats cut short; they are measured again")
    journal = SampleJournal(run)
    recorded_so_far = sections(run.manifest(), ("workloads", "real_data_checks"), f"{run.path}/manifest.json")
    workloads: dict[str, Any] = dict(recorded_so_far.get("workloads") or {})
    real_checks: dict[str, float] = dict(recorded_so_far.get("real_data_checks") or {})
    profiles = list(dict.fromkeys([*opts.profiles, *(p for _, p, _ in extras)]))
    n_cells = sum(len(cells_of(p)) for p in profiles)
    task = progress.add_task(Command.LADDER.value, total=n_cells * len(plan)) if progress is not None else None
    timings["measure_s"] = 0.0
    stops: dict[tuple[str, ...], Any] = {}

    for profile in profiles:
        cells = cells_of(profile)
        if profile not in todo_profiles:
            if progress is not None:
                progress.advance(task, len(cells) * len(plan))
            continue
        w = prefetch.get(profile)
        t0 = time.perf_counter()
        with clock.phase("upload_s"):
            indices = gpu.upload_indices(w.indices)
            hot = gpu.torch.from_numpy(np.ascontiguousarray(w.hot)).cuda()
        workloads[profile] = w.source
        del w
        if opts.bandwidth:
            # The GPU sat idle while the host uploaded (or built) this profile's indices: busy it
            # for as long again, up to PROFILE_WARMUP_S, before anything is kept.
            with clock.phase("warmup_s"):
                gpu.warm_up(min(PROFILE_WARMUP_S, max(0.0, time.perf_counter() - gpu_busy_until)))
        with clock.phase("real_check_s"):
            window = window_for(gpu, [v for v, _ in cells], indices, hot)
            real_checks.update(check_profile(gpu, cfg, compiled, list(dict.fromkeys(v for v, _ in cells)), profile,
                                             indices, hot, window, memo))
        for state in dict.fromkeys(st for _, st in cells):
            mine = [v for v, st in cells if st == state]
            runners = {variant_id(v): CellRunner(gpu, compiled[variant_id(v)], v, profile, state, indices, hot,
                                                 opts.nvtx_last, opts.nvtx_calls, window=window) for v in mine}
            t_round = [time.perf_counter()]

            def run_one(vid: str, repeat: int, device_timed: bool) -> pd.DataFrame | None:
                if key(runners[vid].variant, profile, state, repeat) in done:
                    return None
                return runners[vid].run_repeat(repeat, device_timed)

            def write_round(frames: list[pd.DataFrame]) -> None:
                t_write = time.perf_counter()
                clock.add("repeats_s", t_write - t_round[0])
                journal.append(frames)
                t_round[0] = time.perf_counter()
                clock.add("journal_s", t_round[0] - t_write)

            def on_disk(vid: str, repeat: int) -> pd.DataFrame:
                return journal.repeat_rows((*runners[vid].variant.key, profile, state), repeat)

            got = measure_rounds(list(runners), plan, run_one, write_round, opts.rule, on_disk,
                                 advance=(lambda n: progress.advance(task, n)) if progress is not None else (lambda n: None),
                                 host_values=column_values(HOST_COLUMNS))
            stops.update({(*runners[vid].variant.key, profile, state): stop for vid, stop in got.items()})
        gpu_busy_until = time.perf_counter()
        timings["measure_s"] += gpu_busy_until - t0
        del indices, hot, window
        run.update_manifest(workloads=workloads, real_data_checks=real_checks)

    with clock.phase("summaries_s"):
        order = [(*v.key, p, st) for p in profiles for v, st in cells_of(p)]
        summary = summarize_cells(journal.samples(), order, consumer_bytes_per_call(cfg))
        write_cells(run, with_stops(summary, stops))
    timings["workload_s"] = prefetch.build_s
    timings.update(clock.seconds)
    timings["total_s"] = time.perf_counter() - t_start
    run.update_manifest(timings=timings, workloads_built_ahead=prefetch.ahead,
                        **({"adaptive": opts.rule.manifest()} if opts.rule else {}),
                        **({"checks_memo": memo.record()} if memo is not None else {}))
    log(describe_phases(timings))
    return run.read(CELLS)
