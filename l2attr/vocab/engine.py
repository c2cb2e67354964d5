"""The engine's words: cell conditions, timers, repeat modes, discards, step conditions, edges,
judgements."""

from __future__ import annotations

from l2attr.vocab.base import Vocab


class CellCondition(Vocab):
    """What happens to L2 around one call of an experiment (the generic form of L2State).

    The ladder's states are the pin-named special cases: natural = natural, flush =
    flush_before_call, flush_after_pin = flush_after_producer, reset_after_pin =
    reset_after_producer; no_producer is the ladder's consumer-only rung (OptMT)."""

    NATURAL = "natural"                            # producer -> sync -> consumer, L2 as left
    NO_PRODUCER = "no_producer"                    # the consumer alone: the honest comparand of a pin
    FLUSH_BEFORE_CALL = "flush_before_call"        # flush, then producer -> sync -> consumer
    FLUSH_AFTER_PRODUCER = "flush_after_producer"  # producer -> sync -> flush -> consumer: cold consumer
    RESET_AFTER_PRODUCER = "reset_after_producer"  # producer -> sync -> persisting reset -> consumer


class TimerKind(Vocab):
    """How the kernel timer keeps host launch lag out of the event interval."""

    BLOCKING = "blocking"  # the GPU waits on a host-mapped flag until every launch is enqueued
    SPIN = "spin"          # a GPU spin of a fixed length before the start event (may be too short)


class RepeatMode(Vocab):
    """How one repeat of an experiment cell runs (measure/cell.py)."""

    DEVICE = "device"    # kernel timer per kernel
    HOST = "host"        # host clock around producer -> sync and consumer -> sync
    PROFILE = "profiled"  # no timers, NVTX ranges: the Nsight Compute child


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


class StepCondition(Vocab):
    """How the L2 stands before each kernel of a whole step (l2attr.step)."""

    NATURAL = "natural"    # as the program leaves it (the step after another step)
    COLD = "cold"          # clean-flushed right before every kernel (graph surgery) or every op (eager)
    COLD_DIRTY = "cold_dirty"  # flushed, then one L2 of useless dirty lines: pays a full L2's write-back


class StepMode(Vocab):
    """How a step's natural arm ran (l2attr.step's `graph`)."""

    EAGER = "eager"        # the function itself, op by op
    GRAPH = "graph"        # natural: graph replays; cold: eager re-execution, flushed per op (before 2026-12-02)
    SURGERY = "surgery"    # both arms replays of the captured graph; cold: a flush node before every kernel


class EdgeArm(Vocab):
    """How the L2 stands right before one consumer op when an edge is measured (steps/edges.py)."""

    NATURAL = "natural"        # as the step leaves it
    COLD = "cold"              # read-flushed, nothing read back: every input cold
    REWARMED = "rewarmed"      # read-flushed, then every input of the consumer read back into L2 (the control)
    EDGE_COLD = "edge_cold"    # read-flushed, every input read back except the bytes the producer wrote


class EdgeControl(Vocab):
    """Does the re-warm reproduce the natural L2 for this consumer? (the one rule on rewarmed vs natural)"""

    HOLDS = "holds"            # rewarmed within noise of natural
    FAILS = "fails"            # rewarmed differs from natural beyond noise: the edge's figure is not judged
    NOT_MEASURED = "not_measured"


class Judgement(Vocab):
    """The one significance rule's answer for two medians (analysis/significance.py)."""

    FASTER = "faster"              # beyond noise, the new arm is faster
    SLOWER = "slower"              # beyond noise, the new arm is slower
    WITHIN_NOISE = "within noise"  # intervals overlap (or the gap is inside the cross-process spread)
    NOT_MEASURED = "not_measured"  # an arm has no samples
    WRITE_BACK = "write-back, not reuse"     # slower than clean-cold only: the predecessors' dirty lines
    DEPENDS = "depends on write-back"        # the clean-cold and write-back-cold readings disagree otherwise
    OVERLAPPED = "ran beside another kernel"  # natural ran it concurrently with another: not comparable with serialised cold
