"""Benchmark: the fast family against its targets (issue 12), from runs on this GPU.

    python benchmarks/bench_fast.py --out runs            # measure: a ladder and an ncu profile
    python benchmarks/bench_fast.py --runs RUN_DIR ...    # judge runs already made (no GPU)

Measuring runs `l2attr ladder --family tuned,fast --rungs optmt,l2p_optmt,torch --profiles
random,reuse_medium` and `l2attr profile --family tuned,fast --rungs optmt,l2p_optmt` on the same
profiles, each as a new process. Either way the figures come from `l2attr.study.families`
(what the report and README print): per profile the fast consumer's median over the tuned OptMT
consumer's (targets: <= 0.65 on random, <= 0.6 on reuse_medium) and the DRAM bandwidth it drew
under ncu (bytes / duration) over the measured read-only HBM bandwidth (target >= 0.80 on random).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

TARGETS = {"random": 0.65, "reuse_medium": 0.60}
DRAM_TARGET = ("random", 0.80)


def _new_run(out: Path, before: set[Path], suffix: str) -> Path | None:
    new = sorted(set(out.glob(f"*-{suffix}")) - before)
    return new[-1] if new else None


def measure(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    common = ["--family", "tuned,fast", "--profiles", "random,reuse_medium"]
    runs = []
    for command, extra, suffix in (("ladder", ["--rungs", "optmt,l2p_optmt,torch", "--quiet"], "fast-bench"),
                                   ("profile", ["--rungs", "optmt,l2p_optmt", "--no-control"], "fast-profile")):
        before = set(out.glob("*"))
        args = common
        t0 = time.perf_counter()
        rc = subprocess.call([sys.executable, "-m", "l2attr", command, *args, *extra,
                              "--name", suffix, "--out", str(out)])
        print(f"bench_fast: l2attr {command} {time.perf_counter() - t0:.1f} s (exit {rc})")
        run = _new_run(out, before, suffix)
        if rc or run is None:
            return []
        runs.append(run)
    return runs


def judge(runs: list[Path]) -> int:
    from l2attr.analysis.load import load_runs
    from l2attr.study.study import analyse

    fam = analyse(load_runs(runs, allow_mixed=True)).families
    if fam.empty:
        print("bench_fast: no ladder rows for the fast family in these runs")
        return 1
    fast = fam[fam["family"] == "fast"]
    ok = True
    for rec in fast.to_dict("records"):
        target = TARGETS.get(rec["profile"])
        if target is not None:
            hit = rec["vs_tuned"] <= target
            ok &= bool(hit)
            print(f"bench_fast: {rec['profile']}: fast consumer {rec['consumer_us']:.1f} µs = "
                  f"{rec['vs_tuned']:.3f}x the tuned OptMT consumer (target <= {target}) "
                  f"{'met' if hit else 'MISSED'}")
        if rec["profile"] == DRAM_TARGET[0]:
            frac = rec["dram_fraction"]
            if frac == frac:
                hit = frac >= DRAM_TARGET[1]
                ok &= bool(hit)
                print(f"bench_fast: {rec['profile']}: fast consumer DRAM {rec['dram_GBps']:.0f} GB/s = "
                      f"{100 * frac:.1f} % of the measured read-only HBM bandwidth (target >= "
                      f"{100 * DRAM_TARGET[1]:.0f} %) {'met' if hit else 'MISSED'}")
            else:
                ok = False
                print(f"bench_fast: {rec['profile']}: no ncu DRAM figure for the fast consumer in these runs")
    for s in fam["sentence"]:
        print(f"  {s}")
    print(f"bench_fast: runs {' '.join(str(r) for r in runs)}")
    return 0 if ok else 2


def main(argv: list[str]) -> int:
    if "--runs" in argv:
        return judge([Path(p) for p in argv[argv.index("--runs") + 1:]])
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else Path("runs")
    runs = measure(out)
    return judge(runs) if runs else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
