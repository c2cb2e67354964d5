"""The gather ceiling's candidates and the workload they run on (benchmarks/gather_ceiling.py).

A candidate is one kernel configuration: a ceiling read of the consumer's rows (`ceiling` at the
artifact shape, `steady` with a batch's 12 tables in one launch) or a consumer (`consumer`: the
fast family around its defaults, the tuned OptMT as the reference). `Bench` holds the workload on
the GPU and gives one launcher per candidate and table call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from l2attr.dlrm.declare import FAST_DEFAULT

STEADY_TABLES = 12


@dataclass(frozen=True)
class Candidate:
    """One kernel configuration: a ceiling read (`ceiling`, `steady`) or a consumer (`consumer`)."""

    name: str
    kind: str
    unroll: int = 4
    pipe: int = 0
    per_warp: int = 75
    warps_per_bag: int = 2
    bags_per_block: int = 4
    maxrregcount: int = 56
    family: str = "fast"
    epi: int = 0          # ceiling: the consumer's epilogue (pairs of warps, a 512-byte store)
    dep: int = 0          # ceiling: each pair of warps reads its start from the offsets first


def candidates() -> list[Candidate]:
    out = []
    for u in (2, 4, 8):
        for pipe in (0, 1):
            for per_warp in (38, 75):
                out.append(Candidate(f"ceiling u{u} pipe{pipe} w{per_warp}", "ceiling", u, pipe, per_warp))
    for u, pipe in ((4, 0), (8, 0), (2, 1)):
        out.append(Candidate(f"steady u{u} pipe{pipe} w75", "steady", u, pipe, 75))
    for u, pipe in ((4, 0), (2, 1), (8, 0)):
        out.append(Candidate(f"ceiling+epilogue u{u} pipe{pipe} w75", "ceiling", u, pipe, 75, epi=1))
    for u in (4, 8):
        out.append(Candidate(f"ceiling+offsets+epilogue u{u} pipe0 w75", "ceiling", u, 0, 75, epi=1, dep=1))
        out.append(Candidate(f"ceiling+offsets u{u} pipe0 w75", "ceiling", u, 0, 75, dep=1))
    # The fast consumer at its defaults and at the neighbouring points the tuning table holds.
    default = Candidate("fast (defaults)", "consumer", FAST_DEFAULT.unroll, warps_per_bag=FAST_DEFAULT.warps_per_bag,
                        bags_per_block=FAST_DEFAULT.bags_per_block, maxrregcount=FAST_DEFAULT.maxrregcount)
    out.append(default)
    for u, w, b, cap in ((4, 2, 4, 56), (8, 2, 2, 64), (8, 2, 1, 64), (8, 2, 4, 0)):
        c = Candidate(f"fast u{u} w{w} b{b} cap{cap}", "consumer", u, warps_per_bag=w, bags_per_block=b,
                      maxrregcount=cap)
        if (c.unroll, c.warps_per_bag, c.bags_per_block, c.maxrregcount) != (
                default.unroll, default.warps_per_bag, default.bags_per_block, default.maxrregcount):
            out.append(c)
    out.append(Candidate("tuned optmt", "consumer", family="tuned"))
    return out


class Bench:
    """The workload on the GPU and one launcher per candidate."""

    def __init__(self, profile: str, batches: int) -> None:
        from l2attr.dlrm.config import PRESETS
        from l2attr.dlrm import compile as kc
        from l2attr.dlrm.declare import variant
        from l2attr.dlrm.measure.gpu import Gpu
        from l2attr.dlrm.measure.kernels import LaunchShape, VariantKernels
        from l2attr.dlrm.workload import build_workload

        self.cfg = replace(PRESETS["artifact"], batches=batches, warmup_batches=1)
        self.gpu = gpu = Gpu(self.cfg, 50.0, lambda s: None)
        torch = gpu.torch
        w = build_workload(self.cfg, profile=profile, cache_dir=Path(os.environ.get("TMPDIR", "/tmp")) / "l2attr-ceiling")
        self.idx = gpu.upload_indices(w.indices)
        self.hot = torch.from_numpy(np.ascontiguousarray(w.hot)).cuda()
        rows = self.cfg.rows
        shift = (torch.arange(self.cfg.tables, device="cuda", dtype=torch.int64) * rows)[:, None]
        # Steady state: a batch's lookups into all 12 tables as one index stream over the 3 GB.
        self.steady = [(self.idx[b] + shift).reshape(-1).contiguous()
                       for b in range(self.cfg.warmup_batches + self.cfg.batches)]
        self.sink = torch.zeros(4, dtype=torch.int32, device="cuda")
        self.zeros = torch.zeros(128, dtype=torch.int32, device="cuda")   # 32 zero vectors of 16 bytes
        self.kc, self.variant, self.LaunchShape, self.VariantKernels = kc, variant, LaunchShape, VariantKernels
        self._kernels: dict[Candidate, object] = {}

    def _ceiling_kernel(self, c: Candidate):
        spec = self.kc.KernelSpec("gather_ceiling.cu", "gather_rows",
                                  (f"-DGATHER_UNROLL={c.unroll}", f"-DGATHER_PIPE={c.pipe}", f"-DGATHER_EPI={c.epi}",
                                   f"-DGATHER_DEP={c.dep}"))
        return self.kc.get_kernel(spec)

    def consumer(self, c: Candidate):
        if c not in self._kernels:
            if c.family == "tuned":
                k = self.VariantKernels(self.variant("tuned", "optmt"), self.cfg.dtype, self.LaunchShape())
            else:
                shape = self.LaunchShape(fast_warps_per_bag=c.warps_per_bag, fast_bags_per_block=c.bags_per_block,
                                         fast_unroll=c.unroll, fast_maxrregcount=c.maxrregcount)
                k = self.VariantKernels(self.variant("fast", "optmt"), self.cfg.dtype, shape)
            self._kernels[c] = k
        return self._kernels[c]

    def launcher(self, c: Candidate, batch: int, table: int):
        g = self.gpu
        if c.kind == "consumer":
            idx = self.idx[batch, table]
            return lambda: self.consumer(c).launch_consumer(g.weights[table], idx, g.offsets, g.out)
        kernel = self._ceiling_kernel(c)
        if c.kind == "steady":
            if table:
                return None      # one launch per batch covers all tables
            idx, base = self.steady[batch], g.weights
        else:
            idx, base = self.idx[batch, table], g.weights[table]
        n = idx.numel()
        warps = -(-n // c.per_warp)
        grid = -(-warps * 32 // 256)
        vectors = self.cfg.dim * base.element_size() // 16
        sink = g.out if c.epi else self.sink     # the epilogue stores 512 bytes per pair of warps
        assert not c.dep or (c.kind == "ceiling" and 2 * c.per_warp == self.cfg.pooling)
        assert not c.epi or -(-warps // 2) * 512 <= sink.numel() * sink.element_size()
        args = (np.uint64(base.data_ptr()), np.uint64(idx.data_ptr()), np.int64(n), np.int32(c.per_warp),
                np.int32(vectors), np.int64(vectors), np.uint64(sink.data_ptr()), np.uint64(g.offsets.data_ptr()),
                np.uint64(self.zeros.data_ptr()))
        return lambda: kernel((grid,), (256,), args)

    def check(self, c: Candidate) -> float:
        from l2attr.dlrm.measure.check import check_real_data

        return check_real_data(self.gpu, self.consumer(c), self.idx, self.hot) if c.kind == "consumer" else float("nan")

    def calls(self) -> list[tuple[int, int]]:
        first = self.cfg.warmup_batches
        return [(b, t) for b in range(first, first + self.cfg.batches) for t in range(self.cfg.tables)]


def lookups(bench: Bench, c: Candidate) -> int:
    per_call = bench.idx.shape[-1]
    return per_call * (STEADY_TABLES if c.kind == "steady" else 1)


def read_launchers(bench: Bench, buf) -> dict:
    """The manifest's sequential read (`read_stream`, one load in flight per thread) and one with
    four (`read_wide`), over the same 4 GiB buffer and grid (8 blocks of 256 per SM)."""
    kc = bench.kc
    sms = bench.gpu.cupy.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    vectors = np.int64(buf.numel() * buf.element_size() // 16)
    ptr = np.uint64(buf.data_ptr())
    read = kc.get_kernel(kc.READ_SPEC)
    wide = kc.get_kernel(kc.KernelSpec("gather_ceiling.cu", "read_wide", ()))
    return {"read_stream 4 GiB": lambda: read((8 * sms,), (256,), (ptr, vectors, np.int32(1), ptr)),
            "read_wide 4 GiB": lambda: wide((8 * sms,), (256,), (ptr, vectors, ptr))}
