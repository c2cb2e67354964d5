"""The ladder, declared once as data: rungs, kernel families, and the variant that is their product.

A rung is a technique (OptMT = register cap, RPF = register prefetch, L2P = a pin kernel first);
a family is the code that implements the rungs' consumers and pin. A variant (family x rung x pin
granularity) is fully described here: which source and function, which compile options, whether
a pin kernel runs first and which one. Nothing else in l2attr names a kernel function.
"""

from __future__ import annotations

from dataclasses import dataclass

from l2attr.errors import UserError
from l2attr.vocab import ConsumerCode, Family, Pin, Profile, RungId, ladder_state

DEFAULT_MAXRREGCOUNT = 42
PROFILES = Profile.values()


@dataclass(frozen=True)
class Rung:
    name: str             # a RungId value
    label: str            # as the paper names it
    consumer: str         # a ConsumerCode value
    register_cap: bool    # compile with --maxrregcount
    pins: bool            # a pin kernel runs before the consumer
    below: str | None     # the rung this one's marginal delta is taken against
    window: bool = False  # no pin kernel: remapped hot rows under a stream access-policy window

    def compile_options(self, maxrregcount: int = DEFAULT_MAXRREGCOUNT) -> tuple[str, ...]:
        return (f"--maxrregcount={maxrregcount}",) if self.register_cap else ()


RUNGS: tuple[Rung, ...] = (
    Rung(RungId.BASELINE.value, RungId.BASELINE.value, ConsumerCode.PLAIN.value, False, False, None),  # label: its id
    Rung(RungId.OPTMT.value, "OptMT", ConsumerCode.PLAIN.value, True, False, RungId.BASELINE.value),
    Rung(RungId.RPF_OPTMT.value, "RPF+OptMT", ConsumerCode.RPF.value, True, False, RungId.OPTMT.value),
    Rung(RungId.L2P_OPTMT.value, "L2P+OptMT", ConsumerCode.PLAIN.value, True, True, RungId.OPTMT.value),
    Rung(RungId.COMBINED.value, "RPF+L2P+OptMT", ConsumerCode.RPF.value, True, True, RungId.RPF_OPTMT.value),
)
# Reference row: PyTorch's own kernel on the same data (not a rung of the ladder).
TORCH = Rung(RungId.TORCH.value, "torch.nn.functional.embedding_bag", ConsumerCode.TORCH.value, False, False, None)

RUNG_BY_NAME = {r.name: r for r in (*RUNGS, TORCH)}
LADDER_ORDER = [r.name for r in RUNGS] + [TORCH.name]

# Opt-in rung (issue #10; `--rungs ...,apw_optmt`): OptMT on tables whose hot rows were copied to
# their front, under a persisting-L2 access-policy window instead of a pin kernel (measure/residency.py).
APW = Rung(RungId.APW_OPTMT.value, "APW+OptMT", ConsumerCode.PLAIN.value, True, False, RungId.OPTMT.value, window=True)
RUNG_BY_NAME[APW.name] = APW
LADDER_ORDER.insert(LADDER_ORDER.index(TORCH.name), APW.name)


@dataclass(frozen=True)
class KernelFamily:
    """The code behind the rungs: consumer source and functions, argument layout, pins allowed."""

    name: Family
    title: str
    source: str                     # file under kernels/
    functions: dict[str, str]       # rung.consumer (ConsumerCode) -> kernel function
    abi: str                        # launch argument layout: the Family whose layout it takes
    pins: tuple[Pin, ...]           # pin granularities this family may use; the first is default
    rpf_reads_one_past_end: bool    # the RPF consumer may read one index past its bag's end
    headline: bool                  # the report leads with this family
    rungs: tuple[str, ...] | None = None   # the rungs it implements (None: all five)
    rung_labels: tuple[tuple[str, str], ...] = ()  # rung -> how this family names it
    register_cap: bool = True       # OptMT's --maxrregcount applies to its consumers

    @property
    def default_pin(self) -> Pin:
        return self.pins[0]

    def implements(self, rung: Rung) -> bool:
        return self.rungs is None or rung.name in self.rungs

    def label(self, rung: Rung) -> str:
        return dict(self.rung_labels).get(rung.name, rung.label)


