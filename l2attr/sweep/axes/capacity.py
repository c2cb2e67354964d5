"""`capacity`: the occupy axis under its former name, kept so that runs made before the rename
load, analyse and render. Its x was "the effective L2" (L2 minus the MiB held), a name the ncu
check of the occupation does not support on the H200; new runs are `l2attr sweep occupy`."""

from __future__ import annotations

from typing import Any

from l2attr.errors import UserError
from l2attr.sweep.axes import occupy
from l2attr.sweep.axes.declare import AxisSpec, Bound, MiB, Option, Point
from l2attr.vocab import SweepAxis

OPTIONS = (
    Option("effective_l2_mib", "--l2-mib", float, (60.0, 50.0, 40.0, 30.0, 20.0),
           "L2 minus the MiB held (former capacity runs)",
           (Bound("{flag} {v:g}: must be positive", lo=0.0, lo_open=True),)),
)


def validate_device(cfg: Any, opts: Any, limits: Any) -> None:
    l2_mib = limits.l2_bytes / MiB
    for mib in opts.effective_l2_mib:
        if mib > l2_mib + 1e-9:
            raise UserError(f"--l2-mib {mib:g}: larger than this GPU's L2 ({l2_mib:g} MiB)")


def points(cfg: Any, opts: Any, limits: Any = None) -> list[Point]:
    """As the runs were made: point l2_<x>MiB holds (L2 - x) MiB (L2 from the device, else the largest x)."""
    l2 = limits.l2_bytes if limits else int(max(opts.effective_l2_mib) * MiB)
    return [Point(f"l2_{mib:g}MiB", float(mib), occupy.PINNED, occupy_bytes=max(0, l2 - int(mib * MiB)))
            for mib in sorted(opts.effective_l2_mib, reverse=True)]


SPEC = AxisSpec(
    axis=SweepAxis.CAPACITY,
    summary="the occupy axis' former name (x: L2 minus the MiB held); its runs are read, new ones are occupy",
    title=occupy.TITLE,
    note=occupy.NOTE,
    answers=occupy.SPEC.answers,
    arms=occupy.PINNED,
    options=OPTIONS,
    points=points,
    validate_device=validate_device,
    table=occupy.TABLE,
    chart=occupy.CHART,
    judgement=occupy.JUDGEMENT,
    check_file=occupy.CHECK_FILE,
    renamed_to=SweepAxis.OCCUPY,
)
