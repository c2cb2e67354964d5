"""The closed value sets of l2attr (the NVTX range names built from them: l2attr.names).

One vocabulary, kept in one package by subject (base, core, runs, sweep, engine) and imported from
here: `from l2attr.vocab import Family`.

Every column that holds one of a fixed set of words (family, role, l2 state, pin granularity,
timer, quantity) takes it from here, so a typo is an AttributeError at import, not a silent
empty table. The enums are `str` subclasses: they compare equal to, and serialise as, their
plain value in CSV files and manifests.
"""

from __future__ import annotations

from l2attr.vocab.base import Vocab
from l2attr.vocab.core import (
    Family, Role, L2State, Pin, Timer, Quantity, Condition, Verdict, RungId, ConsumerCode, Abi, Profile, Phase, WorkloadSource,
)
from l2attr.vocab.runs import (
    RunKind, Command, CacheAction, Job, ReplayMode, AppReplayMode, AppReplayMatch, CacheControl, ClockControl, ResultKind,
)
from l2attr.vocab.sweep import (
    SweepAxis, SweepJudgement, OptionKind, RefPoint, LineStyle, DeviceLimit, Order, Arm, SweepRole, SweepMode, SweepQuantity,
)
from l2attr.vocab.engine import (
    CellCondition, TimerKind, RepeatMode, RepeatStop, Discard, StepCondition, StepMode, EdgeArm, EdgeControl, Judgement, KEPT,
)

__all__ = [
    "Vocab",
    "Family",
    "Role",
    "L2State",
    "Pin",
    "Timer",
    "Quantity",
    "Condition",
    "Verdict",
    "RungId",
    "ConsumerCode",
    "Abi",
    "Profile",
    "Phase",
    "WorkloadSource",
    "RunKind",
    "Command",
    "CacheAction",
    "Job",
    "ReplayMode",
    "AppReplayMode",
    "AppReplayMatch",
    "CacheControl",
    "ClockControl",
    "ResultKind",
    "SweepAxis",
    "SweepJudgement",
    "OptionKind",
    "RefPoint",
    "LineStyle",
    "DeviceLimit",
    "Order",
    "Arm",
    "SweepRole",
    "SweepMode",
    "SweepQuantity",
    "CellCondition",
    "TimerKind",
    "RepeatMode",
    "RepeatStop",
    "Discard",
    "StepCondition",
    "StepMode",
    "EdgeArm",
    "EdgeControl",
    "Judgement",
    "KEPT",
]
