"""The step's options, one typed model: `l2attr step`'s flags (steps/command.py makes them from the
fields), `l2attr.step(...)`'s and `@l2attr.step_range(...)`'s keyword arguments, the manifest's `step`
section as written (`manifest()`) and as read (`from_manifest`, the contract integrity/manifest.py
holds a run to), and what a child of `l2attr step` receives: a file of the model's JSON whose path
is in the environment (`to_child`, `from_child`), its `program` saying what the child does.

Why one model: the default of 10 repeats and its ">= 2" were written in four places each, the
manifest's rules were a fifth list, and the child took a JSON string from the environment with
a `mode` key read as free text; a field added to one and not the others was a flag the manifest
refused, or a setting the child silently lost.
"""

from __future__ import annotations

import math
import numbers
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Union

from pydantic import (BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationInfo, field_validator,
                      model_validator)
from pydantic.fields import FieldInfo

from l2attr.errors import UserError
# the manifest fields' types: the readers' model of the `step` section (manifest_model.py StepSection) is typed by them
from l2attr.manifest_model import LABEL, WHOLE, Repeats, Rounds
from l2attr.names import check_label
from l2attr.steps.measure.record import ENV
from l2attr.typed import RuleError, nest, rule_text, validated
from l2attr.vocab import STEP_PROGRAMS, Command, Job, StepMode

if TYPE_CHECKING:
    import pandas as pd

CHILD_FILE = "step-{program}.json"     # one per child program: the file says what it is for
CHILD_LIMIT, CHILD_DEPTH = 1 << 20, 16     # the child's file: at most 1 MiB, nested at most 16 levels
CSV_LIMIT = 1 << 28                        # a write-back table: at most 256 MiB
NOT_OPTION = {"cli": False}
# the run's own facts in the section: absent where they do not apply, never null
RECORDED = {"mode": "one of " + ", ".join(StepMode.values()),
            "repeats_asked": rule_text(FieldInfo.from_annotation(Repeats)),
            "rounds": rule_text(FieldInfo.from_annotation(Rounds))}
RUN_ONLY = {"cli": False, "manifest": False}     # the child's instructions: neither a flag nor a manifest field

# The matched arm's input in its one typed form: per kernel node the bytes its natural run inherits
# dirty (node -> bytes), or one number of bytes for every node (0: a step known to leave nothing dirty).
NodeBytes = Union[dict[int, float], float]
# what a caller may give for it (node_bytes turns each into a NodeBytes, or says in one line why not)
WriteBackGiven = Union["pd.DataFrame", Mapping[int, float], float, str, Path, None]


