"""How many replay passes ncu needs for a metric set, and for that set without each one metric.

    python tools/probes/passes.py [--set l2] [--ncu ncu]

Each pass of application replay re-runs the whole profiled program, so a metric that costs a
pass costs a full run of the ladder child. This profiles one small CuPy kernel (kernel replay:
the pass count depends on the metrics, not on the replay mode) with the set's metrics for this
GPU's chip, then with each metric left out, and prints the passes of each, so a set can be
trimmed by evidence. Needs a GPU and ncu.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

APP = ("import cupy; a = cupy.ones(1 << 20, dtype=cupy.float32); b = a * 2; "
       "cupy.cuda.Device().synchronize()")


def passes(ncu: str, metrics: list[str]) -> int | None:
    cmd = [ncu, "--metrics", ",".join(metrics), "--launch-count", "1", "--replay-mode", "kernel",
           sys.executable, "-c", APP]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    m = re.search(r"(\d+) pass(?:es)?", res.stdout + res.stderr)
    return int(m.group(1)) if m else None


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="l2")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--chip", default="gh100")
    ap.add_argument("--drop", default="", help="comma list of metric names left out cumulatively")
    ap.add_argument("--without", default="", help="groups left out together: 'a,b;c,d' (one line per group)")
    ap.add_argument("--no-singles", action="store_true", help="skip the one-metric-left-out lines")
    args = ap.parse_args(argv)
    from l2attr.catalog.sets import load_metric_set

    ms = load_metric_set(args.set, args.chip)
    names = list(ms.metrics) if hasattr(ms, "metrics") else list(ms)
    full = passes(args.ncu, names)
    print(f"{args.set} ({len(names)} metrics): {full} passes")
    for name in [] if args.no_singles else names:
        rest = [n for n in names if n != name]
        print(f"  without {name}: {passes(args.ncu, rest)} passes")
    for group in [g for g in args.without.split(";") if g.strip()]:
        out = {n.strip() for n in group.split(",") if n.strip()}
        print(f"  without {', '.join(sorted(out))}: {passes(args.ncu, [n for n in names if n not in out])} passes")
    dropped: list[str] = []
    for name in args.drop.split(",") if args.drop else []:
        dropped.append(name)
        rest = [n for n in names if n not in dropped]
        print(f"  without {', '.join(dropped)}: {passes(args.ncu, rest)} passes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
