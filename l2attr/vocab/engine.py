"""The engine's words: timers, repeat modes, discards, step modes, judgements (the L2 conditions:
vocab/conditions.py)."""

from __future__ import annotations

from l2attr.vocab.core import Vocab, values


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
