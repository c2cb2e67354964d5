"""Pollution: how fast the pin's benefit decays when unrelated traffic runs between pin and consumer.

Per (family, profile, MiB streamed): the pinned consumer's time, OptMT's under the same
pollution, the consumer-only speedup and the share of the unpolluted gain that is left:
(T_optmt(N) - T_pinned(N)) / (T_optmt(0) - T_pinned(0)).
"""

from __future__ import annotations

import math

import pandas as pd

from l2attr.analysis.common import ratio

from l2attr.vocab import Arm, SweepQuantity as Q, Timer

COLUMNS = ["family", "pin", "profile", "point", "pollute_mib", "optmt_us", "pinned_consumer_us", "pollute_us",
           "speedup_consumer", "speedup_charged", "gain_left"]


def table(points: pd.DataFrame) -> pd.DataFrame:
    if points.empty:
        return pd.DataFrame(columns=COLUMNS)
    v = {(r.family, r.profile, float(r.x), r.arm, r.quantity, r.timer): float(r.median_us) for r in points.itertuples()}
    point_of = {(r.family, r.profile, float(r.x)): r.point for r in points.itertuples()}
    pins = dict(zip(points["family"], points["pin"]))
    rows = []
    keys = sorted({(r.family, r.profile, float(r.x)) for r in points.itertuples()})
    for fam, prof, x in keys:
        g = lambda a, q, mib=x: v.get((fam, prof, mib, a, q, Timer.KERNEL), math.nan)  # noqa: E731
        ref, cons = g(Arm.OPTMT.value, Q.CONSUMER), g(Arm.PIN.value, Q.CONSUMER)
        zero = min((k[2] for k in keys if k[:2] == (fam, prof)), default=math.nan)
        gain0 = g(Arm.OPTMT.value, Q.CONSUMER, zero) - g(Arm.PIN.value, Q.CONSUMER, zero)
        charged = g(Arm.PIN.value, Q.CHARGED)
        rows.append({"family": fam, "pin": pins.get(fam, ""), "profile": prof, "point": point_of[(fam, prof, x)],
                     "pollute_mib": x, "optmt_us": ref,
                     "pinned_consumer_us": cons, "pollute_us": g(Arm.PIN.value, Q.POLLUTE) if x > 0 else 0.0,
                     "speedup_consumer": ratio(ref, cons),
                     "speedup_charged": ratio(ref, charged),
                     "gain_left": (ref - cons) / gain0 if gain0 > 0 else math.nan})
    return pd.DataFrame(rows, columns=COLUMNS)


def reading(t: pd.DataFrame) -> str:
    if t.empty:
        return "No pollution points measured."
    parts = []
    for (fam, prof), g in t.groupby(["family", "profile"], sort=False):
        g = g.sort_values("pollute_mib")
        if g["gain_left"].isna().all():
            parts.append(f"{fam} {prof}: the pin gave the consumer no gain to lose")
            continue
        half = g[(g["gain_left"] < 0.5) & (g["pollute_mib"] > 0)]
        where = f"below half by {half['pollute_mib'].iloc[0]:g} MiB" if not half.empty else \
            f"{g['gain_left'].iloc[-1] * 100:.0f} % left at {g['pollute_mib'].iloc[-1]:g} MiB"
        parts.append(f"{fam} {prof}: {where}")
    return "The pin's consumer gain over OptMT under pollution: " + "; ".join(parts) + "."
