"""A sweep's judgements: what one returns, the helpers every kind shares, and the kinds that read
the points against the reference arm or the smallest x (sweep/analyse/judge.py's JUDGES lists them).

Why one module: every kind reads the same table (sweep/analyse/table.py) through the same helpers,
and each is one function of it; only the break-even (sweep/analyse/break_even.py), with its
formula, stands apart. Every word a judgement writes comes from analysis/significance.py's rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import pandas as pd

from l2attr.analysis.significance import Interval, Judged, compare
from l2attr.sweep.analyse.table import SweepTable, finite
from l2attr.sweep.axes.declare import AxisSpec
from l2attr.vocab import Arm, Judgement, RefPoint

Mark = tuple[str, str, Any, float, float]        # family, profile, split value (or None), x, y


@dataclass
class Verdict:
    reading: str                                  # one line
    table: pd.DataFrame                           # the axis table, the judgement's columns filled
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)   # per series (break-even: one row each)
    marks: list[Mark] = field(default_factory=list)                # where the chart marks the judged x
    note: str = ""                                # what the summary's words mean


Judge = Callable[[SweepTable, pd.DataFrame, AxisSpec], Verdict]


def word(j: Judged | Judgement) -> str:
    """The rule's word as the readings print it."""
    j = j.judgement if isinstance(j, Judged) else j
    return "not measured" if j == Judgement.NOT_MEASURED else j.value


def times(speedup: float) -> str:
    """A speedup as readings print it: two decimals, three where two would read as exactly 1."""
    return f"{speedup:.3f}×" if round(speedup, 2) == 1.0 and speedup != 1.0 else f"{speedup:.2f}×"


def judged(t: SweepTable, column: str, i: int) -> Judged:
    base, new = t.intervals[column][i]
    return compare(base, new)


def label(spec: AxisSpec, row: dict[str, Any]) -> str:
    """How the reading names a row (the axis' `at` format); the x value when a field is missing."""
    try:
        return spec.judgement.at.format(**row)
    except (KeyError, ValueError, TypeError):
        return f"x = {row.get('x', float('nan')):g}"


def series(frame: pd.DataFrame, by: tuple[str, ...]) -> list[tuple[tuple[Any, ...], pd.DataFrame]]:
    """Rows per (family, profile, *by), in the table's order."""
    if frame.empty:
        return []
    return [(k if isinstance(k, tuple) else (k,), g)
            for k, g in frame.groupby(["family", "profile", *by], sort=False)]


# -- peak ----------------------------------------------------------------------------------------
# Peak (SweepJudgement.PEAK; the hot-set axis): per series and judged speedup column, the point
# with the highest speedup, and what the rule says about it.
#
# "peaks at X" only where X is faster than the reference beyond noise and faster than every other
# measured point beyond noise (its interval clear of each one's); otherwise "best at X, within
# noise of ..." naming the points it cannot be told from, or "nothing beats the reference beyond
# noise". The reference's own row (OptMT at 0 hot rows) is the comparand, not a candidate.

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


def judge_peak(t: SweepTable, points: pd.DataFrame, spec: AxisSpec) -> Verdict:
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


# -- against the reference arm -------------------------------------------------------------------
# The pinned arm against the reference arm: the two judgements that read a sweep that way.
#
# Best against the reference (SweepJudgement.BEST_VS_REFERENCE; the window axis): per series, the
# best point of the judged arm (the window) and every other arm that is not the reference (the
# remap alone), each with the rule's word against the reference (OptMT).
#
# "buys nothing measurable" is then what the words say together, per family and profile, never a
# range of medians read by eye: a +2 % with disjoint intervals is "faster".
#
# Per point (SweepJudgement.PER_POINT; the occupy axis, judge_per_point): every point's speedup of
# the pinned arm over the reference at that point, with the rule's word on each.

ARM_NAMES = {Arm.REMAP.value: "remap alone"}


def judge_best_vs_reference(t: SweepTable, points: pd.DataFrame, spec: AxisSpec) -> Verdict:
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


# -- share of the gain left ----------------------------------------------------------------------
# Share of the gain left (SweepJudgement.SHARE_LEFT; the pollution axis): per series, the
# reference-minus-pinned gain at each x over the gain at the smallest x, with an interval, and
# where it falls below half.
#
# gain_left = (T_ref(x) - T_pin(x)) / (T_ref(x0) - T_pin(x0)); its interval bounds the quotient by
# the ends of the two medians' 95 % intervals (conservative, as the speedup's). Judged by the rule:
# - no gain at x0 beyond noise: nothing to lose, said so;
# - "below half by x": the smallest x whose whole interval lies below one half;
# - the half-life: where the medians' curve crosses one half, interpolated linearly between the two
#   measured x around it, and where the interval's ends cross it (its 95 % range; "beyond the last
#   x" when the upper end never does). A median of exactly 0.500 is no crossing on its own.

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


def judge_share_left(t: SweepTable, points: pd.DataFrame, spec: AxisSpec) -> Verdict:
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
