"""Hot-set size: the hottest n rows of each profile's ranking pinned before every call (0 rows:
OptMT alone, the comparand); pin time, consumer time and the speedups per size."""

from __future__ import annotations

from typing import Any

from l2attr.errors import UserError
from l2attr.sweep.axes.declare import (AxisSpec, Bound, ChartSpec, Column, Fact, JudgementSpec, Median,
                                              Option, Point, Ref, Series, Speedup, TableSpec, series_columns)
from l2attr.vocab import (Arm, DeviceLimit, LineStyle, RefPoint, SweepAxis, SweepJudgement, Quantity as Q, Role,
    Timer)

DEFAULT_HOT_ROWS = (0, 7_500, 15_000, 30_000, 60_000, 120_000, 240_000)

OPTIONS = (
    Option("hot_rows", "--hot-sizes", int, DEFAULT_HOT_ROWS, "hot rows pinned",
           (Bound("{flag} {v}: a hot set cannot be negative", lo=0),)),
)


def validate(cfg: Any, opts: Any) -> None:
    for n in opts.hot_rows:
        if n > cfg.rows:
            raise UserError(f"--hot-sizes {n:,}: the hot set is larger than the table ({cfg.rows:,} rows)")


def points(cfg: Any, opts: Any, limits: Any = None) -> list[Point]:
    return [Point(f"hot{n}", float(n), (Arm.OPTMT,) if n == 0 else (Arm.PIN,), hot_rows=n)
            for n in sorted(opts.hot_rows)]


TABLE = TableSpec(
    columns=(
        *series_columns(),
        Column("hot_rows", "hot rows", Fact("hot_rows"), ",.0f"),
        Column("hot_mib", "MiB", Fact("hot_rows", rows_to_mib=True)),
        Column("pin_us", "pin (µs)", Median(Q.PIN, zero_if_absent=True)),
        Column("consumer_us", "consumer (µs)", Median(Q.CONSUMER)),
        Column("charged_us", "pin + consumer (µs)", Median(Q.CHARGED), shown=False),
        Column("speedup_consumer", "consumer-only speedup", Speedup(Q.CONSUMER), ".2f"),
        Column("speedup_charged", "pin-charged speedup", Speedup(Q.CHARGED, ref_quantity=Q.CONSUMER), ".2f"),
        Column("wall_us", "wall per call (µs)", Median(Q.CALL, Timer.WALL), shown=False),
        Column("speedup_wall", "wall-charged speedup", Speedup(Q.CALL, Timer.WALL), ".2f"),
    ),
    spread=Median(Q.CHARGED),
    reference=Ref(Arm.OPTMT, RefPoint.LOWEST_X),
    sort=("hot_rows",),
    dram=(("consumer_dram_mib", None, Role.CONSUMER), ("pin_dram_mib", None, Role.PIN)),
)

SPEC = AxisSpec(
    axis=SweepAxis.HOTSET,
    summary="hot rows pinned (--hot-sizes 0,7500,...,240000), hottest first",
    title="Sweep: hot-set size",
    note="The hottest rows of each profile's ranking (the ladder's 60K are a prefix of it), pinned before every "
         "call in the artifact's loop; 0 rows is OptMT alone, the comparand.",
    answers="pin time, consumer time and the consumer-only and pin-charged speedups per size (MiB against the "
            "persisting-L2 max and the L2); a size peaks only where it is beyond noise of every other size",
    arms=(Arm.OPTMT, Arm.PIN),
    options=OPTIONS,
    points=points,
    validate=validate,
    table=TABLE,
    chart=ChartSpec(
        title="Hot-set size · {family}", x="hot_mib", x_title="hot rows pinned (MiB)",
        series=(Series("speedup_charged", "pin-charged"),
                Series("speedup_consumer", "consumer only", LineStyle.SECONDARY)),
        limits=(DeviceLimit.PERSISTING_MAX, DeviceLimit.L2_SIZE)),
    judgement=JudgementSpec(SweepJudgement.PEAK, on="speedup_consumer", also=("speedup_charged",),
                            what="Speedup over OptMT by hot-set size",
                            at="{hot_rows:,.0f} rows ({hot_mib:.1f} MiB)"),
)
