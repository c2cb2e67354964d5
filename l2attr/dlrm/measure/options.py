"""The ladder's options, one typed model: `l2attr ladder`'s flags (ladders/command.py makes them from
the fields), `l2attr.ladder(...)`'s keyword arguments, the manifest's `measure` section as written
(`manifest()`) and as read (`from_manifest`, the contract integrity/manifest.py holds a run to),
and what `--resume` rebuilds a run from.

Why one model: the flags, the manifest rules and the resume's rebuild were three lists kept in step
by hand; a field added to one and not the others was a flag the manifest refused, or a setting a
resumed run silently lost.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from pydantic import (BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, ValidationInfo,
                      field_serializer, field_validator, model_validator)

from l2attr.dlrm.declare import (ALL_FAMILIES, DEFAULT_MAXRREGCOUNT, FAMILIES, LADDER_ORDER, PROFILES, Rung, Variant,
                                 parse_extra_cell, parse_families, parse_profiles, parse_rungs, plan_variants, rung)
from l2attr.dlrm.measure.kernels import LaunchShape
from l2attr.errors import UserError
from l2attr.measure.adaptive import LADDER_DEFAULT as ADAPTIVE
from l2attr.measure.adaptive import AdaptiveRule
from l2attr.typed import RuleError, nest, validated
from l2attr.vocab import LADDER_STATES, Family, L2Condition, Pin, TimerKind, condition_words, ladder_state

WHOLE = 10 ** 9          # the largest count a manifest may hold (a bigger one was edited or damaged)
STATES = condition_words(LADDER_STATES)
LIST_FLAGS = {"families": "--family", "rungs": "--rungs", "profiles": "--profiles"}


def _names(value: Any, parse: Any) -> Any:
    """A comma list (a flag, an API argument) through its parser; a manifest's list as it is."""
    return parse(value) if isinstance(value, str) else value


