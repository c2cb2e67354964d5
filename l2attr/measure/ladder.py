"""Layer A: run the ladder (rungs x profiles) on the GPU, cell by cell, straight to disk.

The sequence per table call is the artifact's: [pin -> stream sync ->] consumer -> sync.
Two kinds of repeat per cell, over the same batches in the same order:
  * device-timed repeats: CUDA events around the pin and around the consumer, each preceded by a
    short GPU spin so the event interval holds the kernel, not the host's launch latency;
  * one host-timed repeat: perf_counter around the whole call (pin + sync + consumer + sync),
    exactly what a caller waits for, with no spin in the window.
Warm-up batches are run and not kept; the first (cold) sample of every repeat is dropped.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pandas as pd

from l2attr.config import WorkloadConfig
from l2attr.errors import UserError
from l2attr.gpu import compile as kc
from l2attr.ladder import DEFAULT_MAXRREGCOUNT, Rung
from l2attr.measure.check import check_variant, relative_error
from l2attr.measure.kernels import LaunchShape, RungKernels
from l2attr.measure.stats import summarize_cell
from l2attr.rundir import RunDir
from l2attr.schema import CELLS, SAMPLES

L2_STATES = ("natural", "flush", "flush_after_pin")


@dataclass
class LadderOptions:
    rungs: list[Rung]
    profiles: list[str]                    # profile names, or one trace's name when trace is set
    trace: Path | None = None
    hot: Path | None = None
    drop_out_of_range: bool = False
    l2_state: str = "natural"
    repeats: int = 3
    maxrregcount: int = DEFAULT_MAXRREGCOUNT
    pin_granularity: str = "line"
    rpf_depth: int = 2
    shape: LaunchShape = field(default_factory=LaunchShape)
    nvtx_last: int = 0                     # 0: NVTX ranges around every call; N: only the last N
    spin_us: float = 50.0
    host_repeat: bool = True
    cache_dir: Path | None = None

    def manifest(self) -> dict[str, Any]:
        d = asdict(self)
        d["rungs"] = [r.name for r in self.rungs]
        d["trace"] = str(self.trace) if self.trace else None
        d["hot"] = str(self.hot) if self.hot else None
        d["cache_dir"] = str(self.cache_dir) if self.cache_dir else None
        return d


def nvtx_name(role: str, rung: str, profile: str, l2_state: str, table: int, batch: int) -> str:
    """`l2attr:<role>:<rung>:<profile>:<l2_state>:t<table>:b<batch>` (':' not '/', see ncu)."""
    return f"l2attr:{role}:{rung}:{profile}:{l2_state}:t{table}:b{batch}"


def required_bytes(cfg: WorkloadConfig, l2_bytes: int) -> dict[str, int]:
    """What the run allocates on the GPU, so it can refuse before allocating."""
    calls = (cfg.warmup_batches + cfg.batches) * cfg.tables
    return {
        "tables": cfg.tables * cfg.table_bytes,
        "indices": calls * cfg.lookups_per_batch * 8,
        "offsets_hot_out": cfg.batch_size * 8 + cfg.hot_rows * 8 + cfg.batch_size * cfg.dim * cfg.element_bytes,
        "flush_buffer": 2 * l2_bytes,
        "copy_benchmark": 2 * (1 << 30),
        "torch_workspace": 2 * cfg.batch_size * cfg.dim * 8 + cfg.lookups_per_batch * 8 * 4,
    }


def check_fits(cfg: WorkloadConfig) -> int:
    """Refuse, before allocating anything, a workload the GPU cannot hold; returns the L2 size."""
    from l2attr.gpu.runtime import require_gpu

    _, cupy = require_gpu()
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    l2_bytes = int(props["l2CacheSize"])
    free, total = cupy.cuda.runtime.memGetInfo()
    need = required_bytes(cfg, l2_bytes)
    if sum(need.values()) > free:
        raise UserError(f"workload needs {sum(need.values()) / 2**30:.2f} GiB on the GPU "
                        f"({', '.join(f'{k} {v / 2**30:.2f}' for k, v in need.items())}) but only "
                        f"{free / 2**30:.2f} GiB of {total / 2**30:.2f} GiB is free; "
                        f"use --tables/--rows/--batches to shrink it")
    return l2_bytes


class Gpu:
    """Everything the timing loop needs on the device, made once per run."""

    def __init__(self, cfg: WorkloadConfig, opts: LadderOptions, log: Callable[[str], None]) -> None:
        from l2attr.gpu.runtime import require_gpu

        self.torch, self.cupy = require_gpu()
        torch, cupy = self.torch, self.cupy
        self.cfg, self.opts, self.log = cfg, opts, log
        self.l2_bytes = check_fits(cfg)
        self.dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[cfg.dtype]
        self.spin = kc.get_kernel(kc.SPIN_SPEC)
        self.flush_kernel = kc.get_kernel(kc.FLUSH_SPEC)
        self.flush_buf = torch.randint(0, 2**31 - 1, (2 * self.l2_bytes // 4,), dtype=torch.int32,
                                       device="cuda")
        self.start, self.stop = cupy.cuda.Event(), cupy.cuda.Event()
        from l2attr.gpu.telemetry import Telemetry

        self.telemetry = Telemetry(cupy.cuda.Device().id)
        t0 = time.perf_counter()
        g = torch.Generator(device="cuda").manual_seed(cfg.seed)
        # Tables are made on the GPU (3 GB would take seconds to copy); uniform in [-1, 1), no zeros.
        self.weights = torch.empty((cfg.tables, cfg.rows, cfg.dim), dtype=self.dtype, device="cuda")
        for t in range(cfg.tables):
            self.weights[t].uniform_(-1.0, 1.0, generator=g)
        torch.cuda.synchronize()
        self.table_gen_s = time.perf_counter() - t0
        self.offsets = torch.arange(cfg.batch_size, dtype=torch.int64, device="cuda") * cfg.pooling
        self.out = torch.empty((cfg.batch_size, cfg.dim), dtype=self.dtype, device="cuda")

    # -- primitives -----------------------------------------------------------------------------
    def spin_head_start(self) -> None:
        if self.opts.spin_us > 0:
            self.spin((1,), (1,), (np.int64(self.opts.spin_us * 1000),))

    def flush_l2(self) -> None:
        """Reset evict-last/persisting lines to normal, then stream 2x L2 of other data through."""
        self.priority_reset_ok = _reset_persisting_l2()
        words = self.flush_buf.numel()
        self.flush_kernel((1024,), (256,), (np.uint64(self.flush_buf.data_ptr()), np.int64(words),
                                            np.uint64(self.flush_buf.data_ptr())))
        self.torch.cuda.synchronize()

    def timed(self, launch: Callable[[], None]) -> float:
        """Device time of `launch` in microseconds (events with a spin head start).

        Also keeps `last_lag_us`: host time from the spin's launch to the end of the timed
        kernel's launch. When it exceeds the spin, the GPU went idle before the start event
        and the event interval holds host time too; samples say so (`launch_lag_us`).
        """
        self.spin_head_start()
        t0 = time.perf_counter()
        self.start.record()
        launch()
        self.last_lag_us = (time.perf_counter() - t0) * 1e6
        self.stop.record()
        self.stop.synchronize()
        return self.cupy.cuda.get_elapsed_time(self.start, self.stop) * 1000.0

    def warm_up(self, seconds: float = 0.5) -> None:
        """Keep the GPU busy long enough for its clocks to leave idle before anything is kept."""
        torch = self.torch
        src = torch.empty(1 << 28, dtype=torch.float32, device="cuda").uniform_()
        dst = torch.empty_like(src)
        t_end = time.perf_counter() + seconds
        while time.perf_counter() < t_end:
            for _ in range(20):
                dst.copy_(src)
            torch.cuda.synchronize()
        del src, dst

    def hbm_copy_GBps(self, nbytes: int = 1 << 30, reps: int = 10) -> float:
        """Device-to-device copy bandwidth (bytes read + written per second), median of reps."""
        torch = self.torch
        src = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda").uniform_()
        dst = torch.empty_like(src)
        times = []
        for i in range(reps + 1):
            t = self.timed(lambda: dst.copy_(src))
            if i:
                times.append(t)
        del src, dst
        return 2 * nbytes / (float(np.median(times)) * 1e-6) / 1e9


def _reset_persisting_l2() -> bool:
    """cudaCtxResetPersistingL2Cache: evict-last / persisting lines back to normal priority.

    Without it a plain flush cannot displace lines a pin left at evict-last priority. Returns
    whether the reset ran (it needs cuda-python, which the GPU extras bring with torch/cupy).
    """
    try:
        from cuda.bindings import runtime as cudart  # cuda-python
    except ImportError:
        try:
            from cuda import cudart  # type: ignore[no-redef]
        except ImportError:
            return False
    (err,) = cudart.cudaCtxResetPersistingL2Cache()
    return int(err) == 0


class CellRunner:
    """Times one (rung, profile) cell on one uploaded workload."""

    def __init__(self, gpu: Gpu, kernels: RungKernels | None, rung: Rung, profile: str,
                 indices: Any, hot: Any) -> None:
        self.gpu, self.kernels, self.rung, self.profile = gpu, kernels, rung, profile
        self.indices, self.hot = indices, hot

    def _consumer(self, t: int, b: int) -> Callable[[], None]:
        g = self.gpu
        idx = self.indices[b, t]
        if self.kernels is None:  # torch reference row
            import torch.nn.functional as F

            return lambda: F.embedding_bag(idx, g.weights[t], g.offsets, mode="sum")
        return lambda: self.kernels.launch_consumer(g.weights[t], idx, g.offsets, g.out)

    def call(self, t: int, b: int, device_timed: bool, nvtx_on: bool) -> dict[str, float]:
        g, opts = self.gpu, self.gpu.opts
        rng = _nvtx_range if nvtx_on else (lambda *a: nullcontext())
        if opts.l2_state == "flush":
            g.flush_l2()
        pin_us = cons_us = wall_us = lag_us = float("nan")
        consumer = self._consumer(t, b)
        name = (self.rung.name, self.profile, opts.l2_state, t, b)
        if device_timed:
            if self.rung.pins:
                with rng("pin", *name):
                    pin_us = g.timed(lambda: self.kernels.launch_pin(g.weights[t], self.hot))
                    lag_us = g.last_lag_us
                if opts.l2_state == "flush_after_pin":
                    g.flush_l2()
            with rng("consumer", *name):
                cons_us = g.timed(consumer)
                lag_us = max(lag_us, g.last_lag_us) if lag_us == lag_us else g.last_lag_us
        else:
            torch = g.torch
            t0 = time.perf_counter()
            if self.rung.pins:
                with rng("pin", *name):
                    self.kernels.launch_pin(g.weights[t], self.hot)
                torch.cuda.current_stream().synchronize()
                if opts.l2_state == "flush_after_pin":
                    g.flush_l2()
            with rng("consumer", *name):
                consumer()
            torch.cuda.current_stream().synchronize()
            wall_us = (time.perf_counter() - t0) * 1e6
        return {"pin_time_us": pin_us, "consumer_time_us": cons_us, "call_wall_time_us": wall_us,
                "launch_lag_us": lag_us}

    def run_repeat(self, repeat: int, device_timed: bool) -> pd.DataFrame:
        """One pass over all batches. It starts from a flushed L2 with no evict-last lines left:
        pins never un-pin, so without this a cell would inherit the pins of the cells before it
        (seen on the H200: repeat medians drifting by up to 16 % with the cell order)."""
        cfg, opts = self.gpu.cfg, self.gpu.opts
        self.gpu.flush_l2()
        state_before = self.gpu.telemetry.read()
        total = cfg.batches * cfg.tables
        rows = []
        for b in range(cfg.warmup_batches + cfg.batches):
            for t in range(cfg.tables):
                measured = b - cfg.warmup_batches
                k = measured * cfg.tables + t           # index among measured calls
                nvtx_on = measured >= 0 and (opts.nvtx_last == 0 or k >= total - opts.nvtx_last)
                r = self.call(t, b, device_timed, nvtx_on)
                if measured < 0 or k == 0:              # warm-up, and the cold first sample
                    continue
                rows.append({"rung": self.rung.name, "profile": self.profile,
                             "l2_state": opts.l2_state, "repeat": repeat, "batch": measured,
                             "table": t, **r})
        # GPU state at the end of the repeat (clocks under load), the same for all its rows.
        state = self.gpu.telemetry.read()
        state["gpu_temp_c"] = max(state["gpu_temp_c"], state_before["gpu_temp_c"])
        columns = [*SAMPLES.columns, "launch_lag_us"]
        return pd.DataFrame(rows, columns=columns).assign(**state)


def _nvtx_range(role: str, rung: str, profile: str, l2_state: str, table: int, batch: int) -> Any:
    import nvtx

    return nvtx.annotate(nvtx_name(role, rung, profile, l2_state, table, batch))


def consumer_bytes_per_call(cfg: WorkloadConfig) -> int:
    """Bytes the consumer must read per call: one row per lookup, the indices and the offsets."""
    return cfg.lookups_per_batch * (cfg.dim * cfg.element_bytes + 8) + cfg.batch_size * 8


def repeat_plan(opts: LadderOptions) -> list[tuple[int, bool]]:
    """(repeat index, device_timed) in run order: the device-timed repeats, then one host repeat."""
    plan = [(r, True) for r in range(opts.repeats)]
    if opts.host_repeat:
        plan.append((opts.repeats, False))
    return plan


def done_repeats(run: RunDir) -> set[tuple[str, str, str, int]]:
    if not run.has(SAMPLES):
        return set()
    s = run.read(SAMPLES)
    return set(map(tuple, s[["rung", "profile", "l2_state", "repeat"]].drop_duplicates()
                   .itertuples(index=False, name=None)))


def iter_cells(opts: LadderOptions) -> Iterator[tuple[str, Rung]]:
    for profile in opts.profiles:
        for rung in opts.rungs:
            yield profile, rung


def check_real_data(gpu: Gpu, kernels: RungKernels | None, indices: Any, hot: Any) -> float:
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


def _replace_cell(run: RunDir, summary: pd.DataFrame) -> None:
    keys = ["rung", "profile", "l2_state"]
    if run.has(CELLS):
        cells = run.read(CELLS)
        this = tuple(summary.iloc[0][k] for k in keys)
        keep = ~(cells[keys].apply(tuple, axis=1) == this)
        summary = pd.concat([cells[keep], summary], ignore_index=True)
    run.write(CELLS, summary)


def run_ladder(cfg: WorkloadConfig, opts: LadderOptions, run: RunDir,
               log: Callable[[str], None] = print, progress: Any = None) -> pd.DataFrame:
    """Measure every (profile, rung) cell into `run`; finished (cell, repeat)s are skipped."""
    from l2attr.workload import build_workload

    t_start = time.perf_counter()
    gpu = Gpu(cfg, opts, log)
    timings: dict[str, float] = {"table_generation_s": gpu.table_gen_s}

    t0 = time.perf_counter()
    compiled: dict[str, RungKernels | None] = {}
    for rung in opts.rungs:
        compiled[rung.name] = None if rung.consumer == "torch" else RungKernels(
            rung, cfg.dtype, opts.shape, opts.maxrregcount, opts.pin_granularity, opts.rpf_depth)
    timings["compile_s"] = time.perf_counter() - t0
    variants = {name: k.resources() for name, k in compiled.items() if k is not None}

    t0 = time.perf_counter()
    checks = {name: check_variant(k, cfg.dtype, cfg.dim, cfg.seed + i)
              for i, (name, k) in enumerate(compiled.items()) if k is not None}
    timings["check_s"] = time.perf_counter() - t0
    log("correctness vs torch.nn.functional.embedding_bag: " + ", ".join(
        f"{n} {max(e.values()):.1e}" for n, e in checks.items()))
    gpu.warm_up()
    hbm = gpu.hbm_copy_GBps()
    log(f"HBM device-to-device copy: {hbm:.0f} GB/s (read + write)")
    gpu.flush_l2()
    run.update_manifest(variants=variants, checks=checks, hbm_copy_GBps=hbm,
                        telemetry="NVML per repeat (samples.csv: sm_clock_mhz ... clock_event_reasons)"
                        if gpu.telemetry.available else "unavailable (no pynvml)",
                        repeat_start_state="L2 flushed (2x L2 read) after cudaCtxResetPersistingL2Cache"
                        if gpu.priority_reset_ok else "L2 flushed (2x L2 read); evict-last reset unavailable")

    done = done_repeats(run)
    plan = repeat_plan(opts)
    workloads: dict[str, Any] = dict(run.manifest().get("workloads", {}))
    real_checks: dict[str, float] = dict(run.manifest().get("real_data_checks", {}))
    bytes_per_call = consumer_bytes_per_call(cfg)
    task = progress.add_task("ladder", total=len(opts.profiles) * len(opts.rungs) * len(plan)) \
        if progress is not None else None
    timings["workload_s"] = 0.0
    timings["measure_s"] = 0.0
    for profile in opts.profiles:
        todo = [(rung, rp) for rung in opts.rungs for rp in plan
                if (rung.name, profile, opts.l2_state, rp[0]) not in done]
        if not todo:
            if progress is not None:
                progress.advance(task, len(opts.rungs) * len(plan))
            continue
        t0 = time.perf_counter()
        if opts.trace is not None:
            w = build_workload(cfg, trace=opts.trace, hot=opts.hot,
                               drop_out_of_range=opts.drop_out_of_range, cache_dir=opts.cache_dir)
        else:
            w = build_workload(cfg, profile=profile, hot=opts.hot, cache_dir=opts.cache_dir)
        indices = gpu.torch.from_numpy(w.indices).cuda()
        hot = gpu.torch.from_numpy(np.ascontiguousarray(w.hot)).cuda()
        workloads[profile] = w.source
        timings["workload_s"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        for rung in opts.rungs:
            k = compiled[rung.name]
            err = check_real_data(gpu, k, indices, hot)
            real_checks[f"{rung.name}:{profile}"] = err
            if err > 1e-5 and cfg.dtype == "fp32":
                raise UserError(f"variant {rung.name} is wrong on the {profile} workload: relative "
                                f"error {err:.3g} vs torch.nn.functional.embedding_bag")
        runner_by_rung = {r.name: CellRunner(gpu, compiled[r.name], r, profile, indices, hot)
                          for r in opts.rungs}
        # Repeats interleave across rungs so a slow drift of the GPU touches every rung alike.
        for repeat, device_timed in plan:
            for rung in opts.rungs:
                if (rung.name, profile, opts.l2_state, repeat) in done:
                    continue
                samples = runner_by_rung[rung.name].run_repeat(repeat, device_timed)
                run.append(SAMPLES, samples)
                if progress is not None:
                    progress.advance(task)
        all_samples = run.read(SAMPLES)
        for rung in opts.rungs:
            mine = all_samples[(all_samples.rung == rung.name) & (all_samples.profile == profile)
                               & (all_samples.l2_state == opts.l2_state)]
            _replace_cell(run, summarize_cell(mine, bytes_per_call))
        timings["measure_s"] += time.perf_counter() - t0
        del indices, hot
        run.update_manifest(workloads=workloads, real_data_checks=real_checks)
    timings["total_s"] = time.perf_counter() - t_start
    run.update_manifest(timings=timings)
    return run.read(CELLS)
