"""How fast are the built-in profile generators? (timings live here, never in tests)

    python benchmarks/bench_profiles.py [--repeat N] [--profiles high,medium,...] [--no-build]

Times, per profile:
  raw     profiles.generate for 12 tables x 12 batches x 2048 bags x 150 lookups (44.2M ids),
          the whole process with no circular replay (the worst case);
  build   build_workload for the artifact shape (14 batches incl. warm-up: 51.6M ids) without
          a cache, i.e. what a first GPU run pays (periodic profiles replay one period).
and, where the artifact traces are present, the calibration numbers next to the real traces.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from l2attr.dlrm.config import WorkloadConfig  # noqa: E402
from l2attr.dlrm.declare import PROFILES  # noqa: E402
from l2attr.dlrm.workload import build_workload, profiles, read_trace, trace_stats  # noqa: E402

SHAPE = (12, 12, 2048 * 150)
ARTIFACT = Path(__file__).resolve().parents[2] / "shared" / "traces" / "artifact"
REAL = {"reuse_medium": "reuse_medium_table_500K.txt", "reuse_low": "reuse_low_table_500K.txt"}


def best_of(repeat: int, fn) -> tuple[float, object]:
    """Smallest wall time of `repeat` calls (the least disturbed), and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def bench(names: list[str], repeat: int, build: bool) -> None:
    n = int(np.prod(SHAPE))
    cfg = WorkloadConfig()
    print(f"cpus: {os.cpu_count()}, numpy {np.__version__}; raw = {n:,} ids "
          f"({' x '.join(map(str, SHAPE))}), build = artifact workload, no cache")
    print(f"{'profile':<14}{'raw s':>8}{'M ids/s':>9}{'build s':>9}")
    for name in names:
        raw, _ = best_of(repeat, lambda: profiles.generate(name, n, cfg.rows, cfg.seed))
        line = f"{name:<14}{raw:>8.2f}{n / raw / 1e6:>9.1f}"
        if build:
            built, _ = best_of(repeat, lambda: build_workload(cfg, profile=name))
            line += f"{built:>9.2f}"
        print(line, flush=True)


def calibration(names: list[str]) -> None:
    """Unique ids and top-60K coverage of each profile at the real trace's length, seeds 0-2."""
    rows, k = 500_000, 60_000
    print(f"\n{'profile':<14}{'lookups':>10}{'unique':>10}{'top-60K %':>11}{'reuse med':>11}"
          f"{'reuse p90':>11}   (seeds 0-2, then the artifact trace)")
    for name in names:
        n = profiles.period(name, rows) or profiles.PARAMS["reuse_medium"].period
        for seed in range(3):
            s = trace_stats(profiles.generate(name, n, rows, seed), rows, k, name=name)
            print(f"{name:<14}{s.lookups:>10,}{s.unique:>10,}{100 * s.top_k_coverage:>11.2f}"
                  f"{s.reuse_median:>11,.0f}{s.reuse_p90:>11,.0f}")
        if name in REAL and (ARTIFACT / REAL[name]).is_file():
            s = trace_stats(read_trace(ARTIFACT / REAL[name], rows).ids, rows, k, name=name)
            print(f"{'  artifact':<14}{s.lookups:>10,}{s.unique:>10,}{100 * s.top_k_coverage:>11.2f}"
                  f"{s.reuse_median:>11,.0f}{s.reuse_p90:>11,.0f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="time each step N times, keep the best")
    ap.add_argument("--profiles", default=",".join(PROFILES))
    ap.add_argument("--no-build", action="store_true", help="skip the build_workload timing")
    ap.add_argument("--no-calibration", action="store_true")
    args = ap.parse_args()
    names = [profiles.canonical_profile(p.strip()) for p in args.profiles.split(",") if p.strip()]
    bench(names, args.repeat, not args.no_build)
    if not args.no_calibration:
        calibration(names)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
