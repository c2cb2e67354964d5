"""Tuning table of the fast family's launch parameters, measured on this GPU.

    python benchmarks/tune_fast.py --out examples/tuning [--profiles random,reuse_medium]

At the artifact shape (12 tables x 500K rows x 128 fp32, batch 2048, pooling 150) every point of
warps per bag x bags per block x row loads in flight is compiled, checked against
torch.nn.functional.embedding_bag on the real workload, and timed with CUDA events (spin head
start, as the ladder's kernel timer) over every table call of the measured batches, repeats
interleaved across the points so a drift of the GPU touches all alike; the cold first call of each
repeat is dropped. The tuned family's OptMT consumer runs beside them as the reference. Writes
`fast_tuning.csv` (one row per point and profile, rewritten atomically after each profile) and
prints the choice `l2attr.ladders.tuning.table.choose` makes from it.

    python benchmarks/tune_fast.py --out OUT --workers N [--chunk 12] [--resume]

splits the grid into chunks of --chunk points, one unit per chunk, measured on N GPUs (one worker
process each, l2attr/distribute); every chunk times the tuned reference beside its points on its
own GPU, the table gains gpu_uuid / gpu_name / host columns, and the choice ranks points by that
same-GPU ratio (ladders.tuning.table).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from l2attr import atomic
from l2attr.ladders.tuning.table import choose, score
from l2attr.schema import TUNING_KNOBS as KNOBS
from l2attr.dlrm.config import PRESETS
from l2attr.dlrm.declare import FAST_DEFAULT, parse_profiles, variant
from l2attr.dlrm.measure.kernels import LaunchShape, VariantKernels

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


def measure_points(pts: list[Point], profiles: list[str], batches: int, repeats: int, cache_dir: Path,
                   on_profile: Callable[[list[dict]], None] = lambda rows: None,
                   log: Callable[[str], None] = print) -> list[dict]:
    """On this process's GPU: compile the points, check them on each profile's real workload, and
    time them beside the tuned OptMT consumer, repeats interleaved; one row per point and profile.
    `on_profile(rows so far)` after each profile (the one-process path writes the table there)."""
    from dataclasses import replace

    from l2attr.errors import UserError
    from l2attr.dlrm.measure.gpu import Gpu
    from l2attr.dlrm.measure.check import check_real_data
    from l2attr.dlrm.workload import build_workload

    cfg = replace(PRESETS["artifact"], batches=batches, warmup_batches=1)
    gpu = Gpu(cfg, 50.0, log)
    ref = VariantKernels(variant("tuned", "optmt"), cfg.dtype, LaunchShape())
    kernels = {p: VariantKernels(variant("fast", "optmt"), cfg.dtype, shape(p)) for p in pts}
    # A block larger than the registers allow does not launch: such points are left out, said once.
    ok = [p for p, k in kernels.items() if 32 * p[0] * p[1] <= k.consumer.max_threads_per_block]
    for p in sorted(set(kernels) - set(ok)):
        log(f"tune_fast: {p} does not launch ({kernels[p].consumer.num_regs} registers x "
            f"{32 * p[0] * p[1]} threads)")
        del kernels[p]
    rows: list[dict] = []
    for profile in profiles:
        w = build_workload(cfg, profile=profile, cache_dir=cache_dir)
        idx = gpu.upload_indices(w.indices)
        hot = gpu.torch.from_numpy(np.ascontiguousarray(w.hot)).cuda()
        gpu.warm_up(0.5)
        errors = {p: check_real_data(gpu, k, idx, hot) for p, k in kernels.items()}
        bad = {p: e for p, e in errors.items() if not e <= 1e-5}
        if bad:
            raise UserError(f"points wrong vs torch on {profile}: {bad}")
        samples: dict[object, list[list[float]]] = {p: [] for p in [*ok, "tuned"]}
        for _ in range(repeats):
            for p, k in [*kernels.items(), ("tuned", ref)]:
                times = []
                for b in range(cfg.warmup_batches, cfg.warmup_batches + cfg.batches):
                    for t in range(cfg.tables):
                        times.append(gpu.timed(lambda: k.launch_consumer(gpu.weights[t], idx[b, t],
                                                                         gpu.offsets, gpu.out)))
                samples[p].append(times[1:])   # the repeat's cold first call is dropped
        tuned_us = float(np.median(np.concatenate(samples["tuned"])))
        for p in ok:
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
        on_profile(rows)
        idx = hot = None      # this profile's workload leaves the GPU before the next is uploaded
    return rows


def measure_chunk(pts: list[Point], profiles: list[str], batches: int, repeats: int, cache_dir: Path) -> dict:
    """A worker's unit: a chunk of the grid with its own tuned reference (ratios stay on one GPU)."""
    lines: list[str] = []
    return {"rows": measure_points(pts, profiles, batches, repeats, cache_dir, log=lines.append), "log": lines}


