"""The GPU side of a sweep: the ladder's Gpu, kernels and checks, plus what each arm needs.

Reused from layer A: measure/gpu.Gpu (tables, offsets, the kernel timer with its spin, the
flush with the persisting-L2 reset), measure/kernels.VariantKernels (the families' OptMT and
L2P+OptMT kernels) and measure/check.compile_and_check (every kernel against torch first). Added
here: hot sets of any size from the profile's ranking, a ring of unrelated data for the polluting
read, a dummy buffer whose lines an evict_last prefetch holds in L2 (occupy), and the remapped
tables and indices with the access-policy window (window). What is set up follows from the
sweep's points (their hot sets, pollution, occupation and arms), not from the axis' name, so an
axis that combines these needs no code here.
"""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Iterator

import numpy as np

from l2attr.dlrm.config import WorkloadConfig
from l2attr.errors import UserError
from l2attr.dlrm import compile as kc
from l2attr.gpu.persisting import DeviceLimits, Driver
from l2attr.dlrm.declare import RUNG_BY_NAME
from l2attr.dlrm.measure.check import TOLERANCE, relative_error
from l2attr.sweep.measure.protocol import ArmOps
from l2attr.sweep.declare import Point, SweepOptions, points
from l2attr.vocab import Arm, Family, Pin

POLLUTE_RING_BYTES = 1 << 30      # unrelated data: each polluting read starts where the last ended
OCCUPY_ROW_FLOATS = 128           # the dummy buffer is pinned as 512-byte rows, one prefetch per line


def hot_ranking(cfg: WorkloadConfig, profile: str, indices: np.ndarray) -> np.ndarray:
    """Every row id, hottest first, ranked as build_workload ranks the ladder's hot set (one
    period of a periodic profile, else the whole stream; ties to the smaller id), so the first
    hot_rows of it are the ladder's hot set and a sweep's hot sets are prefixes of one ranking."""
    from l2attr.dlrm.workload import profiles
    from l2attr.dlrm.workload.hotset import id_counts

    name = profiles.canonical_profile(profile)
    period = profiles.period(name, cfg.rows)
    ranked_on = profiles.generate(name, period, cfg.rows, cfg.seed) if period else indices.reshape(-1)
    return np.argsort(-id_counts(ranked_on, cfg.rows), kind="stable").astype(np.int64)


