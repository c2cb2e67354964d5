"""The GPU side of layer A: tables, buffers, the clocks and the L2 reset, made once per run.

`Gpu` owns everything the per-call protocol (protocol.py) touches on the device, behind a few
verbs (`timed`, `artifact_timed`, `stream_sync`, `flush_l2`), so the protocol's order of
operations can be checked on a CPU with a fake.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from l2attr.dlrm.config import WorkloadConfig
from l2attr.errors import UserError
from l2attr.dlrm import compile as kc
from l2attr.gpu.runtime import reset_persisting_l2
from l2attr.vocab import TimerKind


def required_bytes(cfg: WorkloadConfig, l2_bytes: int) -> dict[str, int]:
    """What the run allocates on the GPU, so it can refuse before allocating."""
    calls = (cfg.warmup_batches + cfg.batches) * cfg.tables
    return {
        "tables": cfg.tables * cfg.table_bytes,
        "indices": (calls * cfg.lookups_per_batch + 1) * 8,
        "offsets_hot_out": cfg.batch_size * 8 + cfg.hot_rows * 8 + cfg.batch_size * cfg.dim * cfg.element_bytes,
        "offset2bag_bag_size": (cfg.lookups_per_batch + cfg.batch_size) * 8,
        "flush_buffer": 2 * l2_bytes,
        "bandwidth_buffers": 1 << 32,   # the 4 GiB HBM read stream (the copy's 2 x 1 GiB go first)
        "torch_workspace": 2 * cfg.batch_size * cfg.dim * 8 + cfg.lookups_per_batch * 8 * 4,
    }


def check_fits(cfg: WorkloadConfig) -> int:
    """Refuse, before allocating anything, a workload the GPU cannot hold; returns the L2 size."""
    from l2attr.gpu.runtime import require_gpu

    _, cupy = require_gpu(import_torch=False)
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

    def __init__(self, cfg: WorkloadConfig, spin_us: float, log: Callable[[str], None],
                 timer: str = TimerKind.SPIN.value) -> None:
        from l2attr.gpu.device import Telemetry
        from l2attr.gpu.runtime import require_gpu

        self.torch, self.cupy = require_gpu()
        torch, cupy = self.torch, self.cupy
        self.cfg, self.spin_us, self.log = cfg, spin_us, log
        self.l2_bytes = check_fits(cfg)
        self.dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[cfg.dtype]
        self.spin = kc.get_kernel(kc.SPIN_SPEC)
        self.flush_kernel = kc.get_kernel(kc.FLUSH_SPEC)
        self.flush_buf = torch.randint(0, 2**31 - 1, (2 * self.l2_bytes // 4,), dtype=torch.int32,
                                       device="cuda")
        self.start, self.stop = cupy.cuda.Event(), cupy.cuda.Event()
        self.telemetry = Telemetry(cupy.cuda.Device().id)
        self.priority_reset_ok = False
        self.last_lag_us = float("nan")
        self.last_discard = ""
        from l2attr.measure.timer import make_timer

        self.timer_kind = timer
        self.timer = make_timer(timer, torch, cupy, spin_us)
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

    # -- the verbs the per-call protocol uses ---------------------------------------------------
    def flush_l2(self) -> None:
        """Reset evict-last/persisting lines to normal, then stream 2x L2 of other data through."""
        self.priority_reset_ok = reset_persisting_l2()
        words = self.flush_buf.numel()
        self.flush_kernel((1024,), (256,), (np.uint64(self.flush_buf.data_ptr()), np.int64(words),
                                            np.uint64(self.flush_buf.data_ptr())))
        self.torch.cuda.synchronize()

    def reset_l2_priority(self) -> None:
        """cudaCtxResetPersistingL2Cache alone: the pinned lines stay, their evict_last mark goes."""
        self.priority_reset_ok = reset_persisting_l2()
        self.torch.cuda.synchronize()

    def stream_sync(self) -> None:
        from l2attr.measure.timer import current_streams

        current_streams(self.torch, self.cupy)[0].synchronize()   # cached: no Stream built per call

    def host_clock_us(self) -> float:
        return time.perf_counter() * 1e6

    def timed(self, launch: Callable[[], None]) -> float:
        """Device time of `launch` in microseconds, by the run's kernel timer (measure/timer.py:
        the blocking timer by default, or a spin head start).

        Also keeps `last_lag_us` (host time to enqueue the events and the launch) and
        `last_discard` (timeout / late / throttled, '' when the sample is clean)."""
        s = self.timer.time(launch)
        self.last_lag_us, self.last_discard = s.enqueue_us, s.discard
        return s.time_us

    def artifact_timed(self, launch: Callable[[], None]) -> float:
        """The artifact's own per-call number, in microseconds: record(start) -> launch ->
        stream sync -> record(stop) -> event sync. It holds the launch latency, the kernel and
        the host's round trip through the sync; no spin, the GPU is idle at the start."""
        self.start.record()
        launch()
        self.stream_sync()
        self.stop.record()
        self.stop.synchronize()
        return self.cupy.cuda.get_elapsed_time(self.start, self.stop) * 1000.0

    # -- run-level measurements -----------------------------------------------------------------
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

    def read_GBps(self, nbytes: int, passes: int = 1, reps: int = 10) -> float:
        """Read bandwidth over a buffer of `nbytes` read `passes` times per kernel (16-byte loads,
        8 blocks per SM), median of reps after one warm run: HBM when the buffer dwarfs L2, L2 when
        it fits (then many passes, so the kernel's fixed costs do not dominate)."""
        torch = self.torch
        kernel = kc.get_kernel(kc.READ_SPEC)
        buf = torch.randint(0, 2**31 - 1, (nbytes // 4,), dtype=torch.int32, device="cuda")
        sms = self.cupy.cuda.runtime.getDeviceProperties(self.cupy.cuda.Device().id)["multiProcessorCount"]
        args = (np.uint64(buf.data_ptr()), np.int64(nbytes // 16), np.int32(passes), np.uint64(buf.data_ptr()))
        times = []
        for i in range(reps + 1):
            t = self.timed(lambda: kernel((8 * sms,), (256,), args))
            if i:
                times.append(t)
        del buf
        return passes * nbytes / (float(np.median(times)) * 1e-6) / 1e9

    def upload_indices(self, indices: np.ndarray) -> Any:
        """The run's index stream on the GPU, followed by one spare element (a valid row id).

        The artifact family's RPF may read one index past a call's last bag (ladder.py,
        `reads_one_past_end`); the spare element makes that read land on allocated memory that
        holds a real row id, so the kernel itself stays the artifact's.
        """
        flat = np.ascontiguousarray(indices).reshape(-1)
        spare = flat[-1:] if flat.size else np.zeros(1, dtype=np.int64)
        buf = self.torch.from_numpy(np.concatenate([flat, spare])).cuda()
        return buf[: flat.size].view(indices.shape)


def describe(gpu: Any) -> dict[str, Any]:
    """What the manifest records about the run's start state."""
    return {"repeat_start_state": "L2 flushed (2x L2 read) after cudaCtxResetPersistingL2Cache"
            if getattr(gpu, "priority_reset_ok", False)
            else "L2 flushed (2x L2 read); evict-last reset unavailable"}
