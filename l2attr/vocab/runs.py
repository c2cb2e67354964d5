"""Run kinds, commands, profiler jobs and Nsight Compute's settings."""

from __future__ import annotations

from l2attr.vocab.base import Vocab


class RunKind(Vocab):
    """What made a run dir (its manifest's `kind`)."""

    LADDER = "ladder"
    PROFILE = "profile"
    TIMELINE = "timeline"
    SWEEP = "sweep"
    EXPERIMENT = "experiment"   # l2attr.Experiment / l2attr experiment
    STEP = "step"               # l2attr.step / l2attr step


class Command(Vocab):
    """The `l2attr` subcommands."""

    LADDER = "ladder"
    PROFILE = "profile"
    SWEEP = "sweep"
    EXPERIMENT = "experiment"
    STEP = "step"
    REPORT = "report"
    TRACES = "traces"
    TUNING = "tuning"
    DOCTOR = "doctor"
    CACHE = "cache"


class CacheAction(Vocab):
    """What `l2attr cache` does."""

    INFO = "info"
    CLEAR = "clear"


class Job(Vocab):
    """The Nsight Compute jobs of a profile or timeline run (each writes ncu/<job>.ncu-rep)."""

    SWEEP = "sweep"                  # the whole family x rung x profile sweep
    CONTROL = "control"              # the validity control's arms (rows labelled per arm)
    TIMELINE = "timeline"            # one call range with PM sampling
    RANGE_METRICS = "range_metrics"  # the same range's totals


# -- Nsight Compute's own words, as l2attr passes them and manifests record them --------------

class ReplayMode(Vocab):
    APPLICATION = "application"  # l2attr's: the whole child reruns per pass, memory untouched
    KERNEL = "kernel"            # ncu's default: memory saved and restored around every pass
    RANGE = "range"
    APP_RANGE = "app-range"      # a push/pop range as one result, the application rerun per pass


class AppReplayMode(Vocab):
    STRICT = "strict"
    BALANCED = "balanced"
    RELAXED = "relaxed"


class AppReplayMatch(Vocab):
    GRID = "grid"
    NAME = "name"
    ALL = "all"


class CacheControl(Vocab):
    NONE = "none"                # l2attr's: caches left alone
    ALL = "all"                  # ncu's default: caches flushed before every profiled kernel


class ClockControl(Vocab):
    NONE = "none"
    BASE = "base"                # ncu's default: clocks locked to base


class ResultKind(Vocab):
    """What one result of a report covers (ncu_report's workload type)."""

    KERNEL = "kernel"
    RANGE = "range"


# -- sweeps (`l2attr sweep AXIS`, l2attr/ladder/sweep/) ------------------------------------------------
