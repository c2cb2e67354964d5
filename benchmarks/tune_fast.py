"""Tuning table of the fast family's launch parameters, measured on this GPU.

    python benchmarks/tune_fast.py --out examples/tuning [--profiles random,reuse_medium]

At the artifact shape (12 tables x 500K rows x 128 fp32, batch 2048, pooling 150) every point of
warps per bag x bags per block x row loads in flight is compiled, checked against
torch.nn.functional.embedding_bag on the real workload, and timed with CUDA events (spin head
start, as the ladder's kernel timer) over every table call of the measured batches, repeats
interleaved across the points so a drift of the GPU touches all alike; the cold first call of each
repeat is dropped. The tuned family's OptMT consumer runs beside them as the reference. Writes
`fast_tuning.csv` (one row per point and profile, rewritten atomically after each profile) and
prints the choice `l2attr.analysis.tuning.choose` makes from it.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from l2attr import atomic
from l2attr.analysis.tuning import choose, score
from l2attr.ladder.config import PRESETS
from l2attr.ladder.declare import FAST_DEFAULT, parse_profiles, variant
from l2attr.ladder.measure.kernels import LaunchShape, VariantKernels

# A first table over warps (1, 2, 4, 8) x bags (1, 2, 4, 8) x unroll (4, 8, 16) x load (0, 1, 2)
# x cap (0, 64) showed occupancy deciding (every best point capped at 64 registers, 2 warps per
# bag, bags per block within 1 %, the L2::256B hint never better); a second refined unroll 2-8
# and caps 40-64 (2 warps, 4 loads in flight at 56 registers). Since the unweighted build keeps no
# scale per row in flight and skipped slots load a zero row (no merge moves), 6 rows per lane fit
# in 56 registers and 8 in 64: this grid measures 4-8 rows in flight (L1::no_allocate never won).
WARPS = (1, 2, 3, 4)
BAGS = (1, 2, 4)
UNROLLS = (4, 5, 6, 7, 8)
LOADS = (0,)
REGCAPS = (0, 56, 64, 72)
Point = tuple[int, int, int, int, int]   # warps per bag, bags per block, unroll, load, register cap


def points() -> list[Point]:
    return [p for p in itertools.product(WARPS, BAGS, UNROLLS, LOADS, REGCAPS) if 32 * p[0] * p[1] <= 1024]


def shape(p: Point) -> LaunchShape:
    return LaunchShape(fast_warps_per_bag=p[0], fast_bags_per_block=p[1], fast_unroll=p[2],
                       fast_load=p[3], fast_maxrregcount=p[4])


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("tuning"))
    ap.add_argument("--profiles", default="random,reuse_medium")
    ap.add_argument("--batches", type=int, default=4, help="measured batches per repeat (x 12 tables)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    from dataclasses import replace

    from l2attr.ladder.measure.gpu import Gpu
    from l2attr.ladder.measure.run import check_real_data
    from l2attr.ladder.workload import build_workload

    t_start = time.perf_counter()
    cfg = replace(PRESETS["artifact"], batches=args.batches, warmup_batches=1)
    gpu = Gpu(cfg, 50.0, print)
    ref = VariantKernels(variant("tuned", "optmt"), cfg.dtype, LaunchShape())
    kernels = {p: VariantKernels(variant("fast", "optmt"), cfg.dtype, shape(p)) for p in points()}
    # A block larger than the registers allow does not launch: such points are left out, said once.
    pts = [p for p, k in kernels.items() if 32 * p[0] * p[1] <= k.consumer.max_threads_per_block]
    for p in sorted(set(kernels) - set(pts)):
        print(f"tune_fast: {p} does not launch ({kernels[p].consumer.num_regs} registers x "
              f"{32 * p[0] * p[1]} threads)")
        del kernels[p]
    rows: list[dict] = []
    args.out.mkdir(parents=True, exist_ok=True)
    for profile in parse_profiles(args.profiles):
        w = build_workload(cfg, profile=profile, cache_dir=args.out / ".cache")
        idx = gpu.upload_indices(w.indices)
        hot = gpu.torch.from_numpy(np.ascontiguousarray(w.hot)).cuda()
        gpu.warm_up(0.5)
        errors = {p: check_real_data(gpu, k, idx, hot) for p, k in kernels.items()}
        bad = {p: e for p, e in errors.items() if not e <= 1e-5}
        if bad:
            print(f"tune_fast: points wrong vs torch on {profile}: {bad}", file=sys.stderr)
            return 1
        samples: dict[object, list[list[float]]] = {p: [] for p in [*pts, "tuned"]}
        for _ in range(args.repeats):
            for p, k in [*kernels.items(), ("tuned", ref)]:
                times = []
                for b in range(cfg.warmup_batches, cfg.warmup_batches + cfg.batches):
                    for t in range(cfg.tables):
                        times.append(gpu.timed(lambda: k.launch_consumer(gpu.weights[t], idx[b, t],
                                                                         gpu.offsets, gpu.out)))
                samples[p].append(times[1:])   # the repeat's cold first call is dropped
        tuned_us = float(np.median(np.concatenate(samples["tuned"])))
        for p in pts:
            per_repeat = [float(np.median(s)) for s in samples[p]]
            med = float(np.median(np.concatenate(samples[p])))
            res = kernels[p].resources()["consumer"]
            rows.append({"profile": profile, "warps_per_bag": p[0], "bags_per_block": p[1], "unroll": p[2],
                         "load": p[3], "maxrregcount": p[4],
                         "block_threads": 32 * p[0] * p[1], "median_us": med,
                         "spread_pct": 100.0 * (max(per_repeat) - min(per_repeat)) / med,
                         "calls": sum(len(s) for s in samples[p]), "tuned_optmt_us": tuned_us,
                         "vs_tuned": med / tuned_us, "check_error": errors[p],
                         "registers": res["registers_per_thread"], "blocks_per_sm": res["blocks_per_sm"],
                         "theoretical_occupancy": res["theoretical_occupancy"]})
        atomic.write_csv(args.out / "fast_tuning.csv", pd.DataFrame(rows))
        del idx, hot
    table = pd.DataFrame(rows)
    s = score(table)
    with pd.option_context("display.width", 200, "display.max_rows", 80):
        print(s.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    print(f"tune_fast: choice {choose(table)} (today's defaults: {FAST_DEFAULT}); "
          f"{len(pts)} points x {table['profile'].nunique()} profiles in {time.perf_counter() - t_start:.1f} s")
    return 0


if __name__ == "__main__":
    from l2attr.errors import UserError

    try:
        raise SystemExit(main(sys.argv[1:]))
    except UserError as exc:        # no GPU, no torch, a bad option value: one line, not a traceback
        print(f"tune_fast: error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