def on_workers(args: argparse.Namespace, dist, pts: list[Point], profiles: list[str], client=None) -> list[dict]:
    """The grid in chunks of --chunk points, one unit each, on one GPU per worker; the table is
    rewritten (atomically) as each chunk arrives, so --resume measures only the chunks not in it."""
    from l2attr.distribute.cluster import using_cluster
    from l2attr.distribute.units import Counter, Unit, missing_error, run_units

    out = args.out / "fast_tuning.csv"
    rows: list[dict] = []
    chunks = [pts[i:i + args.chunk] for i in range(0, len(pts), args.chunk)]
    if args.resume and out.is_file():      # a chunk's rows are written at once: any of them means all
        old = pd.read_csv(out)
        have = {tuple(int(v) for v in r) for r in old[list(KNOBS)].to_numpy()}
        done = [c for c in chunks if any(p in have for p in c)]
        rows = old.to_dict("records")
        chunks = [c for c in chunks if c not in done]
        print(f"tune_fast: resume: {len(done)} chunks kept, {len(chunks)} to measure")
    units = [Unit(f"tune:{i}", measure_chunk, (c, profiles, args.batches, args.repeats, args.out / ".cache"))
             for i, c in enumerate(chunks)]
    counter = Counter(len(units), print)

    def arrived(a) -> None:
        for line in a.value["log"]:
            print(line)
        rows.extend({**r, **a.where.columns()} for r in a.value["rows"])
        atomic.write_csv(out, pd.DataFrame(rows))
        counter.said(a)

    with using_cluster(dist, print, client) as c:
        outcome = run_units(c, units, arrived)
    if outcome.missing:
        raise missing_error(outcome, out, "chunks")
    return rows


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("tuning"))
    ap.add_argument("--profiles", default="random,reuse_medium")
    ap.add_argument("--batches", type=int, default=4, help="measured batches per repeat (x 12 tables)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--chunk", type=int, default=12,
                    help="with --workers/--scheduler: grid points per unit, each unit timing the tuned "
                         "OptMT reference beside them on its GPU (default 12)")
    ap.add_argument("--resume", action="store_true",
                    help="with --workers/--scheduler: keep the chunks OUT/fast_tuning.csv already holds")
    from l2attr.distribute.options import add_arguments, from_flags
    from l2attr.errors import UserError

    add_arguments(ap)
    args = ap.parse_args(argv)
    try:
        dist = from_flags(args.workers, args.scheduler)   # before any GPU is looked for: a bad flag exits 2, as argparse
        if args.chunk < 1:
            raise UserError(f"--chunk must be at least 1, got {args.chunk}")
    except UserError as exc:
        print(f"tune_fast: error: {exc}", file=sys.stderr)
        return 2
    t_start = time.perf_counter()
    profiles = parse_profiles(args.profiles)
    if dist is None:
        def write(rows: list[dict]) -> None:
            atomic.write_csv(args.out / "fast_tuning.csv", pd.DataFrame(rows))

        rows = measure_points(points(), profiles, args.batches, args.repeats, args.out / ".cache", on_profile=write)
    else:
        rows = on_workers(args, dist, points(), profiles)
    table = pd.DataFrame(rows)
    s = score(table)
    with pd.option_context("display.width", 200, "display.max_rows", 80):
        print(s.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    n_points = table[list(KNOBS)].drop_duplicates().shape[0]
    print(f"tune_fast: choice {choose(table)} (today's defaults: {FAST_DEFAULT}); "
          f"{n_points} points x {table['profile'].nunique()} profiles in {time.perf_counter() - t_start:.1f} s")
    return 0


if __name__ == "__main__":
    from l2attr.errors import UserError

    try:
        raise SystemExit(main(sys.argv[1:]))
    except UserError as exc:        # no GPU, no torch, a bad option value: one line, not a traceback
        print(f"tune_fast: error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
