"""Break-even along x (SweepJudgement.BREAK_EVEN; the amortisation axis: x = k calls per pin).

Per series (family, profile and the axis' `by`, e.g. the order), for each judged speedup column
(kernel-charged, wall-charged): the rule's word at every measured x, and from them
- `measured_<timer>`: the smallest measured x at which the pinned arm is measurably faster than
  the reference (beyond both 95 % intervals): where it pays; inf when it never does;
- `even_<timer>`: the smallest measured x at which it is no longer measurably slower (faster or
  within noise): where it breaks even within noise; inf when it is slower at every x.
A speedup of 1.0004 with overlapping intervals is therefore "within noise", never a break-even.
With `formula`, the k = 1 formula (analysis/amortise.py) from the same sweep's k = 1 point
(interleaved, else back to back: at k = 1 both are the artifact's loop) stands beside it.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from l2attr.analysis.amortise import amortised_speedup, break_even_calls
from l2attr.sweep.analyse.table import SweepTable
from l2attr.sweep.analyse.verdict import Verdict, series
from l2attr.sweep.axes.declare import AxisSpec, Speedup
from l2attr.vocab import Arm, Judgement, LineStyle, Order, Quantity as Q, Timer

INF, NAN = math.inf, math.nan
TIMER_WORDS = {Timer.KERNEL.value: "kernel-charged", Timer.WALL.value: "wall-charged"}


def crossing(xs: list[float], words: list[Judgement]) -> tuple[float, float]:
    """(even, pays) over xs ascending: the smallest x not judged slower, the smallest judged faster
    (inf: none; nan: nothing measured)."""
    measured = [(x, w) for x, w in sorted(zip(xs, words)) if w != Judgement.NOT_MEASURED]
    if not measured:
        return NAN, NAN
    even = next((x for x, w in measured if w != Judgement.SLOWER), INF)
    pays = next((x for x, w in measured if w == Judgement.FASTER), INF)
    return float(even), float(pays)


def _num(k: float) -> str:
    return f"{int(k)}" if float(k).is_integer() else f"{k:g}"


def k_text(k: float, max_k: float | None = None, even: float | None = None) -> str:
    """A break-even as the tables print it: '8', '16 (within noise from 8)', 'within noise from 8',
    '> 32' (slower at every measured k), 'n/a'; without `even` a plain k (the formula's)."""
    if k is None or (isinstance(k, float) and math.isnan(k)):
        return "n/a"
    if even is not None and not math.isnan(even) and even < k:
        return f"within noise from {_num(even)}" if math.isinf(k) else f"{_num(k)} (within noise from {_num(even)})"
    if math.isinf(k):
        return f"> {_num(max_k)}" if max_k else "never"
    return _num(k)


def _suffix(spec: AxisSpec, column: str) -> str:
    value = next(c.value for c in spec.table.columns if c.name == column)
    assert isinstance(value, Speedup), f"{column} is not a speedup column"
    return value.timer.value


def formula_inputs(points: pd.DataFrame) -> dict[tuple[str, str], tuple[float, float, float]]:
    """(family, profile) -> (T_ref, T_pin, T_cons) at k = 1 (interleaved, else back to back)."""
    v = {(r.family, r.profile, r.order, int(r.k), r.arm, r.quantity, r.timer): float(r.median_us)
         for r in points.itertuples()}
    out = {}
    for fam, prof in sorted({(r.family, r.profile) for r in points.itertuples()}):
        t = (NAN,) * 3
        for order in (Order.INTERLEAVED.value, Order.BACK_TO_BACK.value):
            g = lambda arm, q: v.get((fam, prof, order, 1, arm, q, Timer.KERNEL.value), NAN)  # noqa: E731
            t = (g(Arm.OPTMT.value, Q.CONSUMER.value), g(Arm.PIN.value, Q.PIN.value), g(Arm.PIN.value, Q.CONSUMER.value))
            if not any(math.isnan(x) for x in t):
                break
        out[(fam, prof)] = t
    return out


def _primary(spec: AxisSpec, frame: pd.DataFrame) -> Any:
    """The split value the reading reports (the chart's primary line where present)."""
    by = spec.judgement.by
    if not by or frame.empty:
        return None
    present = list(dict.fromkeys(frame[by[0]]))
    main = [v for v, style in spec.chart.split_styles if style == LineStyle.PRIMARY and spec.chart.split == by[0]]
    return next((v for v in main if v in present), present[0])


def judge(t: SweepTable, points: pd.DataFrame, spec: AxisSpec) -> Verdict:
    j = spec.judgement
    frame = t.frame.copy()
    columns = (j.on, *j.also)
    inputs = formula_inputs(points) if j.formula else {}
    if j.formula and not frame.empty:
        frame["formula_speedup"] = [
            amortised_speedup(*inputs[(r["family"], r["profile"])], r["k"])
            if not any(math.isnan(x) for x in inputs.get((r["family"], r["profile"]), (NAN,))) else NAN
            for r in frame.to_dict("records")]
    words = {c: t.judged(c) for c in columns}
    rows: list[dict[str, Any]] = []
    marks = []
    for key, g in series(frame, j.by):
        idx = list(g.index)
        xs = [float(x) for x in g["x"]]
        row: dict[str, Any] = {"family": key[0], "pin": g["pin"].iloc[0], "profile": key[1],
                               **dict(zip(j.by, key[2:]))}
        for c in columns:
            even, pays = crossing(xs, [words[c][i] for i in idx])
            row[f"measured_{_suffix(spec, c)}"], row[f"even_{_suffix(spec, c)}"] = pays, even
        last = g.loc[idx[xs.index(max(xs))]]
        row.update(max_x=max(xs), max_k=max(xs), speedup_at_max_k=float(last[j.on]))
        if j.formula:
            ins = inputs.get((key[0], key[1]), (NAN,) * 3)
            row["formula"] = NAN if any(math.isnan(x) for x in ins) else break_even_calls(*ins)
        rows.append(row)
        pays = row[f"measured_{_suffix(spec, j.on)}"]
        if math.isfinite(pays):
            at = g.loc[idx[xs.index(pays)]]
            marks.append((key[0], key[1], key[2] if len(key) > 2 else None, pays, float(at[j.on])))
    summary = pd.DataFrame(rows)
    return Verdict(reading(summary, spec, _primary(spec, frame)), frame, summary, marks, NOTE)


NOTE = ("Measured: the smallest measured x at which the pinned arm is faster than OptMT beyond both 95 % "
        "intervals (analysis/significance.py); \"within noise from x\": the smallest x from which it is no longer "
        "measurably slower; \"> x\" when it is slower at every measured x.")


def reading(summary: pd.DataFrame, spec: AxisSpec, split: Any) -> str:
    j = spec.judgement
    if summary.empty:
        return f"No {spec.axis} points measured."
    rows = summary[summary[j.by[0]] == split] if j.by and split is not None else summary
    suffix = _suffix(spec, j.on)
    parts = []
    for r in rows.to_dict("records"):
        text = k_text(r[f"measured_{suffix}"], r["max_x"], r[f"even_{suffix}"])
        formula = f", formula {k_text(r['formula'])}" if j.formula else ""
        parts.append(f"{r['family']} {r['profile']}: measured {text}{formula}")
    where = ", ".join(w for w in (str(split).replace("_", " ") if split is not None else "",
                                  TIMER_WORDS.get(suffix, suffix)) if w)
    return f"{j.what} ({where}): " + "; ".join(parts) + "."
