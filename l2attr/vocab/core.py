"""The base of every closed value set, and the ladder's and the measurements' words: families,
roles, pins, timers, quantities, rungs, profiles."""

from __future__ import annotations

from enum import Enum


class Vocab(str, Enum):
    """A str enum whose str() is its value (so f-strings and CSV writers see the plain word)."""

    def __str__(self) -> str:
        return str(self.value)

    @classmethod
    def values(cls) -> tuple[str, ...]:
        return tuple(m.value for m in cls)


def values(*members: Vocab) -> tuple[str, ...]:
    """The plain words of a subset of one enum (a table column that takes only these).

    Plain strings, not members: a str enum hashes by its member name, so `"pin" in {Role.PIN}` is
    False while `"pin" in ("pin",)` is True; sets and pandas `isin` need the words."""
    return tuple(m.value for m in members)


class Family(Vocab):
    """Which kernels implement the rungs (a family's launch argument layout is named by the family
    that defines it: dlrm/declare.py's `abi`; the artifact's is ATen's)."""

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
    PREPARE = "prepare"    # a host call before the consumer (the window's cuStreamSetAttribute; host clock)


# The roles of a ladder or experiment range and of metrics.csv; the roles of sweep_samples.csv.
RANGE_ROLES = values(Role.PIN, Role.CONSUMER, Role.CALL, Role.PRODUCER, Role.POLLUTE)
SWEEP_ROLES = values(Role.PIN, Role.CONSUMER, Role.POLLUTE, Role.PREPARE, Role.CALL)



class Pin(Vocab):
    """Pin granularity: how many prefetch instructions per hot row."""

    NONE = "none"        # rung without a pin kernel
    LINE = "line"        # one prefetch per 128-byte L2 line
    ELEMENT = "element"  # one prefetch per element (the artifact's): 32 per fp32 line


class Timer(Vocab):
    """Which clock a time came from."""

    KERNEL = "kernel"      # CUDA events around the kernel alone, behind the kernel timer (TimerKind)
    ARTIFACT = "artifact"  # the artifact's: event -> launch -> stream sync -> event, per call
    WALL = "wall"          # host perf_counter around the whole call sequence


class Quantity(Vocab):
    """What a cells.csv, exp_cells.csv or sweep_points.csv row summarises."""

    PIN = "pin"            # the pin kernel
    CONSUMER = "consumer"  # the EmbeddingBag consumer kernel
    KERNELS = "kernels"    # pin + consumer of the same call (pin counted 0 without a pin)
    CALL = "call"          # the whole call as the host sees it (a sweep: whole calls per consumer call)
    PRODUCER = "producer"  # an experiment's producer step
    CONSUMER_FIRST = "consumer_first"  # sweep: the consumer call right after its pin (position 1)
    CONSUMER_REST = "consumer_rest"    # sweep: the pin's later calls (positions > 1)
    POLLUTE = "pollute"                # sweep: the streaming read between pin and consumer
    PREPARE = "prepare"                # sweep: the host call before the consumer (window)
    CHARGED = "charged"                # sweep: (pin + consumer kernels) per consumer call, kernel timer


# What a cells.csv or exp_cells.csv row may summarise; what a sweep_points.csv row may.
CELL_QUANTITIES = values(Quantity.PIN, Quantity.CONSUMER, Quantity.KERNELS, Quantity.CALL, Quantity.PRODUCER)
SWEEP_QUANTITIES = values(Quantity.PIN, Quantity.CONSUMER, Quantity.CONSUMER_FIRST, Quantity.CONSUMER_REST,
                          Quantity.POLLUTE, Quantity.PREPARE, Quantity.CHARGED, Quantity.CALL)


class Condition(Vocab):
    """Why a layer-B kernel was profiled."""

    LADDER = "ladder"
    CONTROL_AFTER_PIN = "control_after_pin"
    CONTROL_AFTER_FLUSH = "control_after_flush"
    CONTROL_AFTER_RESET = "control_after_reset"


class Verdict(Vocab):
    """A control's answer. The validity control: can this profiler setup see the pin's L2 state?
    An edge's control: does the re-warm reproduce the natural L2 for this consumer (the one rule
    on rewarmed vs natural)?"""

    CLEAR = "clear"
    NOT_CLEAR = "not_clear"
    INCONCLUSIVE = "inconclusive"
    HOLDS = "holds"                # edge: rewarmed within noise of natural
    FAILS = "fails"                # edge: rewarmed differs from natural beyond noise: the edge is not judged
    NOT_MEASURED = "not_measured"  # edge: an arm has no samples


# The validity control's answers; an edge's control's (step_edges.csv `control`).
VALIDITY_VERDICTS = values(Verdict.CLEAR, Verdict.NOT_CLEAR, Verdict.INCONCLUSIVE)
EDGE_CONTROLS = values(Verdict.HOLDS, Verdict.FAILS, Verdict.NOT_MEASURED)


class RungId(Vocab):
    """The rungs of the ladder (l2attr.dlrm.declare declares what each is), and torch as the reference row."""

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
