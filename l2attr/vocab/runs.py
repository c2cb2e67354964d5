"""The command line's words and the run kinds they write, profiler jobs, and Nsight Compute's
settings."""

from __future__ import annotations

from l2attr.vocab.core import Vocab, values


class Command(Vocab):
    """The `l2attr` subcommands, the run kinds they write (a run dir's manifest `kind`), and
    `l2attr cache`'s actions."""

    LADDER = "ladder"
    PROFILE = "profile"
    TIMELINE = "timeline"       # a run kind only: `l2attr profile --timeline`
    SWEEP = "sweep"
    EXPERIMENT = "experiment"   # l2attr.Experiment / l2attr experiment
    STEP = "step"               # l2attr.step / l2attr step
    REPORT = "report"
    TRACES = "traces"
    TUNING = "tuning"
    DOCTOR = "doctor"
    CACHE = "cache"
    INFO = "info"               # `l2attr cache info`
    CLEAR = "clear"             # `l2attr cache clear`


# What made a run dir (its manifest's `kind`); what `l2attr cache` does.
RUN_KINDS = values(Command.LADDER, Command.PROFILE, Command.TIMELINE, Command.SWEEP, Command.EXPERIMENT,
                   Command.STEP)
CACHE_ACTIONS = values(Command.INFO, Command.CLEAR)


class Job(Vocab):
    """The Nsight Compute jobs of a profile or timeline run (each writes ncu/<job>.ncu-rep)."""

    SWEEP = "sweep"                  # the whole family x rung x profile sweep
    CONTROL = "control"              # the validity control's arms (rows labelled per arm)
    TIMELINE = "timeline"            # one call range with PM sampling
    RANGE_METRICS = "range_metrics"  # the same range's totals


class Ncu(Vocab):
    """Nsight Compute's own words, as l2attr passes them and manifests record them: one set, each
    option taking the subset named below it (one word, one meaning: `none` leaves caches or clocks
    alone, `kernel` and `range` are what a replay or one result covers)."""

    # --replay-mode
    APPLICATION = "application"  # l2attr's: the whole child reruns per pass, memory untouched
    KERNEL = "kernel"            # ncu's default: memory saved and restored around every pass
    RANGE = "range"
    APP_RANGE = "app-range"      # a push/pop range as one result, the application rerun per pass
    # --app-replay-mode
    STRICT = "strict"
    BALANCED = "balanced"
    RELAXED = "relaxed"
    # --app-replay-match
    GRID = "grid"
    NAME = "name"
    ALL = "all"                  # also --cache-control's: caches flushed before every profiled kernel (ncu's default)
    # --app-replay-buffer
    FILE = "file"                # ncu's default: pass data in a temporary file, the report made after the last pass
    MEMORY = "memory"            # pass data in memory, the report made while profiling
    # --cache-control, --clock-control
    NONE = "none"                # l2attr's: caches (clocks) left alone
    BASE = "base"                # --clock-control's default: clocks locked to base


APP_REPLAY_MODES = values(Ncu.STRICT, Ncu.BALANCED, Ncu.RELAXED)
APP_REPLAY_MATCHES = values(Ncu.GRID, Ncu.NAME, Ncu.ALL)
APP_REPLAY_BUFFERS = values(Ncu.FILE, Ncu.MEMORY)
CACHE_CONTROLS = values(Ncu.NONE, Ncu.ALL)
CLOCK_CONTROLS = values(Ncu.NONE, Ncu.BASE)
RESULT_KINDS = values(Ncu.KERNEL, Ncu.RANGE)     # what one result of a report covers (ncu_report's workload type)
