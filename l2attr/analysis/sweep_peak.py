"""Peak (SweepJudgement.PEAK; the hot-set axis): per series and judged speedup column, the point
with the highest speedup, and what the rule says about it.

"peaks at X" only where X is faster than the reference beyond noise and faster than every other
measured point beyond noise (its interval clear of each one's); otherwise "best at X, within
noise of ..." naming the points it cannot be told from, or "nothing beats the reference beyond
noise". The reference's own row (OptMT at 0 hot rows) is the comparand, not a candidate.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from l2attr.analysis.significance import compare
from l2attr.analysis.sweep_table import SweepTable, finite
from l2attr.analysis.sweep_verdict import Verdict, judged, label, series, times, word
from l2attr.dlrm.sweep.axes.declare import AxisSpec
from l2attr.vocab import Arm, Judgement, RefPoint

REFERENCE_NAMES = {Arm.OPTMT.value: "OptMT", Arm.REMAP.value: "the remap alone"}


def reference_name(spec: AxisSpec) -> str:
    arm = spec.table.reference.arm.value
    return REFERENCE_NAMES.get(arm, arm)


def header(spec: AxisSpec, column: str) -> str:
    return next((c.header for c in spec.table.columns if c.name == column), column)


def best_of(t: SweepTable, column: str, idx: list[int]) -> dict[str, Any] | None:
    """The best row of `idx` by `column`, its word against the reference and the rows of `idx`
    it cannot be told from (not beyond noise of them)."""
    frame = t.frame
    idx = [i for i in idx if finite(frame.at[i, column])]
    if not idx:
        return None
    best = max(idx, key=lambda i: float(frame.at[i, column]))
    mine = t.intervals[column][best][1]
    ties = [i for i in idx if i != best and compare(t.intervals[column][i][1], mine).judgement != Judgement.FASTER]
    return {"best": best, "vs_reference": judged(t, column, best).judgement, "ties": ties}


def is_reference(t: SweepTable, spec: AxisSpec, i: int) -> bool:
    """The row is the reference itself (OptMT at the lowest x, the hot-set's 0 rows)."""
    row = t.frame.loc[i]
    if row["arm"] != spec.table.reference.arm.value:
        return False
    same = t.frame[(t.frame["family"] == row["family"]) & (t.frame["profile"] == row["profile"])]
    return spec.table.reference.at != RefPoint.LOWEST_X or float(row["x"]) == float(same["x"].min())


def judge(t: SweepTable, points: pd.DataFrame, spec: AxisSpec) -> Verdict:
    j = spec.judgement
    frame = t.frame
    ref = reference_name(spec)
    rows, texts = [], {}
    for c in (j.on, *j.also):
        parts = []
        for key, g in series(frame, j.by):
            b = best_of(t, c, [i for i in g.index if not is_reference(t, spec, i)])
            if b is None:
                continue
            r = frame.loc[b["best"]].to_dict()
            at, sp, vs = label(spec, r), float(r[c]), b["vs_reference"]
            ties = [label(spec, frame.loc[i].to_dict()) for i in b["ties"]]
            peak = vs == Judgement.FASTER and not b["ties"]
            if vs != Judgement.FASTER:
                text = f"nothing beats {ref} beyond noise (best {times(sp)} at {at}: {word(vs)})"
            elif peak:
                text = f"peaks at {at}: {times(sp)}, beyond noise of every other point"
            else:
                text = f"best {times(sp)} ({word(vs)}) at {at}, within noise of {', '.join(ties)}"
            parts.append(f"{' '.join(map(str, key))}: {text}")
            rows.append({"family": key[0], "profile": key[1], "column": c, "point": r["point"], "x": r["x"],
                         "speedup": sp, "vs_reference": vs.value, "peak": peak,
                         "within_noise_of": ";".join(str(frame.at[i, "point"]) for i in b["ties"]), "text": text})
        texts[c] = "; ".join(parts)
    if not rows:
        return Verdict(f"No {spec.axis} points measured.", frame)
    reading = f"{j.what} — " + ". ".join(f"{header(spec, c)}: {texts[c]}" for c in texts if texts[c]) + "."
    return Verdict(reading, frame, pd.DataFrame(rows))