class SweepDevice:
    """Everything one sweep run holds on the GPU; `ops` builds what an arm runs at a point."""

    def __init__(self, cfg: WorkloadConfig, opts: SweepOptions, limits: DeviceLimits,
                 log: Callable[[str], None] = print) -> None:
        from l2attr.dlrm.measure.gpu import Gpu
        from l2attr.dlrm.measure.check import compile_and_check
        from l2attr.dlrm.measure.options import LadderOptions

        self.cfg, self.opts, self.limits, self.log = cfg, opts, limits, log
        self.gpu = Gpu(cfg, opts.spin_us, log)
        self.torch = self.gpu.torch
        lopts = LadderOptions(rungs=[RUNG_BY_NAME["optmt"], RUNG_BY_NAME["l2p_optmt"]], profiles=[],
                              families=list(opts.families), pin_granularity=opts.pin_granularity)
        self.timings: dict[str, float] = {"table_generation_s": self.gpu.table_gen_s}
        compiled, self.resources, self.checks = compile_and_check(cfg, lopts, self.timings)
        self.kernels: dict[tuple[Family, str], Any] = {}
        for v in lopts.variants:
            self.kernels[(v.family, v.rung.name)] = compiled["/".join(v.key)]
        self.pins = {v.family: v.pin for v in lopts.variants if v.rung.pins}
        self.real_checks: dict[str, float] = {}
        self.facts: dict[str, Any] = {}
        pts = points(cfg, opts, limits)
        arms = {a for p in pts for a in p.arms}
        self.hot_sizes = sorted({p.hot_rows for p in pts if p.hot_rows >= 0})
        self.remapped = bool(arms & {Arm.REMAP, Arm.WINDOW})
        window = Arm.WINDOW in arms
        self.driver = Driver() if window else None
        self.stream: Any = None
        self._ring_offset = 0
        self.ring = self.occupy_buf = self.occupy_ids = None
        if max(p.pollute_bytes for p in pts) > 0:
            self.ring = self.torch.randint(0, 2**31 - 1, (POLLUTE_RING_BYTES // 4,), dtype=self.torch.int32,
                                           device="cuda")
            self.read_kernel = kc.get_kernel(kc.READ_SPEC)
            self.sms = self.gpu.cupy.cuda.runtime.getDeviceProperties(
                self.gpu.cupy.cuda.Device().id)["multiProcessorCount"]
        if max(p.occupy_bytes for p in pts) > 0:
            rows = max(1, limits.l2_bytes // (OCCUPY_ROW_FLOATS * 4))
            self.occupy_buf = self.torch.empty((rows, OCCUPY_ROW_FLOATS), dtype=self.torch.float32,
                                               device="cuda").uniform_(-1, 1)
            self.occupy_ids = self.torch.arange(rows, dtype=self.torch.int64, device="cuda")
            self.occupy_kernel = kc.get_kernel(kc.pin_spec("fp32", Pin.LINE))
        if window:
            self.stream = self.gpu.cupy.cuda.Stream(non_blocking=False)
        self.gpu.flush_l2()

    # -- per profile ----------------------------------------------------------------------------
    def load_profile(self, profile: str) -> dict[str, Any]:
        """Build and upload the profile's workload (and its remapped copy for the window)."""
        from l2attr.dlrm.measure.check import check_real_data
        from l2attr.dlrm.workload import build_workload

        torch, cfg = self.torch, self.cfg
        w = build_workload(cfg, profile=profile, cache_dir=self.opts.cache_dir)
        self.indices = self.gpu.upload_indices(w.indices)
        self.batches = int(w.indices.shape[0])
        ranking = hot_ranking(cfg, profile, w.indices)
        same = bool(np.array_equal(ranking[:cfg.hot_rows], w.hot))
        longest = max([cfg.hot_rows, *self.hot_sizes])
        self.ranking = torch.from_numpy(np.ascontiguousarray(ranking[:longest])).cuda()
        self.hot = self.ranking[:cfg.hot_rows]
        counts = np.bincount(w.indices.reshape(-1), minlength=cfg.rows)
        coverage = {str(n): float(counts[ranking[:n]].sum() / counts.sum())
                    for n in sorted({cfg.hot_rows, *self.hot_sizes})}
        self.remap_w = self.remap_idx = None
        if self.remapped:
            self._build_remap()
        self.gpu.warm_up(0.5)
        for (family, rung), k in self.kernels.items():
            err = check_real_data(self.gpu, k, self.indices, self.hot)
            self.real_checks[f"{family.value}/{rung}:{profile}"] = err
            if err > TOLERANCE[cfg.dtype]:
                raise UserError(f"{family.value} {rung} is wrong on the {profile} workload: relative error "
                                f"{err:.3g} vs torch.nn.functional.embedding_bag")
        if self.remap_w is not None:
            for family in self.opts.families:
                err = self.check_remap(family)
                self.real_checks[f"{family.value}/remap:{profile}"] = err
                if err > TOLERANCE[cfg.dtype]:
                    raise UserError(f"{family.value} OptMT on the remapped table is wrong on {profile}: "
                                    f"relative error {err:.3g} vs torch.nn.functional.embedding_bag")
        self.gpu.flush_l2()
        return {"source": w.source, "hot_ranking_matches_ladder_hot_set": same, "hot_coverage": coverage}

    def unload_profile(self) -> None:
        self.indices = self.ranking = self.hot = self.remap_w = self.remap_idx = None
        self.torch.cuda.empty_cache()

    def _build_remap(self) -> None:
        """Hot rows first (hottest first), then the others in id order: one copy of each table and a
        remapped index stream, so the hot rows are one contiguous region the window can cover."""
        from l2attr.dlrm.measure.residency import build_remap

        r = build_remap(self.torch, self.gpu.weights, self.hot, self.indices)
        self.remap_w, self.remap_idx = r.weights, r.indices

    def check_remap(self, family: Family) -> float:
        """Table 0, batch 0 through the remapped table and indices vs torch on the original ones."""
        import torch.nn.functional as F

        g = self.gpu
        g.out.fill_(float("nan"))
        self.kernels[(family, "optmt")].launch_consumer(self.remap_w[0], self.remap_idx[0, 0], g.offsets, g.out)
        self.torch.cuda.synchronize()
        ref = F.embedding_bag(self.indices[0, 0], g.weights[0].double(), g.offsets, mode="sum")
        return relative_error(g.out, ref)

    # -- per arm --------------------------------------------------------------------------------
    def start_repeat(self) -> None:
        """Every repeat starts from a flushed L2 with persisting/evict-last priorities reset."""
        self.gpu.flush_l2()

    @contextmanager
    def arm(self, family: Family, p: Point, arm: Arm) -> Iterator[ArmOps]:
        """The arm's ops, inside the stream (and persisting set-aside) the arm needs."""
        with self._stream():
            if arm == Arm.WINDOW:
                with self._window_setaside(p):
                    yield self.ops(family, p, arm)
            else:
                yield self.ops(family, p, arm)

    def _stream(self) -> Any:
        """The window axis runs every arm on one created stream (an access-policy window is a
        stream attribute); the other axes on the default stream, as the ladder."""
        if self.stream is None:
            return nullcontext()
        ext = self.torch.cuda.ExternalStream(self.stream.ptr)

        @contextmanager
        def both() -> Iterator[None]:
            with self.stream, self.torch.cuda.stream(ext):
                yield
        return both()

    @contextmanager
    def _window_setaside(self, p: Point) -> Iterator[None]:
        assert self.driver is not None and self.stream is not None
        nbytes = self.window_bytes()
        before = self.driver.persisting_limit()
        granted = self.driver.set_persisting_limit(min(nbytes, self.limits.persisting_max_bytes))
        self.facts.update(persisting_setaside_bytes=granted, persisting_limit_before_bytes=before)
        try:
            yield
        finally:
            self.driver.clear_window(self.stream.ptr)
            self.driver.reset_persisting()
            self.driver.set_persisting_limit(before)

    def window_bytes(self) -> int:
        return self.cfg.hot_rows * self.cfg.dim * self.cfg.element_bytes

    def ops(self, family: Family, p: Point, arm: Arm) -> ArmOps:
        g, cfg = self.gpu, self.cfg
        remapped = arm in (Arm.REMAP, Arm.WINDOW)
        weights = self.remap_w if remapped else g.weights
        indices = self.remap_idx if remapped else self.indices
        consumer_k = self.kernels[(family, "optmt")]

        def consumer(t: int, b: int) -> Callable[[], None]:
            w, idx = weights[t], indices[b, t]
            return lambda: consumer_k.launch_consumer(w, idx, g.offsets, g.out)

        ops = ArmOps(consumer=consumer)
        if arm == Arm.PIN:
            pin_k = self.kernels[(family, "l2p_optmt")]
            hot = self.ranking[:p.hot_rows] if p.hot_rows >= 0 else self.hot

            def pin(t: int) -> Callable[[], None]:
                w = g.weights[t]
                return lambda: pin_k.launch_pin(w, hot)
            ops.pin = pin
        if p.pollute_bytes > 0:
            ops.pollute = self._pollute(p.pollute_bytes)
        if p.occupy_bytes > 0:
            ops.setup = self._occupy(p.occupy_bytes)
        if arm == Arm.WINDOW:
            drv, stream, nbytes, ratio = self.driver, self.stream.ptr, self.window_bytes(), p.hit_ratio
            bases = [int(self.remap_w[t].data_ptr()) for t in range(cfg.tables)]
            assert drv is not None
            ops.prepare = lambda t: drv.set_window(stream, bases[t], nbytes, ratio)
        return ops

    def _pollute(self, nbytes: int) -> Callable[[], None]:
        """A streaming read of `nbytes` the tables never touch, a fresh part of a 1 GiB ring each time."""
        ring, kernel, sms = self.ring, self.read_kernel, self.sms
        assert ring is not None
        total = POLLUTE_RING_BYTES
        nbytes = min(nbytes, total) // 16 * 16

        def launch() -> None:
            if self._ring_offset + nbytes > total:
                self._ring_offset = 0
            ptr = ring.data_ptr() + self._ring_offset
            self._ring_offset += nbytes
            kernel((8 * sms,), (256,), (np.uint64(ptr), np.int64(nbytes // 16), np.int32(1),
                                        np.uint64(ring.data_ptr())))
        return launch

    def _occupy(self, nbytes: int) -> Callable[[int], None]:
        """Prefetch the first `nbytes` of the dummy buffer into L2 as evict_last, then sync: before
        every call, so the emulated L2 holds through the cell (outside every timer)."""
        buf, ids, kernel = self.occupy_buf, self.occupy_ids, self.occupy_kernel
        assert buf is not None and ids is not None
        rows = min(ids.numel(), -(-nbytes // (OCCUPY_ROW_FLOATS * 4)))
        args = (np.uint64(buf.data_ptr()), np.uint64(ids.data_ptr()), np.int64(rows),
                np.int32(OCCUPY_ROW_FLOATS), np.int64(OCCUPY_ROW_FLOATS))
        stream_sync = self.gpu.stream_sync

        def setup(_t: int) -> None:
            kernel((1024,), (256,), args)
            stream_sync()
        return setup

    def describe(self) -> dict[str, Any]:
        return {"variants": self.resources, "checks": self.checks, "real_data_checks": self.real_checks,
                "timings": self.timings, **self.facts,
                "limits": {"l2CacheSize": self.limits.l2_bytes,
                           "persistingL2CacheMaxSize": self.limits.persisting_max_bytes,
                           "accessPolicyMaxWindowSize": self.limits.window_max_bytes}}
