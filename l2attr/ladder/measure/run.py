"""Layer A's run: compile and check every variant, then measure cell after cell, straight to disk.

Order of work: variants (families x rungs, torch once) are compiled and checked against
torch.nn.functional.embedding_bag; then per profile the workload is built once and every
variant's repeats are measured, device and host repeats alternating and interleaved across the
variants so a slow drift of the GPU touches all alike. Each finished repeat is appended to
samples.csv at once and each cell's summary replaces its rows in cells.csv; `--resume` skips
complete repeats and re-measures a repeat a crash cut short.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pandas as pd

from l2attr.ladder.config import WorkloadConfig
from l2attr.errors import UserError
from l2attr.ladder import ptxas
from l2attr.ladder.declare import DEFAULT_MAXRREGCOUNT, Rung, Variant, plan_variants
from l2attr.ladder.measure.check import check_variant, relative_error
from l2attr.ladder.measure.gpu import Gpu, describe
from l2attr.ladder.measure.kernels import LaunchShape, VariantKernels
from l2attr.ladder.measure.protocol import CellRunner, samples_per_repeat
from l2attr.measure.stats import CELL_KEYS, summarize_cell
from l2attr.rundir import RunDir
from l2attr.schema import CELLS, SAMPLES
from l2attr.vocab import Command, Family, L2State, Pin, RunKind, TimerKind


@dataclass
class LadderOptions:
    rungs: list[Rung]
    profiles: list[str]                    # profile names, or one trace's name when trace is set
    families: list[Family] = field(default_factory=lambda: [Family.ARTIFACT, Family.TUNED])
    trace: Path | None = None
    hot: Path | None = None
    drop_out_of_range: bool = False
    l2_state: str = L2State.NATURAL.value    # one state, or several comma-separated (run in turn)
    repeats: int = 3
    maxrregcount: int = DEFAULT_MAXRREGCOUNT
    pin_granularity: str | None = None     # None: each family's default (artifact element, tuned line)
    rpf_depth: int = 2
    shape: LaunchShape = field(default_factory=LaunchShape)
    nvtx_last: int = 0                     # 0: NVTX ranges around every call; N: only the last N
    nvtx_calls: bool = False               # also a `call` range around pin -> sync -> consumer
    spin_us: float = 50.0
    timer: str = TimerKind.BLOCKING.value              # measure/timer.py: blocking (default) or spin
    host_repeat: bool = True
    cache_dir: Path | None = None
    bandwidth: bool = True                 # measure copy / HBM-read / L2-read bandwidth (not under ncu)

    @property
    def states(self) -> list[str]:
        return [L2State(s.strip()).value for s in self.l2_state.split(",") if s.strip()]

    @property
    def variants(self) -> list[Variant]:
        pin = Pin(self.pin_granularity) if self.pin_granularity else None
        return plan_variants(self.families, self.rungs, pin)

    def manifest(self) -> dict[str, Any]:
        d = asdict(self)
        d["rungs"] = [r.name for r in self.rungs]
        d["families"] = [f.value for f in self.families]
        d["variants"] = [list(v.key) for v in self.variants]
        d["trace"] = str(self.trace) if self.trace else None
        d["hot"] = str(self.hot) if self.hot else None
        d["cache_dir"] = str(self.cache_dir) if self.cache_dir else None
        return d


def ladder_manifest(cfg: WorkloadConfig, opts: LadderOptions, command: str, versions: dict[str, Any],
                    gpu: dict[str, Any]) -> dict[str, Any]:
    """A ladder run's manifest as it starts: what was asked, of which code, on which GPU (run_ladder
    adds what it measures: variants, checks, bandwidths, workloads, timings)."""
    return {"kind": RunKind.LADDER.value, "command": command, "config": cfg.to_dict(), "measure": opts.manifest(),
            "versions": versions, "gpu": gpu}


def consumer_bytes_per_call(cfg: WorkloadConfig) -> int:
    """Bytes the consumer must read per call: one row per lookup, the indices and the offsets."""
    return cfg.lookups_per_batch * (cfg.dim * cfg.element_bytes + 8) + cfg.batch_size * 8


def repeat_plan(opts: LadderOptions) -> list[tuple[int, bool]]:
    """(repeat index, device_timed) in run order: device and host repeats alternate, so the
    wall-charged figures come from as many repeats as the kernel ones, spread through the run."""
    plan: list[tuple[int, bool]] = []
    for r in range(opts.repeats):
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


def iter_cells(opts: LadderOptions) -> Iterator[tuple[str, Variant]]:
    for profile in opts.profiles:
        for v in opts.variants:
            yield profile, v


def check_real_data(gpu: Gpu, kernels: VariantKernels | None, indices: Any, hot: Any) -> float:
    """One call on the real workload (table 0, first batch) against torch, poisoned output."""
    import torch.nn.functional as F

    if kernels is None:
        return 0.0
    g = gpu
    g.out.fill_(float("nan"))
    if kernels.pin is not None:
        kernels.launch_pin(g.weights[0], hot)
    kernels.launch_consumer(g.weights[0], indices[0, 0], g.offsets, g.out)
    g.torch.cuda.synchronize()
    ref = F.embedding_bag(indices[0, 0], g.weights[0].double(), g.offsets, mode="sum")
    return relative_error(g.out, ref)


def window_for(gpu: Gpu, variants: list[Variant], indices: Any, hot: Any) -> Any:
    """The APW+OptMT rung's remapped tables and stream window for this workload (None without it)."""
    if not any(v.rung.window for v in variants):
        return None
    from l2attr.gpu.persisting import device_limits
    from l2attr.ladder.measure.residency import StreamWindow, build_remap

    remap = build_remap(gpu.torch, gpu.weights, hot, indices)
    return StreamWindow(gpu.torch, gpu.cupy, remap, int(hot.numel()), 1.0,
                        device_limits().persisting_max_bytes)