class StepOptions(BaseModel):
    """How a step is measured and where it is written (its manifest's `step`)."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    # -- the manifest's `step`, in the order it is written -----------------------------------------
    name: str = Field(Command.STEP.value, json_schema_extra={"rule": LABEL},
                      description="run name (default: the step_range's name)")
    repeats: Repeats = Field(10, description="replays of each arm (natural and the cold arms), interleaved")
    repeats_asked: Repeats | None = Field(None, json_schema_extra={**NOT_OPTION, "rule": RECORDED["repeats_asked"]},
                                          description="with a stopping rule: the repeats asked per round "
                                                      "(repeats: those done)")
    max_repeats: StrictInt = Field(0, ge=0, le=WHOLE, description="with --until-decided: at most this many "
                                                                  "repeats in all")
    rounds: Rounds | None = Field(None, json_schema_extra={**NOT_OPTION, "rule": RECORDED["rounds"]},
                                     description="with a stopping rule: the rounds traced")
    warmup: StrictInt = Field(3, ge=0, le=WHOLE, description="warm-up steps")
    mode: StepMode | None = Field(None, json_schema_extra={**NOT_OPTION, "rule": RECORDED["mode"]},
                                  description="how the natural arm ran")
    edges: StrictInt = Field(5, ge=0, le=WHOLE, json_schema_extra={"metavar": "N"},
                             description="measure the top N producer -> consumer edges by selective eviction, in "
                                         "graph copies with one node in front of the consumer kernel (default: the "
                                         "step_range's, 5; 0: none)")
    facts: dict[str, Any] = Field(default_factory=dict, json_schema_extra=NOT_OPTION,
                                  description="the caller's facts about the step, kept beside the answer")
    function: str | None = Field(None, json_schema_extra=NOT_OPTION, description="module:qualname of the step")

    # -- how it runs (not in the manifest: the mode says which method ran) ---------------------------
    out: Path = Field(Path("runs"), json_schema_extra={"manifest": False}, description="run dirs go here")
    eager: StrictBool = Field(False, json_schema_extra={"manifest": False},
                              description="the per-op eager method (a flush before each op) instead of graph "
                                          "surgery (a flush before every kernel of the captured step)")
    keep_trace: StrictBool = Field(False, json_schema_extra={"manifest": False},
                                   description="also keep the profiler's trace (trace.json.gz) in the run dir")
    rewarm: StrictBool = Field(True, json_schema_extra={"manifest": False, "flag": "--no-rewarm", "negate": True},
                               description="skip the rewarmed arms (the flush's non-data cost per kernel node)")
    until_decided: StrictBool = Field(False, json_schema_extra={"manifest": False},
                                      description="trace --repeats more at a time until the activations' share of "
                                                  "the eager step is decided against the study's 0.65 %, at most "
                                                  "--max-repeats in all")
    program: Job = Field(Job.STEP_MEASURE, json_schema_extra={**RUN_ONLY, "rule": "one of " + ", ".join(STEP_PROGRAMS)},
                         description="what a child of `l2attr step` does")
    replays: StrictInt = Field(1, ge=1, le=WHOLE, json_schema_extra=RUN_ONLY,
                               description="an ncu-graph child: profiled replays per cache control")
    write_back: Path | None = Field(None, json_schema_extra=RUN_ONLY,
                                    description="a measuring child: the CSV of the write-back the command read")

    @field_validator("name")
    @classmethod
    def _label(cls, value: str) -> str:
        try:
            return check_label(value, "step name")
        except UserError:
            raise RuleError(LABEL, value) from None

    @field_validator("mode", "repeats_asked", "rounds", mode="before")
    @classmethod
    def _written(cls, value: Any, info: ValidationInfo) -> Any:
        """Absent is the default (a run without a stopping rule); a null no writer records."""
        if value is None:
            raise RuleError(RECORDED[str(info.field_name)], value)
        return value

    @field_validator("program")
    @classmethod
    def _program(cls, value: Job) -> Job:
        if value.value not in STEP_PROGRAMS:      # a profile run's job is no step's program
            raise RuleError("one of " + ", ".join(STEP_PROGRAMS), value.value)
        return value

    @model_validator(mode="after")
    def _budget(self) -> "StepOptions":
        if self.until_decided and self.max_repeats < self.repeats:
            raise RuleError(f"at least repeats ({self.repeats}) with until_decided", self.max_repeats, "max_repeats")
        return self

    # -- the ways in --------------------------------------------------------------------------------

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any]) -> "StepOptions":
        """The options from the flags given (argparse dests); an error names its flag."""
        return validated(cls, nest(cls, flags))

    @classmethod
    def from_api(cls, values: Mapping[str, Any], verb: str = Command.STEP.value) -> "StepOptions":
        """The options from `l2attr.step`'s or `step_range`'s keyword arguments: one line per error."""
        try:
            opts = validated(cls, values, flags=False)
        except UserError as exc:
            raise UserError(f"{verb}: {exc}") from None
        if opts.model_extra:
            raise UserError(f"{verb}: no option {', '.join(opts.model_extra)} (the options: "
                            f"{', '.join(cls.model_fields)})")
        return opts

    @classmethod
    def from_manifest(cls, section: Mapping[str, Any]) -> "StepOptions":
        """A run's options from its manifest's `step`; a field the model does not know is kept in
        `model_extra`, and the caller refuses it."""
        return validated(cls, section, flags=False)

    def manifest(self) -> dict[str, Any]:
        """The manifest's `step`: the fields a run records, the stopping rule's only where it ran."""
        keep = {k for k, f in type(self).model_fields.items()
                if (f.json_schema_extra or {}).get("manifest", True)}   # type: ignore[union-attr]
        if self.repeats_asked is None:
            keep -= {"repeats_asked", "max_repeats", "rounds"}
        return self.model_dump(mode="json", include=keep)

    # -- a child of `l2attr step` -----------------------------------------------------------------

    def to_child(self, folder: Path) -> dict[str, str]:
        """The child's environment: ENV names a file in `folder` holding the options set (the
        marked function's own arguments fill the rest), written atomically."""
        from l2attr import atomic

        path = Path(folder) / CHILD_FILE.format(program=self.program.value)
        atomic.write_text(path, self.model_dump_json(exclude_unset=True))
        return {ENV: str(path.resolve())}

    @classmethod
    def from_child(cls, path: str, defaults: Mapping[str, Any]) -> "StepOptions":
        """The options a child was given: the file ENV names, over `defaults` (its step_range's)."""
        from l2attr.safe_read import read_json_limited

        raw = read_json_limited(Path(path), CHILD_LIMIT, CHILD_DEPTH)
        if not isinstance(raw, dict):
            raise UserError(f"{path}: the step's options must be a JSON object, not {type(raw).__name__}")
        try:
            opts = validated(cls, {**defaults, **raw}, flags=False)
        except UserError as exc:
            raise UserError(f"{path}: {exc}") from None
        if opts.model_extra:
            raise UserError(f"{path}: no option {', '.join(opts.model_extra)} of the step")
        return opts


