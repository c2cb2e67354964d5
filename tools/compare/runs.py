"""Two ladder runs of one workload, cell by cell: does `--workers` measure what one process does?

    python tools/compare/runs.py RUN_A RUN_B [--csv OUT.csv] [--json OUT.json]

Reads both run dirs (the integrity checks of `l2attr report`), sets every shared cell's medians
side by side with analysis.compare (the difference, the larger of the two runs' run-to-run
spreads of that cell, whether the difference is beyond it) and prints, per quantity and timer,
how many cells are within the spread; then each run's wall time and GPUs. Every figure comes from
the two run dirs; nothing is judged here beyond "within / beyond the spread". --json writes the
summary rows and whether the consumer's kernel medians differ by at most 1 % (issue 39's
two-process target; tools/device.py's speed plan).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from l2attr.analysis.compare import compare_cells, compare_summary  # noqa: E402
from l2attr.analysis.load import load_runs  # noqa: E402
from l2attr.errors import UserError  # noqa: E402
from l2attr.report.compare import quantity_label  # noqa: E402


def lines(a: Path, b: Path) -> tuple[list[str], object]:
    study = load_runs([a, b])
    table = compare_cells(study)
    if table.empty:
        raise UserError(f"{a.name} and {b.name} share no cells")
    out = []
    for r in compare_summary(table).to_dict("records"):
        within = r["with_spread"] - r["exceeding"]
        spread = (f"{within} of {r['with_spread']} cells within the larger run-to-run spread" if r["with_spread"]
                  else "no run-to-run spread recorded for it")
        out.append(f"{quantity_label(r['quantity'], r['timer'])}: {spread} ({r['cells']} shared); |difference| "
                   f"median {r['median_abs_diff_pct']:.2f} %, worst {r['max_abs_diff_pct']:.2f} % ({r['worst_cell']})")
    for run in study.runs:
        m = run.manifest
        gpus = m.get("gpus") or {}
        where = ", ".join(sorted(gpus)) if gpus else str((m.get("gpu") or {}).get("uuid") or "?")
        dist = m.get("distribute")
        how = f"--workers {dist['workers']}" if dist and dist.get("workers") else "one process"
        out.append(f"{run.name}: {how}, wall {float(m.get('process_wall_s') or 0):.1f} s, GPU {where}")
    return out, table


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs=2, type=Path)
    ap.add_argument("--csv", type=Path, help="write every shared cell's comparison here")
    ap.add_argument("--json", type=Path, help="write the summary and the two-process verdict here")
    args = ap.parse_args(argv)
    try:
        text, table = lines(*args.runs)
    except UserError as exc:
        print(f"compare_runs: error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(text))
    if args.csv:
        from l2attr import atomic

        atomic.write_csv(args.csv, table)
    if args.json:
        args.json.write_text(json.dumps(verdict(table), indent=1, default=str) + "\n")
    return 0


def verdict(table: object) -> dict:
    """The summary rows, and the consumer's kernel median |difference| against issue 39's 1 %."""
    rows = compare_summary(table).to_dict("records")
    consumer = [r for r in rows if r["quantity"] == "consumer" and r["timer"] == "kernel"]
    pct = consumer[0]["median_abs_diff_pct"] if consumer else None
    return {"rows": rows, "consumer_kernel_median_abs_diff_pct": pct, "within_1_pct": pct is not None and pct <= 1.0}


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
