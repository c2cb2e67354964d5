"""Pollution: a streaming read of N MiB of unrelated data (a fresh part of a 1 GiB ring) between
pin and consumer, and before OptMT's consumer; the share of the pin's consumer gain left."""

from __future__ import annotations

from typing import Any

from l2attr.sweep.axes.declare import (AxisSpec, Bound, ChartSpec, Column, Fact, FromJudgement,
                                              JudgementSpec, Median, MiB, Option, Point, Series, Speedup,
                                              TableSpec, series_columns)
from l2attr.vocab import Arm, LineStyle, SweepAxis, SweepJudgement, Quantity as Q, Role

DEFAULT_POLLUTION_MIB = (0.0, 7.5, 15.0, 30.0, 60.0, 120.0)
PINNED = (Arm.OPTMT, Arm.PIN)

OPTIONS = (
    Option("pollution_mib", "--pollute-mib", float, DEFAULT_POLLUTION_MIB,
           "MiB streamed between pin and consumer",
           (Bound("{flag} {v:g}: the MiB streamed between pin and consumer cannot be negative", lo=0.0),
            Bound("{flag} {v:g}: at most 1024 MiB (the ring of unrelated data is 1 GiB)", hi=1024.0))),
)


def points(cfg: Any, opts: Any, limits: Any = None) -> list[Point]:
    return [Point(f"pollute_{mib:g}MiB", float(mib), PINNED, pollute_bytes=int(mib * MiB) // 16 * 16)
            for mib in sorted(opts.pollution_mib)]


TABLE = TableSpec(
    columns=(
        *series_columns(),
        Column("pollute_mib", "MiB streamed", Fact("x"), "g"),
        Column("optmt_us", "OptMT (µs)", Median(Q.CONSUMER, arm=Arm.OPTMT)),
        Column("pinned_consumer_us", "L2P consumer (µs)", Median(Q.CONSUMER)),
        Column("pollute_us", "polluting read (µs)", Median(Q.POLLUTE, zero_if_absent=True)),
        Column("speedup_consumer", "consumer-only speedup", Speedup(Q.CONSUMER), ".2f"),
        Column("speedup_charged", "pin-charged speedup", Speedup(Q.CHARGED, ref_quantity=Q.CONSUMER), ".2f"),
        Column("gain_left", "gain left", FromJudgement(), ".2f"),
    ),
    spread=Median(Q.CONSUMER, arm=Arm.PIN),
    row_arms=(Arm.PIN,),
    sort=("pollute_mib",),
    dram=(("optmt_dram_mib", Arm.OPTMT, Role.CONSUMER), ("consumer_dram_mib", Arm.PIN, Role.CONSUMER),
          ("pin_dram_mib", Arm.PIN, Role.PIN)),
)

SPEC = AxisSpec(
    axis=SweepAxis.POLLUTION,
    summary="a streaming read of N MiB of unrelated data between pin and consumer (--pollute-mib)",
    title="Sweep: pollution between pin and consumer",
    note="Between pin and consumer a streaming read of N MiB of unrelated data (a fresh part of a 1 GiB ring each "
         "time) runs; OptMT gets the same read before its consumer.",
    answers="a streaming read of N MiB of unrelated data (a fresh part of a 1 GiB ring) between pin and consumer "
            "(and before OptMT's consumer): the share of the pin's consumer gain left, with its interval, and "
            "where it falls below half beyond noise",
    arms=PINNED,
    options=OPTIONS,
    points=points,
    table=TABLE,
    chart=ChartSpec(
        title="Pollution between pin and consumer · {family}", x="pollute_mib",
        x_title="MiB streamed between pin and consumer",
        series=(Series("speedup_consumer", "consumer only"), Series("speedup_charged", "pin-charged", LineStyle.SECONDARY))),
    judgement=JudgementSpec(SweepJudgement.SHARE_LEFT, on="speedup_consumer",
                            what="The pin's consumer gain over OptMT under pollution", at="{pollute_mib:g} MiB"),
)
