"""A profile run's layer-B cells against the committed fixed profile runs: same keys, values
within the committed spread.

    python tools/compare/profiles.py NEW_RUN [COMMITTED_RUN ...] [--json FILE]

A layer-B cell is the median over its calls of each quantity (analysis.calls: counts summed per
call, rates from those sums), keyed by (condition, role, family, rung, pin, profile, l2_state).
The committed spread of a (cell, quantity) is its smallest to its largest call over the committed
fixed runs (default: tools/compare/calls_per_cell.py's FIXED_RUNS, every call of every cell profiled).
The check: the new run holds the same cell keys as each committed run, and its share of (cell,
quantity) medians outside the committed spread is no larger than the committed runs' own: each
committed run measured the same way against the spread of the others (leave one out), the worst
of them. Also printed, informational: how many new medians lie inside the bootstrap 95 % CI of
the committed calls' median. Quantities only one side holds are listed (e.g. `fabric`: an opt-in set since
the default profile dropped it). Exit 0 when it holds, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

KEYS = ("condition", "role", "family", "rung", "pin", "profile", "l2_state")


def _calls(run: Path):
    import pandas as pd

    from l2attr.analysis.calls import call_table

    path = next((p for p in (run / "metrics.csv", run / "metrics.csv.gz") if p.is_file()), None)
    if path is None:
        raise SystemExit(f"compare_profile: {run}: no metrics.csv(.gz)")
    return call_table(pd.read_csv(path))


def compare_cells(new, old) -> dict[str, Any]:
    """One call table against the calls of the committed runs (`old`, concatenated), as data."""
    from l2attr.analysis.calls import quantities
    from l2attr.measure.stats import bootstrap_median_ci

    qn, qo = set(quantities(new)) - set(KEYS), set(quantities(old)) - set(KEYS)
    shared = sorted(qn & qo)
    gn = {k: g for k, g in new.groupby(list(KEYS), dropna=False)}
    go = {k: g for k, g in old.groupby(list(KEYS), dropna=False)}
    pairs, within, in_ci, outside = 0, 0, 0, []
    for key in sorted(set(gn) & set(go), key=str):
        for q in shared:
            a, b = gn[key][q].astype(float).dropna(), go[key][q].astype(float).dropna()
            if a.empty or b.empty:
                continue
            pairs += 1
            med = float(a.median())
            lo, hi = float(b.min()), float(b.max())
            ok = lo - 1e-9 * abs(lo) <= med <= hi + 1e-9 * abs(hi)
            within += ok
            clo, chi = bootstrap_median_ci(b.to_numpy())
            in_ci += clo <= med <= chi
            if not ok:
                ref = float(b.median())
                outside.append({"cell": "/".join(str(x) for x in key), "quantity": q, "new": med,
                                "committed_median": ref, "committed_min": lo, "committed_max": hi,
                                "diff_pct": 100 * (med - ref) / ref if ref and math.isfinite(ref) else None})
    same = set(gn) == set(go)
    return {"same_keys": same, "cells_new": len(gn), "cells_committed": len(go),
            "only_new": sorted("/".join(map(str, k)) for k in set(gn) - set(go)),
            "only_committed": sorted("/".join(map(str, k)) for k in set(go) - set(gn)),
            "quantities": shared, "quantities_only_committed": sorted(qo - qn),
            "quantities_only_new": sorted(qn - qo),
            "calls_per_cell_new": int(new.groupby(list(KEYS), dropna=False).size().max()) if len(new) else 0,
            "calls_per_cell_committed": int(old.groupby(list(KEYS), dropna=False).size().max()) if len(old) else 0,
            "pairs": pairs, "within_spread": int(within), "within_ci95": int(in_ci), "outside": outside,
            "holds": bool(same and pairs and within == pairs)}


def describe(res: dict[str, Any]) -> str:
    own = ", ".join(f"{100 * x:.1f} %" for x in res.get("committed_outside_shares", []))
    return (f"compare_profile: {'same' if res['same_keys'] else 'DIFFERENT'} cell keys "
            f"({res['cells_new']} cells; calls per cell {res['calls_per_cell_new']} vs "
            f"{res['calls_per_cell_committed']}); {res['within_spread']} of {res['pairs']} (cell, quantity) "
            f"medians within the committed spread ({100 * res.get('outside_share', 0):.1f} % outside; the "
            f"committed runs against each other: {own or '-'} outside); {res['within_ci95']} inside the "
            f"committed 95 % CI; only in the committed runs: {', '.join(res['quantities_only_committed']) or 'none'}; "
            f"{'holds' if res['holds'] else 'DOES NOT HOLD'}")


def against_committed(new, committed: list) -> dict[str, Any]:
    """`new` against the union of `committed` (call tables), judged by the committed runs' own
    leave-one-out share outside (see the module text)."""
    import pandas as pd

    res = compare_cells(new, pd.concat(committed, ignore_index=True))
    keys = {tuple(map(str, k)) for k, _ in new.groupby(list(KEYS), dropna=False)}
    res["same_keys"] = all(keys == {tuple(map(str, k)) for k, _ in c.groupby(list(KEYS), dropna=False)}
                           for c in committed)
    own = []
    for i, c in enumerate(committed):
        others = [o for j, o in enumerate(committed) if j != i]
        if others:
            r = compare_cells(c, pd.concat(others, ignore_index=True))
            own.append(1 - r["within_spread"] / r["pairs"] if r["pairs"] else 0.0)
    res["calls_per_cell_committed"] = max(int(c.groupby(list(KEYS), dropna=False).size().max()) for c in committed)
    res["outside_share"] = 1 - res["within_spread"] / res["pairs"] if res["pairs"] else 1.0
    res["committed_outside_shares"] = own
    res["holds"] = bool(res["same_keys"] and res["pairs"] and res["outside_share"] <= max(own, default=0.0) + 1e-12)
    return res


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("new", type=Path)
    ap.add_argument("committed", type=Path, nargs="*")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    from calls_per_cell import FIXED_RUNS

    committed = args.committed or [ROOT / r for r in FIXED_RUNS]
    new = _calls(args.new)
    res = against_committed(new, [_calls(c) for c in committed])
    res["committed_runs"] = [str(c) for c in committed]
    print(describe(res))
    for o in res["outside"][:20]:
        print(f"  outside: {o['cell']} {o['quantity']}: {o['new']:.6g} vs {o['committed_min']:.6g}.."
              f"{o['committed_max']:.6g} (median {o['committed_median']:.6g})")
    if args.json:
        args.json.write_text(json.dumps(res, indent=1, default=str) + "\n")
    return 0 if res["holds"] else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
