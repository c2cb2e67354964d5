"""The command line's words and the run kinds they write, profiler jobs, Nsight Compute's settings,
and the engine's words: timers, repeat modes, discards, step modes, judgements (the L2
conditions: vocab/conditions.py)."""

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
    """What a child process is started for: the Nsight Compute jobs of a profile or timeline run
    (each writes ncu/<job>.ncu-rep), and a marked step's programs in a child of `l2attr step` (its
    options' `program`, steps/declare.py)."""

    SWEEP = "sweep"                  # the whole family x rung x profile sweep
    CONTROL = "control"              # the validity control's arms (rows labelled per arm)
    TIMELINE = "timeline"            # one call range with PM sampling
    RANGE_METRICS = "range_metrics"  # the same range's totals
    STEP_MEASURE = "step-measure"    # the marked step measured as l2attr.step would, into the command's run dir
    STEP_OPS = "step-ops"            # each op in its NVTX range, for Nsight Compute's per-op DRAM bytes
    STEP_GRAPH = "step-graph"        # captured and replayed, for Nsight Compute's per-kernel-node write-back


# a marked step's programs (the part of Job a step's options take)
STEP_PROGRAMS = values(Job.STEP_MEASURE, Job.STEP_OPS, Job.STEP_GRAPH)


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


# -- the engine's words ---------------------------------------------------------------------------


class TimerKind(Vocab):
    """How the kernel timer keeps host launch lag out of the event interval."""

    BLOCKING = "blocking"  # the GPU waits on a host-mapped flag until every launch is enqueued
    SPIN = "spin"          # a GPU spin of a fixed length before the start event (may be too short)


class RepeatMode(Vocab):
    """How one repeat of an experiment cell or a sweep unit runs (measure/cell.py)."""

    DEVICE = "device"    # kernel timer per kernel
    HOST = "host"        # host clock around producer -> sync and consumer -> sync
    PROFILE = "profiled"  # no timers, NVTX ranges: the Nsight Compute child


# How a sweep unit is timed: kernel timer per kernel (host calls on the host clock), or the whole
# call on the host clock (launches and syncs included).
SWEEP_MODES = values(RepeatMode.DEVICE, RepeatMode.HOST)


class RepeatStop(Vocab):
    """Why a cell of an adaptive run stopped repeating (measure/adaptive.py; cells.csv `stopped`,
    empty in a fixed-repeat run)."""

    TARGET = "target"    # its 95 % interval of the median closed to the target
    LIMIT = "limit"      # max repeats or max seconds first: noisy, stopped at the limit


# A kept sample's discard reason: empty (no enum value: the empty string is no word).
KEPT = ""


class Discard(Vocab):
    """Why a kernel-timer sample was not kept (recorded, never silently dropped; KEPT when kept)."""

    TIMEOUT = "timeout"        # the blocking kernel gave up waiting: host time may be in the interval
    LATE = "late"              # spin timer: the launch came after the spin had ended
    THROTTLED = "throttled"    # SM clock during the wait below the threshold of the default clock


class StepMode(Vocab):
    """How a step's natural arm ran (l2attr.step's `graph`)."""

    EAGER = "eager"        # the function itself, op by op
    GRAPH = "graph"        # natural: graph replays; cold: eager re-execution, flushed per op (before 2026-12-02)
    SURGERY = "surgery"    # both arms replays of the captured graph; cold: a flush node before every kernel


class Judgement(Vocab):
    """The one significance rule's answer for two medians (analysis/significance.py)."""

    FASTER = "faster"              # beyond noise, the new arm is faster
    SLOWER = "slower"              # beyond noise, the new arm is slower
    WITHIN_NOISE = "within noise"  # intervals overlap (or the gap is inside the cross-process spread)
    NOT_MEASURED = "not_measured"  # an arm has no samples
    WRITE_BACK = "write-back, not reuse"     # slower than clean-cold only: the predecessors' dirty lines
    DEPENDS = "depends on write-back"        # the clean-cold and write-back-cold readings disagree otherwise
    OVERLAPPED = "ran beside another kernel"  # natural ran it concurrently with another: not comparable with serialised cold
