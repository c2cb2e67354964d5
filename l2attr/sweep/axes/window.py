"""The access-policy window: no pin kernel; hot rows copied to the front of each table (indices
remapped), a persisting L2 set-aside and a stream window over them per hitRatio; the remap alone
separates locality from persistence."""

from __future__ import annotations

from typing import Any

from l2attr.errors import UserError
from l2attr.dlrm.measure.residency import check_window_fits
from l2attr.sweep.axes.declare import (AxisSpec, Bound, ChartSpec, Column, Fact, JudgementSpec, Median,
                                              Option, Point, Ref, Series, Speedup, TableSpec, series_columns)
from l2attr.vocab import Arm, LineStyle, RefPoint, SweepAxis, SweepJudgement, Quantity as Q, Role, Timer

DEFAULT_HIT_RATIOS = (0.25, 0.5, 0.75, 1.0)

OPTIONS = (
    Option("hit_ratios", "--hit-ratios", float, DEFAULT_HIT_RATIOS, "access-policy window hitRatios",
           (Bound("{flag} {v:g}: a window's hitRatio must be in (0, 1]", lo=0.0, hi=1.0, lo_open=True),)),
)


def validate(cfg: Any, opts: Any) -> None:
    if cfg.hot_rows <= 0:
        raise UserError("the window sweep needs hot rows (--hot-rows > 0): the window covers them")


def validate_device(cfg: Any, opts: Any, limits: Any) -> None:
    check_window_fits(cfg, limits)


def points(cfg: Any, opts: Any, limits: Any = None) -> list[Point]:
    return [Point("no_window", 0.0, (Arm.OPTMT, Arm.REMAP))] + [
        Point(f"hr{h:g}", float(h), (Arm.WINDOW,), hit_ratio=h) for h in sorted(opts.hit_ratios)]


NO_WINDOW = RefPoint.LOWEST_X
TABLE = TableSpec(
    columns=(
        *series_columns(),
        Column("arm", "arm", Fact("arm"), ""), Column("hit_ratio", "hitRatio", Fact("hit_ratio"), "g"),
        Column("consumer_us", "consumer (µs)", Median(Q.CONSUMER)),
        Column("prepare_us", "host call per consumer (µs)", Median(Q.PREPARE, Timer.WALL, zero_if_absent=True)),
        Column("wall_us", "wall per call (µs)", Median(Q.CALL, Timer.WALL), shown=False),
        Column("speedup_vs_optmt", "vs OptMT", Speedup(Q.CONSUMER), ".2f"),
        Column("speedup_vs_remap", "vs remap alone", Speedup(Q.CONSUMER, over=Ref(Arm.REMAP, NO_WINDOW)), ".2f"),
        Column("speedup_wall_vs_optmt", "wall vs OptMT", Speedup(Q.CALL, Timer.WALL), ".2f"),
    ),
    spread=Median(Q.CONSUMER),
    reference=Ref(Arm.OPTMT, NO_WINDOW),
    sort=("x",),
    dram=(("consumer_dram_mib", None, Role.CONSUMER),),
)

SPEC = AxisSpec(
    axis=SweepAxis.WINDOW,
    summary="no pin kernel: hot rows remapped to the front of each table, a persisting L2 set-aside and a "
            "stream access-policy window over them (--hit-ratios); the remap alone",
    title="Sweep: access-policy window instead of a pin kernel",
    note="No pin kernel: each table's hot rows copied once to its front (indices remapped), a persisting L2 "
         "set-aside, and a stream access-policy window over the hot rows (hitProp persisting, missProp streaming) "
         "set before every consumer call; the remap alone separates locality from persistence. The window's "
         "price is the host call (µs per consumer call).",
    answers="residency without a pin kernel: `cuCtxSetLimit(PERSISTING_L2_CACHE_SIZE)` set-aside, a stream "
            "access-policy window over the remapped hot rows (hitProp persisting, missProp streaming) set before "
            "each call; what it buys against OptMT and the remap alone, and its host-call cost per call",
    arms=(Arm.OPTMT, Arm.REMAP, Arm.WINDOW),
    options=OPTIONS,
    points=points,
    validate=validate,
    validate_device=validate_device,
    table=TABLE,
    chart=ChartSpec(
        title="Access-policy window · {family}", x="hit_ratio", x_title="hitRatio",
        series=(Series("speedup_vs_optmt", "window vs OptMT"),
                Series("speedup_vs_remap", "window vs remap alone", LineStyle.SECONDARY)),
        arms=(Arm.WINDOW,)),
    judgement=JudgementSpec(SweepJudgement.BEST_VS_REFERENCE, on="speedup_vs_optmt", arm=Arm.WINDOW,
                            what="Consumer speedup",
                            at="hitRatio {hit_ratio:g} for {prepare_us:.1f} µs of host time per call"),
)