def node_bytes(value: Any) -> NodeBytes | None:
    """The matched arm's write-back in its one typed form, from what a caller gives: a table with
    `node` and `bytes` (or Nsight Compute's `write_none_b` and `write_all_b`, steps/measure/ncu.py `deltas`),
    a CSV file of one (the command's reading), a mapping node -> bytes, or one number of bytes for
    every node. None stays None (the answer is then the clean/dirty bracket); else one line."""
    import pandas as pd

    want = ("write_back must be a table with node and bytes columns (steps/measure/ncu.py deltas), a CSV file of one, "
            "a mapping node -> bytes or one number of bytes >= 0 for every node")
    if value is None:
        return None
    if isinstance(value, (str, Path)):
        from io import StringIO

        from l2attr.safe_read import read_text_limited

        try:                               # the command's reading (steps/command.py), a file it wrote
            value = pd.read_csv(StringIO(read_text_limited(Path(value), CSV_LIMIT)))
        except (ValueError, pd.errors.ParserError) as exc:
            raise UserError(f"write_back: {value}: not a CSV table ({str(exc).splitlines()[0]})") from None
    if isinstance(value, pd.DataFrame):
        w = value
        if "bytes" not in w.columns and {"write_none_b", "write_all_b"} <= set(w.columns):
            w = w.assign(bytes=(w["write_none_b"] - w["write_all_b"]).clip(lower=0))
        if not {"node", "bytes"} <= set(w.columns):
            raise UserError(f"{want}; the table has {', '.join(map(str, w.columns)) or 'no'} columns")
        value = dict(zip(w["node"].tolist(), w["bytes"].tolist()))
    if isinstance(value, Mapping):
        out: dict[int, float] = {}
        for k, v in value.items():
            if not (_count(k) and _bytes(v)):
                raise UserError(f"{want}; node {k!r} has {v!r}")
            out[int(k)] = float(v)
        return out
    if _bytes(value):
        return float(value)
    raise UserError(f"{want}, not {type(value).__name__}")


def _count(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, numbers.Real) and float(v).is_integer() and v >= 0


def _bytes(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, numbers.Real) and math.isfinite(v) and v >= 0
