"""The pinned arm against the reference arm: the two judgements that read a sweep that way.

Best against the reference (SweepJudgement.BEST_VS_REFERENCE; the window axis): per series, the
best point of the judged arm (the window) and every other arm that is not the reference (the
remap alone), each with the rule's word against the reference (OptMT).

"buys nothing measurable" is then what the words say together, per family and profile, never a
range of medians read by eye: a +2 % with disjoint intervals is "faster".

Per point (SweepJudgement.PER_POINT; the occupy axis, judge_per_point): every point's speedup of
the pinned arm over the reference at that point, with the rule's word on each.
"""

from __future__ import annotations

import pandas as pd

from l2attr.analysis.sweep_peak import best_of, reference_name
from l2attr.analysis.sweep_table import SweepTable, finite
from l2attr.analysis.sweep_verdict import Verdict, judged, label, series, times, word
from l2attr.dlrm.sweep.axes.declare import AxisSpec
from l2attr.vocab import Arm

ARM_NAMES = {Arm.REMAP.value: "remap alone"}


def judge(t: SweepTable, points: pd.DataFrame, spec: AxisSpec) -> Verdict:
    j = spec.judgement
    frame = t.frame
    ref_arm = spec.table.reference.arm.value
    parts, rows = [], []
    for key, g in series(frame, j.by):
        said = []
        for arm in dict.fromkeys(g["arm"]):
            if arm == ref_arm:
                continue
            b = best_of(t, j.on, [i for i in g.index if frame.at[i, "arm"] == arm])
            if b is None:
                continue
            r = frame.loc[b["best"]].to_dict()
            sp, vs = float(r[j.on]), b["vs_reference"]
            where = f" at {label(spec, r)}" if j.arm is not None and arm == j.arm.value else ""
            piece = f"{times(sp)}{where} ({word(vs)})"
            said.append(f"{ARM_NAMES.get(arm, arm)} {piece}")
            rows.append({"family": key[0], "profile": key[1], "arm": arm, "point": r["point"], "x": r["x"],
                         "speedup": sp, "vs_reference": vs.value, "text": piece})
        if said:
            parts.append(f"{' '.join(map(str, key))}: " + ", ".join(said))
    if not parts:
        return Verdict(f"No {spec.axis} points measured.", frame)
    return Verdict(f"{j.what} (the rule's word against {reference_name(spec)}): " + "; ".join(parts) + ".", frame,
                   pd.DataFrame(rows))


def judge_per_point(t: SweepTable, points: pd.DataFrame, spec: AxisSpec) -> Verdict:
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
