"""The closed value sets of l2attr, and the NVTX range-name contract (builder and parser together).

Every column that holds one of a fixed set of words (family, role, l2 state, pin granularity,
timer, quantity) takes it from here, so a typo is an AttributeError at import, not a silent
empty table. The enums are `str` subclasses: they compare equal to, and serialise as, their
plain value in CSV files and manifests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Any

from l2attr.grammar import Grammar, alternatives, count, rest, word


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
    """The rungs of the ladder (l2attr.ladder declares what each is), and torch as the reference row."""

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


class Command(Vocab):
    """The `l2attr` subcommands."""

    LADDER = "ladder"
    PROFILE = "profile"
    SWEEP = "sweep"
    EXPERIMENT = "experiment"
    STEP = "step"
    REPORT = "report"
    TRACES = "traces"
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


# -- NVTX range names -------------------------------------------------------------------------
# Ranges live in l2attr's own NVTX domain; ':' separates fields, never '/' (ncu's --nvtx-include
# splits the range stack on '/', NOTES trap 2). Seen on the H200 with ncu 2025.3.1
# (examples/logs/probe_nvtx_evict_last.log): `regex:l2attr@(pin|consumer):.*/` selects the pin and
# consumer ranges of the domain, nested in a call range or not, while `l2attr@regex:...` and an
# include without the trailing '/' select nothing.

NVTX_DOMAIN = "l2attr"
NVTX_INCLUDE = f"regex:{NVTX_DOMAIN}@(pin|consumer):.*/"
NVTX_CALL_INCLUDE = f"regex:{NVTX_DOMAIN}@call:.*/"
SWEEP_NVTX_INCLUDE = f"regex:{NVTX_DOMAIN}@sweep:.*/"
LEGACY_PREFIX = f"{NVTX_DOMAIN}:"   # before the domain: names in the default domain with this prefix


# Kernel launches of the ladder: one role of one call. Before kernel families existed (every run
# used today's `tuned` kernels) names had no family and no pin: LADDER_V1, read as family `tuned`.
LADDER = Grammar((), (word("role", Role), word("family", Family), word("rung"), word("pin", Pin), word("profile"),
                      word("l2_state", L2State), count("table", "t"), count("batch", "b")))
LADDER_V1 = Grammar((), (word("role", Role), word("rung"), word("profile"), word("l2_state", L2State),
                         count("table", "t"), count("batch", "b")))
_ROLE_ONLY_RE = re.compile(rf"^(?P<role>{alternatives(Role)})(?::.*)?$")


@dataclass(frozen=True)
class RangeName:
    """The identity of one profiled kernel launch, as carried by its NVTX push/pop range."""

    role: str
    family: str
    rung: str
    pin: str
    profile: str
    l2_state: str
    table: int
    batch: int

    def __str__(self) -> str:
        return LADDER.build(**{k: getattr(self, k) for k in self.__dataclass_fields__})

    @property
    def cell(self) -> str:
        return f"{self.family}:{self.rung}:{self.pin}:{self.profile}:{self.l2_state}"


def range_name(role: str, family: str, rung: str, pin: str, profile: str, l2_state: str,
               table: int, batch: int) -> str:
    """The NVTX range name (inside the l2attr domain) for one role of one call."""
    return str(RangeName(str(role), str(family), rung, str(pin), profile, str(l2_state),
                         int(table), int(batch)))


def _strip(name: str) -> str | None:
    """The name inside l2attr's namespace: `l2attr@x` (domain, as the importer records it) or
    `l2attr:x` (the old default-domain prefix); None for anybody else's range."""
    for prefix in (f"{NVTX_DOMAIN}@", LEGACY_PREFIX):
        if name.startswith(prefix):
            return name[len(prefix):]
    return None


def parse_range_name(name: str | None) -> dict[str, Any]:
    """Split an l2attr range name into columns; anything else leaves them empty.

    Accepts `l2attr@<name>` (the domain) and `l2attr:<name>` (before the domain). Names written
    before families existed are read as family `tuned` (the only kernels there were) with pin
    granularity unknown (''); `l2attr:pin`-style names give the role only.
    """
    out: dict[str, Any] = {"role": "", "family": "", "rung": "", "pin": "", "profile": "",
                           "l2_state": "", "cell": "", "table": None, "batch": None}
    inner = _strip(name) if name else None
    if inner is None:
        return out
    g = LADDER.parse(inner) or LADDER_V1.parse(inner)
    if g is not None:
        parsed = RangeName(g["role"], g.get("family") or Family.TUNED.value, g["rung"], g.get("pin") or "",
                           g["profile"], g["l2_state"], g["table"], g["batch"])
        out.update(role=parsed.role, family=parsed.family, rung=parsed.rung, pin=parsed.pin,
                   profile=parsed.profile, l2_state=parsed.l2_state, table=parsed.table,
                   batch=parsed.batch, cell=parsed.cell)
        return out
    m = _ROLE_ONLY_RE.match(inner)
    if m:
        out["role"] = m["role"]
    return out


# -- sweeps (`l2attr sweep AXIS`, l2attr/sweep/) ------------------------------------------------

