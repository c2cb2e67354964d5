"""Check the occupy sweep's held share of L2 with Nsight Compute (run on the GPU machine).

    python tools/capacity_ncu_check.py [--occupy-mib 20,40] [--traffic-mib 120] [--out capacity_ncu.json]
    python tools/capacity_ncu_check.py --run RUN_DIR      # into RUN_DIR/occupy_ncu.json, beside the sweep

Profiles l2attr.sweep.measure.occupy_probe under ncu (application replay, no cache control, clocks left
alone: the L2 state across kernels is the thing measured) and reads, for every probe read of the
occupied X MiB after `traffic` MiB of unrelated streaming, its DRAM read bytes. Retained share =
1 - DRAM / X: near 1 for the evict_last occupation would mean the held lines stay through a cell's
traffic (the sweep's points would then be a smaller L2); the `normal` control (same bytes read with
normal priority) should be near 0. `l2attr report` prints the result beside the occupy sweep whose
run dir holds it (l2attr/sweep/load.py).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

MiB = 1 << 20
METRICS = ("dram__bytes_read.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
           "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum", "gpu__time_duration.sum")


def parse_raw_csv(text: str) -> list[dict[str, str]]:
    """Rows of `ncu --csv --page raw` output (the header is the line naming the metrics)."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if '"Kernel Name"' in ln and METRICS[0] in ln), None)
    if start is None:
        return []
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))
    return [r for r in rows if r.get("Kernel Name") and r.get(METRICS[0], "").replace(",", "").replace(".", "").isdigit()]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--occupy-mib", default="20,40")
    ap.add_argument("--traffic-mib", type=float, default=120.0)
    ap.add_argument("--out", default=None, help="JSON to write (default capacity_ncu.json, or RUN_DIR/occupy_ncu.json)")
    ap.add_argument("--run", default=None, metavar="RUN_DIR",
                    help="an occupy sweep's run dir: the check is written into it, sized as the sweep's points")
    args = ap.parse_args(argv)
    if args.run:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from l2attr.sweep.axes.occupy import CHECK_FILE

        run = Path(args.run)
        if not (run / "manifest.json").is_file():
            print(f"capacity_ncu_check: {run} is not a run dir (no manifest.json)", file=sys.stderr)
            return 2
        args.out = args.out or str(run / CHECK_FILE)
    args.out = args.out or "capacity_ncu.json"
    ncu = shutil.which("ncu")
    if not ncu:
        print("capacity_ncu_check: ncu not on PATH", file=sys.stderr)
        return 2
    cmd = [ncu, "--config-file", "off", "--replay-mode", "application", "--cache-control", "none",
           "--clock-control", "none", "--kernel-name", "flush_l2", "--metrics", ",".join(METRICS),
           "--csv", "--page", "raw", "--print-units", "base",
           sys.executable, "-m", "l2attr.sweep.measure.occupy_probe", "--occupy-mib", args.occupy_mib,
           "--traffic-mib", str(args.traffic_mib)]
    print("capacity_ncu_check:", " ".join(cmd), flush=True)
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=500)
    rows = parse_raw_csv(res.stdout)
    sizes = [float(x) for x in args.occupy_mib.split(",") if x.strip()]
    labels = [(mib, arm) for mib in sizes for arm in ("evict_last", "normal")]
    results = []
    for (mib, arm), r in zip(labels, rows):
        dram = float(r[METRICS[0]].replace(",", ""))
        hit = float(r[METRICS[1]].replace(",", ""))
        miss = float(r[METRICS[2]].replace(",", ""))
        results.append({"occupy_mib": mib, "arm": arm, "dram_read_bytes": dram,
                        "retained_share": max(0.0, 1 - dram / (mib * MiB)),
                        "l2_read_hit_rate": hit / (hit + miss) if hit + miss else None,
                        "duration_ns": float(r[METRICS[3]].replace(",", ""))})
    ok = res.returncode == 0 and len(results) == len(labels)
    tmp = Path(args.out).with_name(Path(args.out).name + ".tmp")      # atomic: never a half-written check
    tmp.write_text(json.dumps({"command": cmd, "returncode": res.returncode, "traffic_mib": args.traffic_mib,
                               "results": results, "stderr_tail": res.stderr[-3000:],
                               "stdout_tail": res.stdout[-3000:]}, indent=2))
    tmp.replace(args.out)
    print(f"capacity_ncu_check: {len(results)} of {len(labels)} probes read (ncu exit {res.returncode})")
    for r in results:
        print(f"  occupied {r['occupy_mib']:5g} MiB, {r['arm']:10s}: DRAM read {r['dram_read_bytes'] / MiB:7.2f} MiB "
              f"after {args.traffic_mib:g} MiB of traffic -> retained {r['retained_share'] * 100:5.1f} % "
              f"(L2 read hit rate {100 * (r['l2_read_hit_rate'] or 0):.1f} %)")
    if not ok:
        print(res.stdout[-2000:], res.stderr[-2000:], sep="\n")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
