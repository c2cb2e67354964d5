"""The closed value sets of l2attr (the NVTX range names built from them: l2attr.names).

Every column that holds one of a fixed set of words (family, role, l2 state, pin granularity,
timer, quantity) takes it from here, so a typo is an AttributeError at import, not a silent
empty table. The enums are `str` subclasses: they compare equal to, and serialise as, their
plain value in CSV files and manifests.
"""

from __future__ import annotations

from enum import Enum



class Vocab(str, Enum):
    """A str enum whose str() is its value (so f-strings and CSV writers see the plain word)."""

    def __str__(self) -> str:
        return str(self.value)

    @classmethod
    def values(cls) -> tuple[str, ...]:
        return tuple(m.value for m in cls)


class Family(Vocab):
    """Which kernels implement the rungs."""

    ARTIFACT = "artifact"    # re-implementation of the MICRO'24 artifact's ATen-structured kernels
    TUNED = "tuned"          # l2attr's own consumer (restrict, no offset2bag store), per-line pin
    FAST = "fast"            # l2attr's consumer at the HBM limit (warps per bag, vector loads)
    REFERENCE = "reference"  # torch.nn.functional.embedding_bag: not a family, a yardstick


class Role(Vocab):
    PIN = "pin"
    CONSUMER = "consumer"
    CALL = "call"          # the whole call, pin -> sync -> consumer (range replay, timelines)
    PRODUCER = "producer"  # an experiment's producer step (a pin, a prefetch, the previous layer)
    POLLUTE = "pollute"    # other work between producer and consumer (the pollution sweep's read)


class L2State(Vocab):
    """What happens to L2 between calls (and, for the control, between pin and consumer)."""

    NATURAL = "natural"                  # nothing: the artifact's regime
    FLUSH = "flush"                      # flush L2 before every table call
    FLUSH_AFTER_PIN = "flush_after_pin"  # control: flush between pin and consumer
    RESET_AFTER_PIN = "reset_after_pin"  # control: cudaCtxResetPersistingL2Cache between them


class Pin(Vocab):
    """Pin granularity: how many prefetch instructions per hot row."""

    NONE = "none"        # rung without a pin kernel
    LINE = "line"        # one prefetch per 128-byte L2 line
    ELEMENT = "element"  # one prefetch per element (the artifact's): 32 per fp32 line


class Timer(Vocab):
    """Which clock a time came from."""

    KERNEL = "kernel"      # CUDA events around the kernel alone, with a GPU spin head start
    ARTIFACT = "artifact"  # the artifact's: event -> launch -> stream sync -> event, per call
    WALL = "wall"          # host perf_counter around the whole call sequence


class Quantity(Vocab):
    """What a cells.csv row summarises."""

    PIN = "pin"            # the pin kernel
    CONSUMER = "consumer"  # the EmbeddingBag consumer kernel
    KERNELS = "kernels"    # pin + consumer of the same call (pin counted 0 without a pin)
    CALL = "call"          # the whole call as the host sees it
    PRODUCER = "producer"  # an experiment's producer step


class Condition(Vocab):
    """Why a layer-B kernel was profiled."""

    LADDER = "ladder"
    CONTROL_AFTER_PIN = "control_after_pin"
    CONTROL_AFTER_FLUSH = "control_after_flush"
    CONTROL_AFTER_RESET = "control_after_reset"


class Verdict(Vocab):
    """The validity control's answer: can this profiler setup see the pin's L2 state?"""

    CLEAR = "clear"
    NOT_CLEAR = "not_clear"
    INCONCLUSIVE = "inconclusive"


class RungId(Vocab):
    """The rungs of the ladder (l2attr.ladder.declare declares what each is), and torch as the reference row."""

    BASELINE = "baseline"
    OPTMT = "optmt"              # register cap
    RPF_OPTMT = "rpf_optmt"      # + register prefetch
    L2P_OPTMT = "l2p_optmt"      # pin kernel -> sync -> OptMT consumer
    COMBINED = "combined"        # RPF + L2P + OptMT
    APW_OPTMT = "apw_optmt"      # opt-in: remapped hot rows under an access-policy window, no pin kernel
    TORCH = "torch"              # torch.nn.functional.embedding_bag: a reference row, not a rung


class ConsumerCode(Vocab):
    """Which consumer code a rung runs."""

    PLAIN = "plain"
    RPF = "rpf"                  # register prefetch
    TORCH = "torch"              # torch's own kernel


class Abi(Vocab):
    """A family's launch argument layout."""

    ATEN = "aten"                # the artifact's ATen-structured kernels
    TUNED = "tuned"
    FAST = "fast"


class Profile(Vocab):
    """The built-in reuse profiles, hottest first (a trace's name is a profile too, outside this set)."""

    REUSE_HIGH = "reuse_high"
    REUSE_MEDIUM = "reuse_medium"
    REUSE_LOW = "reuse_low"
    RANDOM = "random"


class Phase(Vocab):
    """A burst of a PM-sampled timeline (phases.csv)."""

    PIN = "pin"
    GAP = "gap"                  # between the pin's burst and the consumer's
    CONSUMER = "consumer"
    KERNEL = "kernel"            # kernel work between them
    OTHER = "other"              # busy without SM work (copy engine)


