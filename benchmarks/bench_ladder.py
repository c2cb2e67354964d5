"""Benchmark: the full ladder from a cold process, and its run-to-run spread.

    python benchmarks/bench_ladder.py [extra `l2attr ladder` flags]

Starts `python -m l2attr ladder` as a new process (compile, data, correctness checks and timing
included), and prints: the process's wall time (target <= 45 s for both families x 5 rungs + torch
x 4 profiles in the artifact shape on an H200), the run-to-run spread of consumer and pin medians
over the repeats (targets: median <= 1 %, worst <= 3 %), and each cell's achieved consumer
bandwidth next to the HBM copy bandwidth of the run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from l2attr.analysis.spread import repeat_spread


def main(argv: list[str]) -> int:
    out = Path("runs")
    if "--out" in argv:
        out = Path(argv[argv.index("--out") + 1])
    before = set(out.glob("*")) if out.exists() else set()
    t0 = time.perf_counter()
    rc = subprocess.call([sys.executable, "-m", "l2attr", "ladder", "--quiet", "--name", "bench",
                          *argv])
    wall = time.perf_counter() - t0
    if rc != 0:
        return rc
    (run,) = [p for p in set(out.glob("*-bench")) - before]
    manifest = json.loads((run / "manifest.json").read_text())
    samples = pd.read_csv(run / "samples.csv")
    cells = pd.read_csv(run / "cells.csv")
    n_cells = samples.groupby(["family", "rung", "pin", "profile"]).ngroups
    print(f"\nbench_ladder: {n_cells} cells, cold process wall time {wall:.1f} s "
          f"(inside the process: {manifest.get('timings', {}).get('total_s', float('nan')):.1f} s; "
          f"{json.dumps({k: round(v, 1) for k, v in manifest.get('timings', {}).items()})})")
    for what, column in (("consumer", "consumer_time_us"), ("pin", "pin_time_us")):
        spread = repeat_spread(samples, column)
        worst = spread.loc[spread.spread_pct.idxmax()]
        print(f"bench_ladder: run-to-run spread of {what} medians over {int(spread.repeats.max())} "
              f"repeats: median {spread.spread_pct.median():.2f} %, worst {spread.spread_pct.max():.2f} % "
              f"({worst.family} {worst.rung} / {worst.profile})")
    hbm = manifest.get("hbm_copy_GBps", float("nan"))
    cons = cells[(cells.quantity == "consumer") & (cells.timer == "kernel")][
        ["family", "rung", "pin", "profile", "median_us", "achieved_GBps"]]
    cons = cons.assign(of_hbm_copy_pct=cons.achieved_GBps / hbm * 100)
    print(f"bench_ladder: HBM copy bandwidth {hbm:.0f} GB/s; consumer achieved bandwidth per cell:")
    print(cons.round(1).to_string(index=False))
    print(f"bench_ladder: run dir {run}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
