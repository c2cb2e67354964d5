"""The ladder's and the measurements' words: families, roles, L2 states, pins, timers, quantities,
rungs, profiles."""

from __future__ import annotations

from l2attr.vocab.base import Vocab


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

    KERNEL = "kernel"      # CUDA events around the kernel alone, behind the blocking timer (or a spin)
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