def check_window_data(gpu: Gpu, kernels: VariantKernels | None, indices: Any, window: Any) -> float:
    """One call through the remapped table and indices, window set, against torch on the originals."""
    import torch.nn.functional as F

    if kernels is None:
        return 0.0
    g = gpu
    with window.active():
        g.out.fill_(float("nan"))
        window.set(0)
        kernels.launch_consumer(window.remap.weights[0], window.remap.indices[0, 0], g.offsets, g.out)
        g.stream_sync()
    ref = F.embedding_bag(indices[0, 0], g.weights[0].double(), g.offsets, mode="sum")
    return relative_error(g.out, ref)


def _replace_cell(run: RunDir, summary: pd.DataFrame) -> None:
    keys = list(CELL_KEYS)
    if run.has(CELLS):
        cells = run.read(CELLS)
        this = tuple(str(summary.iloc[0][k]) for k in keys)
        keep = cells[keys].astype(str).apply(tuple, axis=1) != this
        summary = pd.concat([cells[keep], summary], ignore_index=True)
    run.write(CELLS, summary)


def variant_id(v: Variant) -> str:
    """The manifest's key for a variant: family/rung/pin."""
    return "/".join(v.key)


def compile_and_check(cfg: WorkloadConfig, opts: LadderOptions,
                      timings: dict[str, float]) -> tuple[dict[str, VariantKernels | None],
                                                          dict[str, Any], dict[str, Any]]:
    t0 = time.perf_counter()
    compiled: dict[str, VariantKernels | None] = {}
    for v in opts.variants:
        compiled[variant_id(v)] = None if v.is_reference else VariantKernels(
            v, cfg.dtype, opts.shape, opts.maxrregcount, opts.rpf_depth)
    timings["compile_s"] = time.perf_counter() - t0
    resources = {vid: k.resources() for vid, k in compiled.items() if k is not None}
    t0 = time.perf_counter()
    checks = {vid: check_variant(k, cfg.dtype, cfg.dim, cfg.seed + i)
              for i, (vid, k) in enumerate(compiled.items()) if k is not None}
    timings["check_s"] = time.perf_counter() - t0
    return compiled, resources, checks