class SweepAxis(Vocab):
    """What one sweep varies (issue #10): one run dir per sweep."""

    AMORTISATION = "amortisation"  # consumer calls per pin, k
    HOTSET = "hotset"              # hot rows pinned
    WINDOW = "window"              # access-policy window hitRatio (and the remap alone)
    CAPACITY = "capacity"          # effective L2 size (part of L2 occupied by evict_last lines)
    POLLUTION = "pollution"        # MB of unrelated streaming reads between pin and consumer


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


# Kernel launches of a sweep under ncu (`l2attr sweep ... --profile`): the point id last, as it
# may hold ':'.
SWEEP = Grammar(("sweep",), (word("role", SweepRole), word("family", Family), word("profile"), word("arm", Arm),
                             count("table", "t"), count("group", "g"), count("position", "p"), rest("point")))


def sweep_range_name(role: str, family: str, profile: str, arm: str, table: int, group: int, position: int,
                     point: str) -> str:
    """The NVTX range (inside the l2attr domain) around one profiled sweep kernel."""
    return SWEEP.build(role=role, family=family, profile=profile, arm=arm, table=table, group=group,
                       position=position, point=point)


def parse_sweep_range_name(name: str | None) -> dict[str, Any] | None:
    """The fields of a sweep kernel's range (`l2attr@sweep:...` or bare), or None for any other."""
    if not name:
        return None
    inner = name[len(NVTX_DOMAIN) + 1:] if name.startswith(f"{NVTX_DOMAIN}@") else name
    return SWEEP.parse(inner)


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


EXPERIMENT_ROLES = (Role.PRODUCER.value, Role.CONSUMER.value)
_NAME_RE = re.compile(r"^[A-Za-z0-9._-]+$")
# Experiment ranges: `<role>:<experiment>` (a user's annotate()) or
# `<role>:<experiment>:<condition>:c<call>` (the engine's own calls); ':' separated as above.
EXPERIMENT_INCLUDE = f"regex:{NVTX_DOMAIN}@({'|'.join(EXPERIMENT_ROLES)}):.*/"


def check_label(label: str, what: str = "label") -> str:
    """A user's label as it may stand in an NVTX name, a run dir name and a CSV cell."""
    if not isinstance(label, str) or not _NAME_RE.match(label):
        from l2attr.errors import UserError

        raise UserError(f"{what} {label!r}: use letters, digits, '.', '_' and '-' only")
    return label


class StepCondition(Vocab):
    """How the L2 stands before each kernel of a whole step (l2attr.step)."""

    NATURAL = "natural"    # as the program leaves it (the step after another step)
    COLD = "cold"          # read-flushed right before every op that is not a view


# An engine's call (`<role>:<experiment>:<condition>:c<call>`) or a user's own annotate() range
# (`<role>:<experiment>`), in the one grammar of range names; a step's op ranges likewise.
_EXP_ROLE = Field("role", "|".join(EXPERIMENT_ROLES))
_LABEL = Field("experiment", "[A-Za-z0-9._-]+")
EXPERIMENT = Grammar((), (_EXP_ROLE, _LABEL, word("condition", CellCondition), count("call", "c")))
EXPERIMENT_BARE = Grammar((), (_EXP_ROLE, _LABEL))
STEP_OP = Grammar(("op",), (Field("op_index", r"\d+", number=True),))
# One traced step of `l2attr.step` (a torch.profiler range, under LEGACY_PREFIX like every
# l2attr range outside its NVTX domain) and a marked step function's NVTX range.
STEP_TRACE = Grammar(("step",), (word("condition", StepCondition), Field("step", r"\d+", number=True)))
STEP_MARK = Grammar(("step",), (Field("name", "[A-Za-z0-9._-]+"),))


def experiment_range_name(role: str, experiment: str, condition: str | None = None,
                          call: int | None = None) -> str:
    """The NVTX name (inside l2attr's domain) of one role of one experiment call."""
    role, experiment = Role(role).value, check_label(experiment, "experiment name")
    if condition is None:
        return EXPERIMENT_BARE.build(role=role, experiment=experiment)
    return EXPERIMENT.build(role=role, experiment=experiment, condition=CellCondition(condition).value,
                            call=int(call or 0))


def parse_experiment_range(name: str | None) -> dict[str, Any]:
    """role, experiment, condition ('' for a bare annotate()), call (None) of an experiment range;
    every field empty for any other range (the ladder's included)."""
    out: dict[str, Any] = {"role": "", "experiment": "", "condition": "", "call": None}
    inner = _strip(name) if name else None
    if inner is None:
        return out
    got = EXPERIMENT.parse(inner) or EXPERIMENT_BARE.parse(inner)
    if got:
        out.update(got)
    return out


class Judgement(Vocab):
    """The one significance rule's answer for two medians (analysis/significance.py)."""

    FASTER = "faster"              # beyond noise, the new arm is faster
    SLOWER = "slower"              # beyond noise, the new arm is slower
    WITHIN_NOISE = "within noise"  # intervals overlap (or the gap is inside the cross-process spread)
    NOT_MEASURED = "not measured"  # an arm has no samples



