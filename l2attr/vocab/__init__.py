"""The closed value sets of l2attr (the NVTX range names built from them: l2attr.names).

One vocabulary, kept in one package by subject (core, conditions, runs with the engine's, sweep) and
imported from here: `from l2attr.vocab import Family`.

Every column that holds one of a fixed set of words (family, role, L2 condition, pin granularity,
timer, quantity) takes it from here, so a typo is an AttributeError at import, not a silent
empty table. The enums are `str` subclasses: they compare equal to, and serialise as, their
plain value in CSV files and manifests. Where one table takes only part of a set (a sweep's
roles, the ladder's L2 states) the part is a named tuple of words beside the set, not a second
set of the same words.
"""

from __future__ import annotations

from l2attr.vocab.core import (
    CELL_QUANTITIES, EDGE_CONTROLS, RANGE_ROLES, SWEEP_QUANTITIES, SWEEP_ROLES, VALIDITY_VERDICTS,
    Vocab, values, Family, Role, Pin, Timer, Quantity, Condition, Verdict, RungId, ConsumerCode, Profile, Phase,
    WorkloadSource,
)
from l2attr.vocab.conditions import (
    CELL_CONDITIONS, EDGE_ARMS, LADDER_STATES, STEP_CONDITIONS, L2Condition, cell_condition, condition_words, ladder_state,
)
from l2attr.vocab.runs import (
    APP_REPLAY_BUFFERS, APP_REPLAY_MATCHES, APP_REPLAY_MODES, CACHE_ACTIONS, CACHE_CONTROLS, CLOCK_CONTROLS, RESULT_KINDS, RUN_KINDS,
    STEP_PROGRAMS, Command, Job, Ncu, SWEEP_MODES, TimerKind, RepeatMode, RepeatStop, Discard, StepMode, Judgement, KEPT,
)
from l2attr.vocab.sweep import SweepAxis, SweepJudgement, RefPoint, LineStyle, DeviceLimit, Order, Arm

__all__ = [
    "Vocab", "values", "condition_words",
    "Family", "Role", "Pin", "Timer", "Quantity", "Condition", "Verdict", "RungId", "ConsumerCode", "Profile",
    "Phase", "WorkloadSource",
    "L2Condition", "cell_condition", "ladder_state",
    "Command", "Job", "Ncu",
    "SweepAxis", "SweepJudgement", "RefPoint", "LineStyle", "DeviceLimit", "Order", "Arm",
    "TimerKind", "RepeatMode", "RepeatStop", "Discard", "StepMode", "Judgement", "KEPT",
    # the parts of a set one table takes
    "RANGE_ROLES", "SWEEP_ROLES", "CELL_QUANTITIES", "SWEEP_QUANTITIES", "VALIDITY_VERDICTS", "EDGE_CONTROLS",
    "CELL_CONDITIONS", "STEP_CONDITIONS", "EDGE_ARMS", "LADDER_STATES",
    "RUN_KINDS", "CACHE_ACTIONS", "APP_REPLAY_MODES", "APP_REPLAY_MATCHES", "APP_REPLAY_BUFFERS", "CACHE_CONTROLS", "CLOCK_CONTROLS",
    "RESULT_KINDS", "SWEEP_MODES", "STEP_PROGRAMS",
]