def run_ladder(cfg: WorkloadConfig, opts: LadderOptions, run: RunDir,
               log: Callable[[str], None] = print, progress: Any = None) -> pd.DataFrame:
    """Measure every (profile, variant) cell into `run`; complete repeats are skipped."""
    from l2attr.ladder.workload import build_workload

    t_start = time.perf_counter()
    gpu = Gpu(cfg, opts.spin_us, log, timer=opts.timer)
    timings: dict[str, float] = {"table_generation_s": gpu.table_gen_s}
    compiled, resources, checks = compile_and_check(cfg, opts, timings)
    log("correctness vs torch.nn.functional.embedding_bag (worst relative error): " + ", ".join(
        f"{vid} {max(e.values()):.1e}" for vid, e in checks.items()))
    bandwidth: dict[str, float] = {}
    if opts.bandwidth:
        gpu.warm_up()
        bandwidth = {"hbm_copy_GBps": gpu.hbm_copy_GBps(),
                     "hbm_read_GBps": gpu.read_GBps(1 << 32),                    # 4 GiB: ~70x the H200's L2
                     # a quarter of L2 read 32 times per kernel (~0.5 GB of L2 traffic on an H200)
                     "l2_read_GBps": gpu.read_GBps(max(gpu.l2_bytes // 4, 1 << 20), passes=32)}
        log(f"HBM device-to-device copy: {bandwidth['hbm_copy_GBps']:.0f} GB/s (read + write); read-only: "
            f"HBM {bandwidth['hbm_read_GBps']:.0f} GB/s, L2 {bandwidth['l2_read_GBps']:.0f} GB/s")
    gpu.flush_l2()
    run.update_manifest(variants=resources, checks=checks, **bandwidth,
                        ptxas=ptxas.for_variants([variant_id(v) for v in opts.variants]),
                        telemetry="NVML per repeat (samples.csv: sm_clock_mhz ... clock_event_reasons)"
                        if gpu.telemetry.available else "unavailable (no pynvml)", **describe(gpu))

    cut = drop_incomplete_repeats(run, cfg)
    if cut:
        log(f"resume: dropped {cut} rows of repeats cut short; they are measured again")
    done = complete_repeats(run, cfg)
    plan = repeat_plan(opts)
    variants = opts.variants
    manifest = run.manifest()
    workloads: dict[str, Any] = dict(manifest.get("workloads", {}))
    real_checks: dict[str, float] = dict(manifest.get("real_data_checks", {}))
    bytes_per_call = consumer_bytes_per_call(cfg)
    states = opts.states
    task = progress.add_task(Command.LADDER.value, total=len(opts.profiles) * len(states) * len(variants) * len(plan)) \
        if progress is not None else None
    timings["workload_s"] = timings["measure_s"] = 0.0

    def key(v: Variant, profile: str, state: str, repeat: int) -> RepeatKey:
        return (*v.key[:2], v.key[2], profile, state, repeat)

    for profile in opts.profiles:
        todo = [1 for v in variants for st in states for rp in plan if key(v, profile, st, rp[0]) not in done]
        if not todo:
            if progress is not None:
                progress.advance(task, len(variants) * len(states) * len(plan))
            continue
        t0 = time.perf_counter()
        if opts.trace is not None:
            w = build_workload(cfg, trace=opts.trace, hot=opts.hot,
                               drop_out_of_range=opts.drop_out_of_range, cache_dir=opts.cache_dir)
        else:
            w = build_workload(cfg, profile=profile, hot=opts.hot, cache_dir=opts.cache_dir)
        indices = gpu.upload_indices(w.indices)
        hot = gpu.torch.from_numpy(np.ascontiguousarray(w.hot)).cuda()
        workloads[profile] = w.source
        timings["workload_s"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        # Building the workload kept the host busy and the GPU idle; on the H200 the first cells
        # measured after that showed launch lags above the spin (event times holding host time,
        # medians up to 20 % high) for ~0.5 s. Busy the GPU again before anything is kept.
        gpu.warm_up(0.5)
        window = window_for(gpu, variants, indices, hot)
        for v in variants:
            err = check_real_data(gpu, compiled[variant_id(v)], indices, hot)
            if v.rung.window and window is not None:
                err = max(err, check_window_data(gpu, compiled[variant_id(v)], indices, window))
            real_checks[f"{variant_id(v)}:{profile}"] = err
            if err > 1e-5 and cfg.dtype == "fp32":
                raise UserError(f"variant {v.label} is wrong on the {profile} workload: relative "
                                f"error {err:.3g} vs torch.nn.functional.embedding_bag")
        for state in states:
            runners = {variant_id(v): CellRunner(gpu, compiled[variant_id(v)], v, profile, state, indices, hot,
                                                 opts.nvtx_last, opts.nvtx_calls, window=window) for v in variants}
            for repeat, device_timed in plan:
                for v in variants:
                    if key(v, profile, state, repeat) in done:
                        continue
                    run.append(SAMPLES, runners[variant_id(v)].run_repeat(repeat, device_timed))
                    if progress is not None:
                        progress.advance(task)
        all_samples = run.read(SAMPLES)
        for state in states:
            for v in variants:
                mine = all_samples[(all_samples.family == v.family.value) & (all_samples.rung == v.rung.name)
                                   & (all_samples.pin == v.pin.value) & (all_samples.profile == profile)
                                   & (all_samples.l2_state == state)]
                _replace_cell(run, summarize_cell(mine, bytes_per_call))
        timings["measure_s"] += time.perf_counter() - t0
        del indices, hot, window
        run.update_manifest(workloads=workloads, real_data_checks=real_checks)
    timings["total_s"] = time.perf_counter() - t_start
    run.update_manifest(timings=timings)
    return run.read(CELLS)