FAMILIES: dict[Family, KernelFamily] = {
    Family.ARTIFACT: KernelFamily(
        Family.ARTIFACT, "the artifact's kernels (ATen-structured consumer, per-element pin)",
        "artifact_consumer.cu", {ConsumerCode.PLAIN: "artifact_plain", ConsumerCode.RPF: "artifact_rpf"},
        Family.ARTIFACT.value,
        (Pin.ELEMENT,), True, True),
    Family.TUNED: KernelFamily(
        Family.TUNED, "l2attr's tuned kernels (own consumer, per-line pin by default)",
        "tuned_consumer.cu", {ConsumerCode.PLAIN: "tuned_plain", ConsumerCode.RPF: "tuned_rpf"}, Family.TUNED.value,
        (Pin.LINE, Pin.ELEMENT), False, False),
    # The consumer at the HBM limit has no register-cap or register-prefetch rungs of its own: it
    # fills the "consumer without pin" slot (OptMT's, the pin rung's comparand) as `fast` and the
    # pin slot as `fast+pin`, compiled without a register cap (its occupancy is its own design).
    Family.FAST: KernelFamily(
        Family.FAST, "l2attr's consumer at the HBM limit (warps per bag, vector row loads, loads in flight)",
        "fast_consumer.cu", {ConsumerCode.PLAIN: "fast_v{vec}{weighted}"}, Family.FAST.value, (Pin.LINE, Pin.ELEMENT),
        False, False,
        rungs=(RungId.OPTMT.value, RungId.L2P_OPTMT.value, RungId.APW_OPTMT.value),
        rung_labels=((RungId.OPTMT.value, Family.FAST.value), (RungId.L2P_OPTMT.value, "fast+pin"),
                     (RungId.APW_OPTMT.value, "fast+window")),
        register_cap=False),
}
FAMILY_ORDER: tuple[Family, ...] = (Family.ARTIFACT, Family.TUNED, Family.FAST)
ALL_FAMILIES = "all"   # `--family all`: every family, in FAMILY_ORDER


@dataclass(frozen=True)
class FastLaunch:
    """The fast consumer's launch and compile knobs, chosen from the committed tuning table
    (examples/tuning/): `ladders.tuning.table.choose`'s point or one the table cannot tell from it (a
    CPU test holds them to that). examples/tuning/README.md says which and why."""

    warps_per_bag: int = 2     # warps sharing one bag
    bags_per_block: int = 4
    unroll: int = 6            # row loads in flight per lane (FAST_UNROLL)
    load: int = 0              # FAST_LOAD: 0 plain, 1 L1::no_allocate, 2 + L2::256B hint
    maxrregcount: int = 64     # 0: no register cap (a cap reaches unweighted fp32 builds only)


FAST_DEFAULT = FastLaunch()
HEADLINE_FAMILY = Family.ARTIFACT
PIN_SOURCE = "pin_l2.cu"
PIN_FUNCTIONS = {Pin.LINE: "pin_l2_lines", Pin.ELEMENT: "pin_l2_elements"}


@dataclass(frozen=True)
class Variant:
    """One measurable thing: a rung implemented by a family, with the pin granularity it uses."""

    family: Family
    rung: Rung
    pin: Pin

    @property
    def is_reference(self) -> bool:
        return self.rung.consumer == ConsumerCode.TORCH

    @property
    def consumer_function(self) -> str:
        return FAMILIES[self.family].functions[self.rung.consumer]

    @property
    def consumer_source(self) -> str:
        return FAMILIES[self.family].source

    @property
    def reads_one_past_end(self) -> bool:
        return self.rung.consumer == ConsumerCode.RPF and FAMILIES[self.family].rpf_reads_one_past_end

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.family.value, self.rung.name, self.pin.value)

    @property
    def label(self) -> str:
        if self.is_reference:
            return RungId.TORCH.value
        pin = f" ({self.pin.value} pin)" if self.rung.pins else ""
        fam = FAMILIES[self.family]
        if self.rung.name in dict(fam.rung_labels):  # the family's own name already says which
            return f"{fam.label(self.rung)}{pin}"
        return f"{self.family.value} {fam.label(self.rung)}{pin}"

    def compile_options(self, maxrregcount: int = DEFAULT_MAXRREGCOUNT) -> tuple[str, ...]:
        """The rung's register cap, where the family honours it."""
        return self.rung.compile_options(maxrregcount) if FAMILIES[self.family].register_cap else ()


