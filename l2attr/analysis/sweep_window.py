"""The access-policy window: residency without a pin kernel, and the remap that makes it possible.

Per (family, profile): OptMT on the original tables, OptMT on the remapped tables (hot rows first,
no window: locality alone), and the window over the remapped hot rows per hitRatio (locality +
persistence). The window costs no GPU time; its price is the host call that sets it before each
consumer (cuStreamSetAttribute, `prepare`), which the wall-clock figures include.
"""

from __future__ import annotations

import math

import pandas as pd

from l2attr.analysis.common import ratio

from l2attr.vocab import Arm, SweepQuantity as Q, Timer

COLUMNS = ["family", "pin", "profile", "point", "arm", "hit_ratio", "consumer_us", "prepare_us", "wall_us",
           "speedup_vs_optmt", "speedup_vs_remap", "speedup_wall_vs_optmt"]


def table(points: pd.DataFrame) -> pd.DataFrame:
    if points.empty:
        return pd.DataFrame(columns=COLUMNS)
    v = {(r.family, r.profile, r.point, r.arm, r.quantity, r.timer): float(r.median_us) for r in points.itertuples()}
    pins = dict(zip(points["family"], points["pin"]))
    rows = []
    arms = sorted({(r.family, r.profile, r.point, r.arm, float(r.hit_ratio)) for r in points.itertuples()},
                  key=lambda x: (x[0], x[1], [Arm.OPTMT, Arm.REMAP, Arm.WINDOW].index(x[3]) if x[3] in
                                 (Arm.OPTMT, Arm.REMAP, Arm.WINDOW) else 9, x[4]))
    for fam, prof, point, arm, hr in arms:
        g = lambda q, t=Timer.KERNEL, p=point, a=arm: v.get((fam, prof, p, a, q, t), math.nan)  # noqa: E731
        ref = g(Q.CONSUMER, p="no_window", a=Arm.OPTMT.value)
        remap = g(Q.CONSUMER, p="no_window", a=Arm.REMAP.value)
        ref_wall = g(Q.CALL, Timer.WALL, "no_window", Arm.OPTMT.value)
        cons, wall = g(Q.CONSUMER), g(Q.CALL, Timer.WALL)
        rows.append({"family": fam, "pin": pins.get(fam, ""), "profile": prof, "point": point, "arm": arm, "hit_ratio": hr,
                     "consumer_us": cons, "prepare_us": g(Q.PREPARE, Timer.WALL) if arm == Arm.WINDOW.value else 0.0,
                     "wall_us": wall, "speedup_vs_optmt": ratio(ref, cons),
                     "speedup_vs_remap": ratio(remap, cons),
                     "speedup_wall_vs_optmt": ratio(ref_wall, wall)})
    return pd.DataFrame(rows, columns=COLUMNS)


def reading(t: pd.DataFrame) -> str:
    if t.empty:
        return "No window points measured."
    parts = []
    for (fam, prof), g in t.groupby(["family", "profile"], sort=False):
        remap = g[g["arm"] == Arm.REMAP.value]
        win = g[g["arm"] == Arm.WINDOW.value].dropna(subset=["speedup_vs_optmt"])
        if win.empty or remap.empty:
            continue
        b = win.loc[win["speedup_vs_optmt"].idxmax()]
        parts.append(f"{fam} {prof}: remap alone {float(remap['speedup_vs_optmt'].iloc[0]):.2f}x, window "
                     f"{b.speedup_vs_optmt:.2f}x at hitRatio {b.hit_ratio:g} for {b.prepare_us:.1f} µs of host "
                     "time per call")
    return ("Consumer speedup over OptMT: " + "; ".join(parts) + ".") if parts else "No window points measured."
