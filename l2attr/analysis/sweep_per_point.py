"""Per point (SweepJudgement.PER_POINT; the occupy axis): every point's speedup of the pinned arm
over the reference at that point, with the rule's word on each."""

from __future__ import annotations

import pandas as pd

from l2attr.analysis.sweep_table import SweepTable, finite
from l2attr.analysis.sweep_verdict import Verdict, judged, label, series, times, word
from l2attr.ladder.sweep.axes.declare import AxisSpec


def judge(t: SweepTable, points: pd.DataFrame, spec: AxisSpec) -> Verdict:
    j = spec.judgement
    frame = t.frame
    parts, rows = [], []
    for key, g in series(frame, j.by):
        said = []
        for i in g.index:
            r = frame.loc[i].to_dict()
            if not finite(r[j.on]):
                continue
            vs = judged(t, j.on, i).judgement
            said.append(f"{times(float(r[j.on]))} at {label(spec, r)} ({word(vs)})")
            rows.append({"family": key[0], "profile": key[1], "point": r["point"], "x": r["x"],
                         "speedup": float(r[j.on]), "vs_reference": vs.value, "text": said[-1]})
        if said:
            parts.append(f"{' '.join(map(str, key))}: " + ", ".join(said))
    if not parts:
        return Verdict(f"No {spec.axis} points measured.", frame)
    return Verdict(f"{j.what}: " + "; ".join(parts) + ".", frame, pd.DataFrame(rows))
