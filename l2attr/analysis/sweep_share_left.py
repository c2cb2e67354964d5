"""Share of the gain left (SweepJudgement.SHARE_LEFT; the pollution axis): per series, the
reference-minus-pinned gain at each x over the gain at the smallest x, with an interval, and
where it falls below half.

gain_left = (T_ref(x) - T_pin(x)) / (T_ref(x0) - T_pin(x0)); its interval bounds the quotient by
the ends of the two medians' 95 % intervals (conservative, as the speedup's). Judged by the rule:
- no gain at x0 beyond noise: nothing to lose, said so;
- "below half by x": the smallest x whose whole interval lies below one half;
- the half-life: where the medians' curve crosses one half, interpolated linearly between the two
  measured x around it, and where the interval's ends cross it (its 95 % range; "beyond the last
  x" when the upper end never does). A median of exactly 0.500 is no crossing on its own.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from l2attr.analysis.significance import Interval, compare
from l2attr.analysis.sweep_table import SweepTable
from l2attr.analysis.sweep_verdict import Verdict, label, series, word
from l2attr.dlrm.sweep.axes.declare import AxisSpec
from l2attr.vocab import Judgement

NAN = math.nan
HALF = 0.5


def quotient(lo: float, hi: float, d_lo: float, d_hi: float) -> tuple[float, float]:
    """Bounds of [lo, hi] / [d_lo, d_hi] with 0 < d_lo <= d_hi."""
    return (lo / d_hi if lo >= 0 else lo / d_lo), (hi / d_lo if hi >= 0 else hi / d_hi)


def share(base: Interval, new: Interval, base0: Interval, new0: Interval) -> tuple[float, float, float]:
    """(median, lo, hi) of the gain left at one x (x0's gain known positive beyond noise)."""
    g0_lo, g0_hi = base0.lo - new0.hi, base0.hi - new0.lo
    if not (base.valid and new.valid):
        return NAN, NAN, NAN
    lo, hi = quotient(base.lo - new.hi, base.hi - new.lo, g0_lo, g0_hi)
    return (base.median - new.median) / (base0.median - new0.median), lo, hi


def crossing(xs: list[float], ys: list[float]) -> float | None:
    """The first x where ys falls below HALF, linear between the measured x around it; None: never."""
    for (x1, y1), (x2, y2) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        if math.isnan(y1) or math.isnan(y2):
            continue
        if y1 >= HALF > y2:
            return x1 + (y1 - HALF) * (x2 - x1) / (y1 - y2)
    if ys and not math.isnan(ys[0]) and ys[0] < HALF:
        return xs[0]
    return None


def _at(spec: AxisSpec, row: dict[str, Any], x: float) -> str:
    return label(spec, {**row, "x": round(x, 1), spec.chart.x: round(x, 1)})


def judge(t: SweepTable, points: pd.DataFrame, spec: AxisSpec) -> Verdict:
    j = spec.judgement
    frame = t.frame.copy()
    for c in ("gain_left", "gain_left_lo", "gain_left_hi"):
        frame[c] = NAN
    parts, rows = [], []
    for key, g in series(frame, j.by):
        idx = sorted(g.index, key=lambda i: float(frame.at[i, "x"]))
        who = " ".join(map(str, key))
        base0, new0 = t.intervals[j.on][idx[0]]
        first = compare(base0, new0).judgement
        row0 = frame.loc[idx[0]].to_dict()
        summary = {"family": key[0], "profile": key[1], "gain_at_x0": first.value, "half_life": NAN,
                   "half_life_lo": NAN, "half_life_hi": NAN, "below_half_by": NAN}
        if first != Judgement.FASTER:
            text = f"no gain to lose at {label(spec, row0)} ({word(first)})"
            parts.append(f"{who}: {text}")
            rows.append({**summary, "text": text})
            continue
        xs, mid, lo, hi = [], [], [], []
        for i in idx:
            m, a, b = share(*t.intervals[j.on][i], base0, new0)
            frame.loc[i, ["gain_left", "gain_left_lo", "gain_left_hi"]] = [m, a, b]
            xs.append(float(frame.at[i, "x"]))
            mid.append(m), lo.append(a), hi.append(b)
        below = next((x for x, b in zip(xs, hi) if not math.isnan(b) and b < HALF), None)
        est, early, late = crossing(xs, mid), crossing(xs, lo), crossing(xs, hi)
        last = frame.loc[idx[-1]].to_dict()
        if est is None:
            clear = not math.isnan(lo[-1]) and lo[-1] > HALF
            text = (f"{mid[-1] * 100:.0f} % left at {label(spec, last)} "
                    f"({'above half beyond noise' if clear else 'within noise of half'})")
        else:
            top = _at(spec, last, late) if late is not None else f"beyond {label(spec, last)}"
            text = f"half-life ≈ {_at(spec, last, est)} (95 %: {_at(spec, last, early or xs[0])} – {top})"
            text += (f", below half beyond noise by {label(spec, frame.loc[idx[xs.index(below)]].to_dict())}"
                     if below is not None else f", not below half beyond noise up to {label(spec, last)}")
        summary.update(half_life=NAN if est is None else est, half_life_lo=NAN if early is None else early,
                       half_life_hi=NAN if late is None else late, below_half_by=NAN if below is None else below)
        parts.append(f"{who}: {text}")
        rows.append({**summary, "text": text})
    if not parts:
        return Verdict(f"No {spec.axis} points measured.", frame)
    return Verdict(f"{j.what}: " + "; ".join(parts) + ".", frame, pd.DataFrame(rows))
