"""L2 capacity: the ladder's verdict (L2P+OptMT vs OptMT) on smaller effective L2s.

Part of L2 is held by evict_last lines of a dummy buffer, touched again before every call
(outside the timers); the x value is what is left. Per (family, profile, effective L2): the
consumer-only and pin-charged speedups of L2P+OptMT over OptMT at that size.
"""

from __future__ import annotations

import math

import pandas as pd

from l2attr.analysis.common import ratio

from l2attr.vocab import Arm, SweepQuantity as Q, Timer

COLUMNS = ["family", "pin", "profile", "point", "effective_l2_mib", "optmt_us", "pinned_consumer_us", "pin_us",
           "speedup_consumer", "speedup_charged", "speedup_wall"]


def table(points: pd.DataFrame) -> pd.DataFrame:
    if points.empty:
        return pd.DataFrame(columns=COLUMNS)
    v = {(r.family, r.profile, r.point, r.arm, r.quantity, r.timer): float(r.median_us) for r in points.itertuples()}
    pins = dict(zip(points["family"], points["pin"]))
    rows = []
    for fam, prof, point, x in sorted({(r.family, r.profile, r.point, float(r.x)) for r in points.itertuples()},
                                      key=lambda z: (z[0], z[1], -z[3])):
        g = lambda a, q, t=Timer.KERNEL: v.get((fam, prof, point, a, q, t), math.nan)  # noqa: E731
        ref, cons, charged = g(Arm.OPTMT.value, Q.CONSUMER), g(Arm.PIN.value, Q.CONSUMER), g(Arm.PIN.value, Q.CHARGED)
        ref_w, pin_w = g(Arm.OPTMT.value, Q.CALL, Timer.WALL), g(Arm.PIN.value, Q.CALL, Timer.WALL)
        rows.append({"family": fam, "pin": pins.get(fam, ""), "profile": prof, "point": point, "effective_l2_mib": x,
                     "optmt_us": ref, "pinned_consumer_us": cons, "pin_us": g(Arm.PIN.value, Q.PIN),
                     "speedup_consumer": ratio(ref, cons),
                     "speedup_charged": ratio(ref, charged),
                     "speedup_wall": ratio(ref_w, pin_w)})
    return pd.DataFrame(rows, columns=COLUMNS)


def reading(t: pd.DataFrame) -> str:
    if t.empty:
        return "No capacity points measured."
    parts = []
    for (fam, prof), g in t.groupby(["family", "profile"], sort=False):
        g = g.sort_values("effective_l2_mib", ascending=False)
        parts.append(f"{fam} {prof}: " + ", ".join(f"{r.speedup_charged:.2f}x at {r.effective_l2_mib:g} MiB"
                                                   for r in g.itertuples()))
    return "Pin-charged speedup of L2P+OptMT over OptMT by effective L2: " + "; ".join(parts) + "."