class WorkloadSource(Vocab):
    """Where a workload's indices or its hot rows came from (manifest `workloads.*.kind`)."""

    PROFILE = "profile"      # indices generated from a built-in profile
    TRACE = "trace"          # indices read from a trace file
    FILE = "file"            # hot rows read from a file
    TOP_K = "top_k"          # hot rows: the most used ids


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

class SweepAxis(Vocab):
    """What one sweep varies (issue #10): one run dir per sweep."""

    AMORTISATION = "amortisation"  # consumer calls per pin, k
    HOTSET = "hotset"              # hot rows pinned
    WINDOW = "window"              # access-policy window hitRatio (and the remap alone)
    OCCUPY = "occupy"              # MiB of L2 held by evict_last lines of a dummy buffer before each call
    POLLUTION = "pollution"        # MB of unrelated streaming reads between pin and consumer
    # the occupy axis' name before it was renamed for what it measures (x: L2 minus the MiB held,
    # called an "effective L2" that the ncu check showed the H200 does not keep): read, not run
    CAPACITY = "capacity"


class SweepJudgement(Vocab):
    """Which judgement a sweep axis' table gets (l2attr/analysis/sweep_judges.py: one module each),
    every word in it from analysis/significance.py's one rule."""

    BREAK_EVEN = "breaks_even_k"       # per series along x: where the pinned arm stops being slower, pays
    PEAK = "peak_point"                # per series: the best x, a peak only if beyond noise of every other x
    SHARE_LEFT = "share_left"          # per series: the share of the x = lowest gain left, where it falls below half
    BEST_VS_REFERENCE = "vs_reference" # per series: the best point of an arm against the reference arm
    PER_POINT = "per_point"            # per point: the pinned arm against the reference at that point


class OptionKind(Vocab):
    """How a sweep axis' comma-list option is parsed (ladder/sweep/axes/declare.py)."""

    INTS = "ints"
    FLOATS = "floats"
    WORDS = "words"                    # words of one vocabulary (its enum given with the option)


class RefPoint(Vocab):
    """Where a sweep table's reference median sits."""

    SAME = "same_point"                # at the row's own point (the comparand measured beside it)
    LOWEST_X = "lowest_x"              # at the axis' smallest x (0 hot rows, no window, no pollution)


class LineStyle(Vocab):
    """What a line of a sweep chart is (the report picks the dash)."""

    PRIMARY = "primary"                # the measured main series
    SECONDARY = "secondary"            # a measured second series (another order, consumer only)
    MODEL = "model"                    # a prediction (the formula), thin


class DeviceLimit(Vocab):
    """A recorded device limit a sweep chart can mark on its x axis (in MiB)."""

    PERSISTING_MAX = "persisting_max"  # persistingL2CacheMaxSize
    L2_SIZE = "l2_size"                # l2CacheSize


class Order(Vocab):
    """Where a pin's k consumer calls sit in the call stream."""

    BACK_TO_BACK = "back_to_back"  # pin(t), then k calls of table t in a row
    INTERLEAVED = "interleaved"    # the artifact's loop: the other tables' pins and calls in between


class Arm(Vocab):
    """What runs before the consumer at one sweep point."""

    OPTMT = "optmt"          # the OptMT consumer alone (the honest comparand)
    PIN = "l2p_optmt"        # pin kernel -> sync -> OptMT consumer
    REMAP = "remap"          # hot rows copied to the front of the table, indices remapped; no window
    WINDOW = "window"        # remap + persisting set-aside + stream access-policy window


class SweepRole(Vocab):
    """What one row of sweep_samples.csv timed."""

    PIN = "pin"              # pin kernel (kernel timer)
    CONSUMER = "consumer"    # consumer kernel (kernel timer)
    POLLUTE = "pollute"      # streaming read between pin and consumer (kernel timer)
    PREPARE = "prepare"      # host call before the consumer (the window's cuStreamSetAttribute; host clock)
    CALL = "call"            # the whole call on the host clock: [prepare] [pin -> sync] [pollute -> sync] consumer -> sync


class SweepMode(Vocab):
    """How a sweep unit is timed."""

    DEVICE = "device"        # kernel timer (CUDA events + spin) per kernel, host calls on the host clock
    HOST = "host"            # the whole call on the host clock (launches and syncs included)


class SweepQuantity(Vocab):
    """What a sweep_points.csv row summarises."""

    PIN = "pin"
    CONSUMER = "consumer"
    CONSUMER_FIRST = "consumer_first"  # the consumer call right after its pin (position 1)
    CONSUMER_REST = "consumer_rest"    # the pin's later calls (positions > 1)
    POLLUTE = "pollute"
    PREPARE = "prepare"                # the host call before the consumer (window)
    CHARGED = "charged"                # (pin + consumer kernels) per consumer call, kernel timer
    CALL = "call"                      # whole calls per consumer call, wall clock


# -- experiments: any producer -> consumer pair (l2attr.experiment) ---------------------------

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
    COLD = "cold"          # read-flushed right before every op that is not a view


class StepMode(Vocab):
    """How a step's natural arm ran (l2attr.step's `graph`)."""

    EAGER = "eager"        # the function itself, op by op
    GRAPH = "graph"        # replays of a torch.cuda.CUDAGraph that l2attr captured from the function


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



