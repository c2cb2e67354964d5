"""L2 held by evict_last lines: before every call (outside the timers) the first N MiB of a dummy
buffer are prefetched into L2 as evict_last, and the ladder's verdict (L2P+OptMT against OptMT)
is measured under it.

Named for what it does, not for what it was meant to emulate: whether the held lines stay through
a cell's traffic (which would make this a smaller L2) is a measurement of its own
(tools/capacity_ncu_check.py, recorded as CHECK_FILE in the run dir and shown beside the table);
on the H200 where it was checked they did not.
"""

from __future__ import annotations

from typing import Any

from l2attr.errors import UserError
from l2attr.sweep.axes.declare import (AxisSpec, Bound, ChartSpec, Column, Fact, JudgementSpec, Median,
                                              MiB, Option, Point, Series, Speedup, TableSpec, series_columns)
from l2attr.vocab import Arm, LineStyle, SweepAxis, SweepJudgement, Quantity as Q, Role, Timer

DEFAULT_OCCUPY_MIB = (0.0, 10.0, 20.0, 30.0, 40.0)
CHECK_FILE = "occupy_ncu.json"        # tools/capacity_ncu_check.py --run RUN_DIR writes it
PINNED = (Arm.OPTMT, Arm.PIN)

OPTIONS = (
    Option("occupy_mib", "--occupy-mib", float, DEFAULT_OCCUPY_MIB,
           "MiB of L2 held by evict_last lines of a dummy buffer",
           (Bound("{flag} {v:g}: the MiB of L2 held cannot be negative", lo=0.0),)),
)


def validate_device(cfg: Any, opts: Any, limits: Any) -> None:
    l2_mib = limits.l2_bytes / MiB
    for mib in opts.occupy_mib:
        if mib > l2_mib + 1e-9:
            raise UserError(f"--occupy-mib {mib:g}: more than this GPU's L2 ({l2_mib:g} MiB)")


def points(cfg: Any, opts: Any, limits: Any = None) -> list[Point]:
    return [Point(f"occupy_{mib:g}MiB", float(mib), PINNED, occupy_bytes=int(mib * MiB))
            for mib in sorted(opts.occupy_mib)]


TABLE = TableSpec(
    columns=(
        *series_columns(),
        Column("occupy_mib", "MiB held (evict_last, requested)", Fact("occupy_bytes", bytes_to_mib=True), "g"),
        Column("optmt_us", "OptMT (µs)", Median(Q.CONSUMER, arm=Arm.OPTMT)),
        Column("pinned_consumer_us", "L2P consumer (µs)", Median(Q.CONSUMER)),
        Column("pin_us", "pin (µs)", Median(Q.PIN)),
        Column("speedup_consumer", "consumer-only speedup", Speedup(Q.CONSUMER), ".2f"),
        Column("speedup_charged", "pin-charged speedup", Speedup(Q.CHARGED, ref_quantity=Q.CONSUMER), ".2f"),
        Column("speedup_wall", "wall-charged", Speedup(Q.CALL, Timer.WALL), ".2f"),
    ),
    spread=Median(Q.CHARGED, arm=Arm.PIN),
    row_arms=(Arm.PIN,),
    sort=("occupy_mib",),
    dram=(("optmt_dram_mib", Arm.OPTMT, Role.CONSUMER), ("consumer_dram_mib", Arm.PIN, Role.CONSUMER),
          ("pin_dram_mib", Arm.PIN, Role.PIN)),
)

TITLE = "Sweep: L2 held by evict_last lines of a dummy buffer"
NOTE = ("Before every call (outside the timers) the first N MiB of a dummy buffer are prefetched into L2 as "
        "evict_last; OptMT and L2P+OptMT are timed under it. Whether those lines stay through a cell's traffic is "
        "not assumed: the Nsight Compute check (tools/capacity_ncu_check.py) measures the share retained, shown "
        "beside the table where the run dir holds it.")
CHART = ChartSpec(
    title="L2 held by evict_last lines · {family}", x="occupy_mib",
    x_title="MiB of L2 held by evict_last lines of a dummy buffer (requested)",
    series=(Series("speedup_charged", "pin-charged"), Series("speedup_consumer", "consumer only", LineStyle.SECONDARY)))
JUDGEMENT = JudgementSpec(SweepJudgement.PER_POINT, on="speedup_charged",
                          what="Pin-charged speedup of L2P+OptMT over OptMT by MiB of L2 held",
                          at="{occupy_mib:g} MiB held")

SPEC = AxisSpec(
    axis=SweepAxis.OCCUPY,
    summary="part of L2 held by evict_last lines of a dummy buffer before every call (--occupy-mib 0,10,20,30,40)",
    title=TITLE,
    note=NOTE,
    answers="the ladder's verdict with N MiB of L2 held by evict_last lines of a dummy buffer before every call "
            "(outside the timers); `tools/capacity_ncu_check.py --run RUN_DIR` measures with ncu how much of it "
            "survives a cell's traffic, and the report prints that beside the table",
    arms=PINNED,
    options=OPTIONS,
    points=points,
    validate_device=validate_device,
    table=TABLE,
    chart=CHART,
    judgement=JUDGEMENT,
    check_file=CHECK_FILE,
)
