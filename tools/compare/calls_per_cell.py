"""The calls per cell the committed fixed profile runs allow (l2attr/profile/calls_rule.py).

    python tools/compare/calls_per_cell.py [RUN_DIR ...]

Reads each run's metrics.csv(.gz) into its call table (analysis.calls.call_table: counts summed
per call, rates from the sums), and prints the rule's answer: the smallest count of last calls
whose cell medians stay inside the full runs' 95 % intervals (docs/layer-b.md#calls-per-cell).
Without arguments: the committed fixed runs FIXED_RUNS, the runs dlrm/profile/plan.py's
DEFAULT_CALLS_PER_CELL was derived from (tests/test_profile_calls_rule.py holds the two equal).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

# The committed profile runs that profiled every table call of every cell (12 per cell).
FIXED_RUNS = ("examples/20261130T231541Z-profile", "examples/reproduction/20261201T173035Z-profile",
              "examples/reproduction/20261201T205212Z-profile")
KEYS = ("condition", "role", "family", "rung", "profile", "l2_state")


def call_tables(runs: list[Path]):
    import pandas as pd

    from l2attr.analysis.calls import call_table

    out = []
    for run in runs:
        path = next((p for p in (run / "metrics.csv", run / "metrics.csv.gz") if p.is_file()), None)
        if path is None:
            raise SystemExit(f"calls_per_cell: {run}: no metrics.csv(.gz)")
        out.append(call_table(pd.read_csv(path)))
    return out


def verdict(runs: list[Path]):
    from l2attr.analysis.calls import quantities
    from l2attr.profile.calls_rule import calls_needed

    tables = call_tables(runs)
    qs = sorted(set().union(*(quantities(t) for t in tables)) - set(KEYS))
    return calls_needed(tables, KEYS, qs)


def main(argv: list[str]) -> int:
    runs = [Path(a) for a in argv] or [ROOT / r for r in FIXED_RUNS]
    print(f"calls_per_cell: {verdict(runs).describe()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