def variant(family: Family | str, rung: Rung | str, pin: Pin | str | None = None) -> Variant:
    """Build a variant, checking that the family allows the pin granularity."""
    r = RUNG_BY_NAME[rung] if isinstance(rung, str) else rung
    if r.consumer == ConsumerCode.TORCH:
        return Variant(Family.REFERENCE, r, Pin.NONE)
    fam = FAMILIES[Family(family)]
    if not fam.implements(r):
        raise UserError(f"the {fam.name.value} family has no {r.name} rung; it implements "
                        f"{', '.join(fam.rungs or ())}")
    if not r.pins:
        return Variant(fam.name, r, Pin.NONE)
    p = fam.default_pin if pin is None else Pin(pin)
    if p not in fam.pins:
        raise UserError(f"the {fam.name.value} family pins per {'/'.join(x.value for x in fam.pins)}, "
                        f"not per {p.value}")
    return Variant(fam.name, r, p)


def plan_variants(families: list[Family], rungs: list[Rung], pin: Pin | None = None) -> list[Variant]:
    """The variants a run measures: each family's rungs (torch once), in ladder order."""
    out: list[Variant] = []
    for fam in families:
        for r in rungs:
            if r.consumer == ConsumerCode.TORCH or not FAMILIES[fam].implements(r):
                continue
            chosen = pin if (pin is not None and pin in FAMILIES[fam].pins) else None
            out.append(variant(fam, r, chosen))
    if any(r.consumer == ConsumerCode.TORCH for r in rungs):
        out.append(variant(Family.REFERENCE, TORCH))
    return out


def rung(name: str) -> Rung:
    try:
        return RUNG_BY_NAME[name]
    except KeyError:
        raise UserError(f"unknown rung {name!r}; valid: {', '.join(LADDER_ORDER)}") from None


def parse_rungs(text: str | None) -> list[Rung]:
    if not text:
        return [*RUNGS, TORCH]
    return [rung(n.strip()) for n in text.split(",") if n.strip()]


def parse_families(text: str | None) -> list[Family]:
    """`artifact`, `tuned`, `fast`, `all`, or a comma list; the headline family first."""
    if not text or text.strip() == ALL_FAMILIES:
        return list(FAMILY_ORDER)
    names = [n.strip() for n in text.split(",") if n.strip()]
    valid = [f.value for f in FAMILY_ORDER]
    for n in names:
        if n not in valid:
            raise UserError(f"unknown family {n!r}; valid: {', '.join(valid)}, all")
    return [f for f in FAMILY_ORDER if f.value in names]


def parse_profiles(text: str | None) -> list[str]:
    if not text:
        return list(PROFILES)
    names = [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        if n not in PROFILES:
            raise UserError(f"unknown profile {n!r}; valid: {', '.join(PROFILES)}")
    return names


# `--extra-cell FAMILY:RUNG:PROFILE:L2_STATE`: a cell beyond variants x profiles x states (how
# `l2attr profile` runs its validity control's arms in the sweep's child), parsed in one place.
def parse_extra_cell(text: str, pin_granularity: str | None = None) -> tuple[Variant, str, str]:
    """"family:rung:profile:l2_state" -> (variant, profile, state); a UserError names what is wrong."""
    parts = str(text).split(":")
    if len(parts) < 4 or not all(parts):
        raise UserError(f"--extra-cell {text!r}: write FAMILY:RUNG:PROFILE:L2_STATE")
    family, rung_name, state = parts[0], parts[1], parts[-1]
    try:
        fam, st = Family(family), ladder_state(state)
    except ValueError as exc:
        raise UserError(f"--extra-cell {text!r}: {exc}") from None
    chosen = plan_variants([fam], [rung(rung_name)], Pin(pin_granularity) if pin_granularity else None)
    if not chosen:
        raise UserError(f"--extra-cell {text!r}: the {family} family has no {rung_name} rung")
    return chosen[0], ":".join(parts[2:-1]), st.value
