"""A timeline run against another of the same range: what a change of how ncu samples (for example
`--pm-max-passes 1`) kept and lost.

    python tools/compare/timelines.py NEW_RUN OLD_RUN [--json FILE]

Printed per sampled quantity: samples in each run and their mean, and per phase (pin, gap,
consumer): its duration in each run. The check, exit 0 when it holds: the new run holds every
quantity the old one holds, each with at least half the old run's samples, and finds each of the
three phases the old run finds. Values are printed, not judged: two ranges replayed in two processes
differ by more than sampling does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

PHASES = ("pin", "gap", "consumer")


class Unreadable(ValueError):
    """A run's timeline.csv or phases.csv that is not the table the timeline writes."""


def _read(run: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    tables = []
    for name, cols in (("timeline.csv", {"quantity", "value"}), ("phases.csv", {"phase", "duration_us"})):
        try:
            t = pd.read_csv(run / name)
        except OSError as e:                             # missing or unreadable
            raise Unreadable(f"{run / name}: {e.strerror or e}") from e
        except (ValueError, UnicodeDecodeError) as e:   # pandas' parser and empty-file errors are ValueErrors
            raise Unreadable(f"{run / name} is not a CSV table: {str(e).splitlines()[0]}") from e
        if not cols <= set(t.columns):
            raise Unreadable(f"{run / name} lacks the columns {sorted(cols - set(t.columns))}")
        tables.append(t)
    return tables[0], tables[1]


def compare(new: Path, old: Path) -> dict:
    """Per quantity (samples, median) and per phase (duration) of both runs, and the verdict."""
    (tn, pn), (to, po) = _read(new), _read(old)
    quantities = {}
    for q in sorted(set(to["quantity"]) | set(tn["quantity"])):
        a, b = tn[tn["quantity"] == q]["value"], to[to["quantity"] == q]["value"]
        quantities[q] = {"samples_new": int(a.size), "samples_old": int(b.size),
                         "mean_new": round(float(a.mean()), 3) if a.size else None,
                         "mean_old": round(float(b.mean()), 3) if b.size else None}
    phases = {}
    for p in PHASES:
        a, b = pn[pn["phase"] == p]["duration_us"], po[po["phase"] == p]["duration_us"]
        phases[p] = {"us_new": round(float(a.sum()), 3) if a.size else None,
                     "us_old": round(float(b.sum()), 3) if b.size else None}
    lost = [q for q, v in quantities.items() if v["samples_old"] and v["samples_new"] * 2 < v["samples_old"]]
    missing = [p for p, v in phases.items() if v["us_old"] is not None and v["us_new"] is None]
    return {"quantities": quantities, "phases": phases, "thin_or_lost": lost, "phases_missing": missing,
            "holds": not lost and not missing}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("new", type=Path)
    ap.add_argument("old", type=Path)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    try:
        r = compare(a.new, a.old)
    except Unreadable as e:
        print(f"compare_timeline: {e}", file=sys.stderr)
        return 2
    for q, v in r["quantities"].items():
        print(f"compare_timeline: {q}: samples {v['samples_new']} (old {v['samples_old']}), "
              f"mean {v['mean_new']} (old {v['mean_old']})")
    for p, v in r["phases"].items():
        print(f"compare_timeline: phase {p}: {v['us_new']} us (old {v['us_old']})")
    print(f"compare_timeline: {'holds' if r['holds'] else 'does not hold'}: thin or lost {r['thin_or_lost']}, "
          f"phases missing {r['phases_missing']}")
    if a.json:
        a.json.write_text(json.dumps(r, indent=1) + "\n")
    return 0 if r["holds"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
