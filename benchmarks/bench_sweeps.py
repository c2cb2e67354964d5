"""Benchmark: each sweep from a cold process at its defaults, against the 3-minute target.

    python benchmarks/bench_sweeps.py [--out runs] [AXIS ...] [-- extra `l2attr sweep` flags]

Runs `python -m l2attr sweep AXIS` as a new process per axis (compile, data, correctness checks and
timing included; the workload cache under OUT/.cache is shared, so the first sweep pays for
generating the profiles), and prints each sweep's wall time against the 180 s target at the
artifact shape on an H200, then its reading. Exit status 1 when a sweep failed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

AXES = ("amortisation", "hotset", "pollution", "occupy", "window")
TARGET_S = 180.0


def main(argv: list[str]) -> int:
    extra: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1:]
    out = Path("runs")
    if "--out" in argv:
        at = argv.index("--out")
        out = Path(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    axes = [a for a in argv if a] or list(AXES)
    results = []
    for axis in axes:
        before = set(out.glob(f"*-bench-{axis}")) if out.exists() else set()
        t0 = time.perf_counter()
        rc = subprocess.call([sys.executable, "-m", "l2attr", "sweep", axis, "--quiet", "--name", f"bench-{axis}",
                              "--out", str(out), *extra])
        wall = time.perf_counter() - t0
        runs = sorted(set(out.glob(f"*-bench-{axis}")) - before)
        results.append((axis, rc, wall, runs[-1] if runs else None))
        print(f"bench_sweeps: {axis}: exit {rc}, {wall:.1f} s wall (target <= {TARGET_S:.0f} s: "
              f"{'met' if rc == 0 and wall <= TARGET_S else 'MISSED' if rc == 0 else 'failed'})", flush=True)
    print("\nbench_sweeps summary (cold process per sweep, artifact shape unless flags say otherwise):")
    for axis, rc, wall, run in results:
        print(f"  {axis:13s} {wall:7.1f} s  {'ok' if rc == 0 else f'exit {rc}':8s} "
              f"{'<= 180 s' if wall <= TARGET_S else '> 180 s'}  {run or '(no run dir)'}")
    return 0 if all(rc == 0 for _, rc, _, _ in results) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
