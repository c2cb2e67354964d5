"""Amortisation: pin once, then k consumer calls of the table, back to back and interleaved with
the other tables' pins and calls; the smallest k at which the pinned arm is faster by the
significance rule, against the formula's break-even from k = 1."""

from __future__ import annotations

import math
from typing import Any

from l2attr.sweep.axes.declare import (AxisSpec, Bound, ChartSpec, Column, Fact, FromJudgement,
                                              JudgementSpec, Median, Option, Point, Series, Speedup, TableSpec,
                                              series_columns)
from l2attr.vocab import Arm, LineStyle, Order, SweepAxis, SweepJudgement, Quantity as Q, Timer

DEFAULT_KS = (1, 2, 4, 8, 16, 32)
# consumer calls per (point, arm, repeat) aimed at for each table: a point with k calls per pin gets
# ceil(this / k) pin groups (at least one)
AMORTISATION_CALLS = 8
PINNED = (Arm.OPTMT, Arm.PIN)

OPTIONS = (
    Option("ks", "--k", int, DEFAULT_KS, "consumer calls per pin",
           (Bound("{flag} {v}: a pin must serve at least one consumer call (k >= 1)", lo=1),
            Bound("{flag} {v}: at most 4096 consumer calls per pin", hi=4096))),
    Option("orders", "--orders", Order, (Order.BACK_TO_BACK, Order.INTERLEAVED), "where a pin's k calls sit"),
)


def points(cfg: Any, opts: Any, limits: Any = None) -> list[Point]:
    return [Point(f"{o.value}:k{k}", float(k), PINNED, order=o, k=k,
                  groups=max(1, math.ceil(AMORTISATION_CALLS / k)))
            for o in opts.orders for k in sorted(opts.ks)]


TABLE = TableSpec(
    columns=(
        *series_columns(),
        Column("order", "order", Fact("order"), ""), Column("k", "k", Fact("k"), ",.0f"),
        Column("ref_us", "OptMT per call (µs)", Median(Q.CHARGED, arm=Arm.OPTMT)),
        Column("pinned_us", "pin + k calls, per call (µs)", Median(Q.CHARGED)),
        Column("speedup_kernel", "kernel-charged speedup", Speedup(Q.CHARGED), ".2f"),
        Column("ref_wall_us", "OptMT wall per call (µs)", Median(Q.CALL, Timer.WALL, arm=Arm.OPTMT), shown=False),
        Column("pinned_wall_us", "pinned wall per call (µs)", Median(Q.CALL, Timer.WALL), shown=False),
        Column("speedup_wall", "wall-charged speedup", Speedup(Q.CALL, Timer.WALL), ".2f"),
        Column("formula_speedup", "formula (from k = 1)", FromJudgement(), ".2f"),
        Column("consumer_first_us", "1st call after pin (µs)", Median(Q.CONSUMER_FIRST)),
        Column("consumer_rest_us", "later calls (µs)", Median(Q.CONSUMER_REST)),
        Column("pin_us", "pin (µs)", Median(Q.PIN), shown=False),
    ),
    spread=Median(Q.CHARGED, arm=Arm.PIN),
    row_arms=(Arm.PIN,),
    sort=("order", "k"),
)

SPEC = AxisSpec(
    axis=SweepAxis.AMORTISATION,
    summary="pin once, then k consumer calls of the table (--k 1,2,4,8,16,32), back to back and "
            "interleaved with the other tables' pins and calls; the smallest k faster by the rule",
    title="Sweep: consumer calls per pin (measured amortisation)",
    note="One pin, then k consumer calls of its table. Kernel-charged: (pin + the k consumer kernels) / k "
         "against OptMT's consumer, both on CUDA events; wall: the same on the host clock, launches and syncs "
         "included. Interleaved = the artifact's loop (the other tables' pins and calls between two calls of "
         "one table). The formula extrapolates from this sweep's own k = 1 figures (analysis/amortise.py).",
    answers="calls one pin really serves before it pays: the k from which the pinned arm is no longer measurably "
            "slower than OptMT and from which it is measurably faster, kernel-charged and with launch + sync "
            "(wall), beside the formula's prediction from the same sweep's k = 1 figures",
    arms=PINNED,
    options=OPTIONS,
    points=points,
    table=TABLE,
    chart=ChartSpec(
        title="Measured amortisation · {family}: L2P+OptMT over OptMT, pin + k calls charged", x="k", x_title="consumer calls per pin (k)",
        series=(Series("speedup_kernel", ""),
                Series("formula_speedup", "formula from k = 1", LineStyle.MODEL, only=Order.INTERLEAVED.value)),
        log_x=True, ticks_at_x=True, reference=(1.0, "break-even"), split="order",
        split_styles=((Order.INTERLEAVED.value, LineStyle.PRIMARY), (Order.BACK_TO_BACK.value, LineStyle.SECONDARY)),
        mark_judged=True, height=460),
    judgement=JudgementSpec(SweepJudgement.BREAK_EVEN, on="speedup_kernel", also=("speedup_wall",), by=("order",),
                            formula=True, what="Calls per pin to break even against OptMT"),
)
