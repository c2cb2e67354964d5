"""Hot-set size: what pinning more (or fewer) of the hottest rows buys and costs.

Per (family, profile, hot rows): the pin kernel's time, the consumer's, and the charged speedup
over the 0-row point (OptMT alone, the same loop without a pin): T_optmt / (T_pin + T_consumer).
Sizes are also given in MiB against the persisting-L2 maximum and the L2 size the run recorded.
"""

from __future__ import annotations

import math

import pandas as pd

from l2attr.analysis.common import ratio

from l2attr.vocab import Arm, SweepQuantity as Q, Timer

MiB = 1 << 20
COLUMNS = ["family", "pin", "profile", "point", "arm", "hot_rows", "hot_mib", "pin_us", "consumer_us", "charged_us",
           "speedup_consumer", "speedup_charged", "wall_us", "speedup_wall"]


def table(points: pd.DataFrame, row_bytes: int) -> pd.DataFrame:
    if points.empty:
        return pd.DataFrame(columns=COLUMNS)
    v = {(r.family, r.profile, int(r.hot_rows), r.arm, r.quantity, r.timer): float(r.median_us)
         for r in points.itertuples()}
    pins = dict(zip(points["family"], points["pin"]))
    rows = []
    for fam, prof, n in sorted({(r.family, r.profile, int(r.hot_rows)) for r in points.itertuples()}):
        arm = Arm.OPTMT.value if n == 0 else Arm.PIN.value
        g = lambda q, t=Timer.KERNEL, a=arm, hot=n: v.get((fam, prof, hot, a, q, t), math.nan)  # noqa: E731
        ref = g(Q.CONSUMER, a=Arm.OPTMT.value, hot=0)
        ref_wall = g(Q.CALL, Timer.WALL, Arm.OPTMT.value, 0)
        cons, charged, wall = g(Q.CONSUMER), g(Q.CHARGED), g(Q.CALL, Timer.WALL)
        rows.append({"family": fam, "pin": pins.get(fam, ""), "profile": prof, "point": f"hot{n}", "arm": arm,
                     "hot_rows": n,
                     "hot_mib": n * row_bytes / MiB, "pin_us": g(Q.PIN) if n else 0.0, "consumer_us": cons,
                     "charged_us": charged, "speedup_consumer": ratio(ref, cons),
                     "speedup_charged": ratio(ref, charged),
                     "wall_us": wall, "speedup_wall": ratio(ref_wall, wall)})
    return pd.DataFrame(rows, columns=COLUMNS)


def best(t: pd.DataFrame) -> pd.DataFrame:
    """Per (family, profile): the hot-set size with the highest charged speedup."""
    if t.empty:
        return t
    idx = t.dropna(subset=["speedup_charged"]).groupby(["family", "profile"])["speedup_charged"].idxmax()
    return t.loc[idx].reset_index(drop=True)


def reading(t: pd.DataFrame) -> str:
    b = best(t)
    if b.empty:
        return "No hot-set points measured."
    parts = [f"{r.family} {r.profile}: " + ("no pin beats every pinned size (OptMT alone)" if r.hot_rows == 0 else
                                            f"{r.speedup_charged:.2f}x at {int(r.hot_rows):,} rows ({r.hot_mib:.1f} MiB)")
             for r in b.itertuples()]
    return "Best pin-charged speedup over OptMT by hot-set size: " + "; ".join(parts) + "."