class LadderOptions(BaseModel):
    """What a ladder run measures and how (its manifest's `measure`)."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    rungs: list[Rung] = Field(default_factory=lambda: parse_rungs(None), json_schema_extra={
        "text": True, "rule": "a non-empty list of rung names (" + ", ".join(LADDER_ORDER) + ")"},
        description="comma list (default: baseline,optmt,rpf_optmt,l2p_optmt,combined,torch; apw_optmt, the "
                    "access-policy window instead of a pin, on request)")
    profiles: list[str] = Field(default_factory=lambda: list(PROFILES), json_schema_extra={"text": True},
                                description=f"comma list of reuse profiles (default: {','.join(PROFILES)}); "
                                            "with --trace, the trace's name")
    families: list[Family] = Field(default_factory=lambda: parse_families(None), json_schema_extra={
        "flag": "--family", "metavar": "FAMILY", "text": True,
        "rule": "a non-empty list of distinct words from " + ", ".join(Family.values())},
        description="kernel family: artifact, tuned, fast, a comma list, or all (default all: the three, "
                    "artifact first)")
    trace: Path | None = Field(None, description="artifact-format index trace instead of a profile")
    hot: Path | None = Field(None, description="hot-index file (one id per line) for the pin kernel")
    drop_out_of_range: StrictBool = Field(False, description="drop trace ids >= rows as the artifact's loader "
                                                             "silently did")
    l2_state: str = Field(L2Condition.NATURAL.value, json_schema_extra={
        "flag": "--l2", "metavar": "STATE[,STATE...]", "rule": "a comma list of " + ", ".join(STATES)},
        description="cache state between calls, one or several run in turn: natural (artifact: nothing), flush "
                    "(flush L2 before every table call), flush_after_pin (control: flush between pin and consumer), "
                    "reset_after_pin (control: cudaCtxResetPersistingL2Cache between pin and consumer)")
    repeats: StrictInt = Field(3, ge=1, le=WHOLE, json_schema_extra={"help_default": None},
                               description="a fixed run: this many device-timed repeats per cell, each followed by a "
                                           "host-timed one (default: adaptive repeats, below)")
    # adaptive repeats (measure/adaptive.py): None = fixed; else each cell stops once its 95 % interval
    # half-width is <= target_rel x its median, within min/max repeats and max seconds
    target_rel: StrictFloat | None = Field(None, gt=0, lt=1, json_schema_extra={"help_default": ADAPTIVE.target_rel},
                                           description="adaptive repeats: a cell stops once its 95% interval of the "
                                                       "median (kernel timer: consumer, and pin) has a half-width <= "
                                                       "this share of its median")
    min_repeats: StrictInt = Field(2, ge=1, le=WHOLE, json_schema_extra={"help_default": ADAPTIVE.min_repeats},
                                   description="adaptive repeats: at least this many per cell")
    max_repeats: StrictInt = Field(ADAPTIVE.max_repeats, ge=1, le=WHOLE,
                                   description="adaptive repeats: at most this many; a cell stopped here is marked "
                                               "noisy in cells.csv (stopped = limit)")
    max_seconds: StrictFloat = Field(10.0, gt=0, le=1e6, json_schema_extra={"help_default": ADAPTIVE.max_seconds},
                                     description="adaptive repeats: at most this many seconds of repeats per cell, "
                                                 "then marked noisy as at --max-repeats")
    maxrregcount: StrictInt = Field(DEFAULT_MAXRREGCOUNT, ge=1, le=255, description="register cap of the OptMT rungs")
    pin_granularity: Pin | None = Field(None, json_schema_extra={
        "choices": (Pin.LINE.value, Pin.ELEMENT.value), "rule": f"{Pin.LINE.value}, {Pin.ELEMENT.value} or null"},
        description="one prefetch per 128-byte line or per element; default: each family's own "
                    "(artifact: element, the only one it has; tuned: line)")
    rpf_depth: StrictInt = Field(2, ge=1, le=64,
                                 description="values in flight in the tuned family's RPF (default 2; the artifact's is 2)")
    shape: LaunchShape = Field(default_factory=LaunchShape)
    nvtx_last: StrictInt = Field(0, ge=0, le=WHOLE,
                                 description="NVTX ranges only around the last N measured calls of a cell (0: all)")
    nvtx_calls: StrictBool = Field(False, description="also one NVTX range around each whole call (pin -> sync -> "
                                                      "consumer), for `profile --timeline`'s range replay")
    spin_us: StrictFloat = Field(50.0, ge=0, le=1e6, description="with --timer spin: GPU spin before each timed kernel")
    timer: TimerKind | None = Field(TimerKind.BLOCKING, description=(
        "kernel timer: blocking (default: the GPU waits on a host flag until the timed launches are enqueued, so no "
        "launch lag reaches the interval) or spin (a GPU spin of --spin-us before each timed kernel)"))
    host_repeat: StrictBool = Field(True, json_schema_extra={"flag": "--no-host-repeat", "negate": True},
                                    description="skip the host-timed repeats (no artifact-timer or wall-charged "
                                                "figures)")
    cache_dir: Path | None = Field(None, description="cache generated workloads here (default: the user's cache dir, "
                                                     "or $L2ATTR_CACHE_DIR; see `l2attr cache info`)")
    # the correctness verdicts kept for an ncu job's later passes (measure/check.py CheckMemo)
    checks_memo: Path | None = Field(None, json_schema_extra={"metavar": "FILE"}, description=(
        "keep the correctness checks' verdicts in FILE and take them from there when the same sources, workload, "
        "options and GPU checked before: how each later replay pass of an `l2attr profile` child skips checks its "
        "first pass made"))
    bandwidth: StrictBool = Field(True, json_schema_extra={"flag": "--no-bandwidth", "negate": True}, description=(
        "skip the warm-up and the copy / HBM-read / L2-read bandwidth measurements (what `l2attr profile` asks "
        "of its children)"))
    # cells beyond variants x profiles x states (`l2attr profile` runs its validity control's arms
    # in the sweep's child this way)
    extra_cells: list[str] = Field(default_factory=list, json_schema_extra={
        "flag": "--extra-cell", "append": True, "metavar": "FAMILY:RUNG:PROFILE:L2_STATE"},
        description="also measure this cell (repeatable): how `l2attr profile` runs its validity control's arms "
                    "in the sweep's child")

    # -- reading: a flag's text, a manifest's words ----------------------------------------------

    @model_validator(mode="before")
    @classmethod
    def _derived(cls, data: Any) -> Any:
        """`variants` is written beside the options (derived from them): its form is checked, then it
        is dropped, never read back as a setting."""
        if isinstance(data, dict) and "variants" in data:
            data = dict(data)
            v = data.pop("variants")
            if not (isinstance(v, list) and all(isinstance(x, list) and all(isinstance(y, str) for y in x) for x in v)):
                raise RuleError("a list of lists of strings", v, "variants")
        return data

    @field_validator("rungs", mode="before")
    @classmethod
    def _rungs(cls, value: Any) -> Any:
        value = _names(value, parse_rungs)
        if not isinstance(value, list) or not value:
            raise RuleError("a non-empty list of rung names", value)
        return [rung(r) if isinstance(r, str) else r for r in value]

    @field_validator("families", mode="before")
    @classmethod
    def _families(cls, value: Any) -> Any:
        value = _names(value, parse_families)
        if not isinstance(value, list) or not value or len(set(map(str, value))) != len(value):
            raise RuleError("a non-empty list of distinct words from " + ", ".join(Family.values()), value)
        return value

    @field_validator("profiles", mode="before")
    @classmethod
    def _profiles(cls, value: Any) -> Any:
        return _names(value, parse_profiles)

    @field_validator("l2_state", mode="before")
    @classmethod
    def _states(cls, text: Any) -> Any:
        states = [t.strip() for t in text.split(",") if t.strip()] if isinstance(text, str) else None
        if not states or any(t not in STATES for t in states):
            raise RuleError(f"one or more of {', '.join(STATES)}, comma-separated", text)
        return ",".join(dict.fromkeys(states))

    @field_validator("pin_granularity")
    @classmethod
    def _pin(cls, value: Pin | None) -> Pin | None:
        if value == Pin.NONE:
            raise RuleError(f"{Pin.LINE.value}, {Pin.ELEMENT.value} or null", value.value)
        return value

    @model_validator(mode="after")
    def _together(self) -> "LadderOptions":
        if self.target_rel is not None and self.max_repeats < self.min_repeats:
            raise RuleError(f"at least min_repeats ({self.min_repeats})", self.max_repeats, "max_repeats")
        return self

    @field_serializer("rungs")
    def _rung_names(self, rungs: list[Rung]) -> list[str]:
        return [r.name for r in rungs]

    # -- the three ways in -------------------------------------------------------------------------

    @model_validator(mode="after")
    def _new_run(self, info: ValidationInfo) -> "LadderOptions":
        """A new run's flags (from_flags' validation context): what only they can contradict."""
        context = info.context or {}
        if "named" in context:
            self.check_flags(context["named"])
        if context.get("rows") is not None:
            self.check_files(context["rows"])
        return self

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any], rows: int | None = None) -> "LadderOptions":
        """The options from the flags given (argparse dests, or `l2attr.ladder`'s keyword arguments):
        what is not given is the command's default; every number, name, conflict and, with the
        workload's `rows`, the trace and hot files checked."""
        flags = dict(flags)
        for name, flag in LIST_FLAGS.items():
            value = flags.get(name)
            if isinstance(value, str) and not [w for w in value.split(",") if w.strip()]:
                raise UserError(f"{flag} {value!r}: give at least one name (or leave the flag out for the default)")
        if flags.get("trace") is not None:
            if flags.get("profiles"):
                raise UserError("give either --trace or --profiles, not both")
            flags["profiles"] = [Path(flags["trace"]).stem]
        elif isinstance(flags.get("profiles"), (list, tuple)):
            parse_profiles(",".join(map(str, flags["profiles"])))     # an unknown profile: one line
        if flags.get("repeats") is None:     # adaptive repeats within the limits given
            flags.update(repeats=ADAPTIVE.min_repeats, target_rel=flags.get("target_rel", ADAPTIVE.target_rel),
                         min_repeats=flags.get("min_repeats", ADAPTIVE.min_repeats),
                         max_seconds=flags.get("max_seconds", ADAPTIVE.max_seconds))
        else:                                # `--repeats N`: a fixed run (the reproduction's, the profiler child's)
            flags["target_rel"] = None
        if flags.get("cache_dir") is None:
            from l2attr.dlrm.workload.cache import default_cache_dir

            flags["cache_dir"] = default_cache_dir()
        named = not isinstance(flags.get("families"), str) or flags["families"].strip() != ALL_FAMILIES
        return validated(cls, nest(cls, flags), context={"named": "families" in flags and named, "rows": rows})

    @classmethod
    def from_manifest(cls, section: Mapping[str, Any]) -> "LadderOptions":
        """A run's options from its manifest's `measure` (the resumed run's); a field the model does
        not know is kept in `model_extra`, and the caller refuses it."""
        return validated(cls, section, flags=False)

    def manifest(self) -> dict[str, Any]:
        """The manifest's `measure`: the options, then the variants they declare."""
        return {**self.model_dump(mode="json"), "variants": [list(v.key) for v in self.variants]}

    def check_flags(self, named: bool) -> None:
        """What only a new run's flags can contradict: families without the rungs asked for (`named`:
        --family named them; under `all` a family without one is left out, said on stderr), a pin
        granularity no family has, extra cells outside the run's workloads."""
        import sys

        from l2attr.vocab import ConsumerCode

        asked = [r for r in self.rungs if r.consumer != ConsumerCode.TORCH]
        text = ",".join(r.name for r in self.rungs)
        if asked:
            kept = []
            for fam in self.families:
                if any(FAMILIES[fam].implements(r) for r in asked):
                    kept.append(fam)
                elif named:
                    raise UserError(f"--rungs {text}: the {fam.value} family implements none of them "
                                    f"(it has {', '.join(FAMILIES[fam].rungs or ())}); drop it from --family or "
                                    "add one")
                else:
                    print(f"l2attr ladder: the {fam.value} family implements none of --rungs {text}; it is left out",
                          file=sys.stderr)
            if not kept:
                raise UserError(f"--rungs {text}: no family implements them")
            self.families = kept
        if self.pin_granularity and not any(self.pin_granularity in FAMILIES[f].pins for f in self.families):
            raise UserError(f"--pin-granularity {self.pin_granularity.value}: the "
                            f"{'/'.join(f.value for f in self.families)} family pins per element only")
        extra = {p for _, p, _ in self.extras} - set(self.profiles)
        if extra and self.trace is not None:
            raise UserError(f"--extra-cell: with --trace the only workload is {self.profiles[0]!r}, not "
                            f"{', '.join(sorted(extra))}")
        if extra:
            parse_profiles(",".join(sorted(extra)))     # an unknown profile: one line

    def check_files(self, rows: int) -> None:
        """The trace and hot files parse, and their ids fit a table of `rows` (what the GPU run would
        read): before the GPU is looked for, so a bad file is found on any machine."""
        from l2attr.dlrm.workload.hotset import read_hot_file
        from l2attr.dlrm.workload.traces import read_trace

        if self.trace is not None:
            read_trace(self.trace, rows, self.drop_out_of_range)
        if self.hot is not None:
            read_hot_file(self.hot, rows)

    # -- what the run reads ------------------------------------------------------------------------

    @property
    def rule(self) -> AdaptiveRule | None:
        if self.target_rel is None:
            return None
        return AdaptiveRule(self.target_rel, self.min_repeats, self.max_repeats, self.max_seconds)

    @property
    def states(self) -> list[str]:
        return [ladder_state(s.strip()).value for s in self.l2_state.split(",") if s.strip()]

    @property
    def variants(self) -> list[Variant]:
        return plan_variants(self.families, self.rungs, self.pin_granularity)

    @property
    def extras(self) -> list[tuple[Variant, str, str]]:
        """The extra cells as (variant, profile, l2 state), the variant with this run's pin choice."""
        return [parse_extra_cell(text, self.pin_granularity) for text in self.extra_cells]

    @property
    def all_variants(self) -> list[Variant]:
        """What is compiled and checked: the variants, then those only an extra cell uses."""
        return list({v.key: v for v in [*self.variants, *(v for v, _, _ in self.extras)]}.values())
