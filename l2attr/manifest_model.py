"""The manifest as its readers take it (issue 52, closed models): per run kind, a pydantic model of every
section a reader outside the model layer uses; each field typed (numbers finite and in range, counts
whole, lists typed). A field a reader uses is declared here; one the model does not know is kept
(`extra="allow"`), named by `unknown()` (the provenance table prints it) and never used.

Two ways in. `typed(manifest)`: a manifest check_manifest has seen, its damage said there (strict: the
one-line error; --allow-partial: a note), so a field that breaks its rule reads as absent here, as
manifest_fields.typed_ranges does. `typed(manifest, source)`: one nothing has checked (a worker's scratch
run, a timer comparison's inputs): a field that breaks its rule is one UserError line. check_manifest
holds every run to these models too (`check_model`), so a field's rule is said once.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, create_model

from l2attr.errors import UserError
from l2attr.vocab import Command, StepMode

Seconds = Annotated[float, Field(allow_inf_nan=False, ge=0, le=1e9)]
# a count a writer may record as a float (PM sampling's pass groups: 1.0): whole-valued, finite
Count = Annotated[float, Field(allow_inf_nan=False, ge=0, le=10 ** 12, multiple_of=1)]
Whole = Annotated[int, Field(ge=0, le=10 ** 18)]
Text = Annotated[str, Field(min_length=1)]
Bandwidth = Annotated[float, Field(allow_inf_nan=False, gt=0, le=1e9)]
Facts = dict[str, Any]          # an object a writer records whole and no reader takes apart
WHOLE_OBJECT = "an object (recorded whole: no reader takes it apart) or null"


def rule(text: str) -> Any:
    """A field's rule in words where its type's own (typed.rule_text: "an object") says too little."""
    return Field(None, json_schema_extra={"rule": text})


class Section(BaseModel):
    """A section as recorded: JSON types as written (strict: "3" is not 3, true is not 1), the
    fields no model names kept."""
    model_config = ConfigDict(extra="allow", strict=True, frozen=True)


class Gpu(Section):
    name: str | None = None
    uuid: str | None = None
    l2_bytes: Whole | None = rule("a whole number of bytes >= 0 or null")


class Measure(Section):
    """What readers take of a ladder's `measure` as recorded (its options model, LadderOptions, holds
    the settings to their rules; an old run's unrecorded field reads as None here, not as today's
    default)."""
    timer: str | None = None
    spin_us: Annotated[float, Field(allow_inf_nan=False, ge=0, le=1e6)] | None = None
    variants: list[list[str]] | None = None
    profiles: list[str] | None = None
    l2_state: str | None = None
    trace: str | None = None
    target_rel: Annotated[float, Field(allow_inf_nan=False, gt=0, lt=1)] | None = None
    repeats: Annotated[int, Field(ge=1, le=10 ** 9)] | None = None
    max_repeats: Annotated[int, Field(ge=1, le=10 ** 9)] | None = None


class Adaptive(Section):
    target_rel: Annotated[float, Field(allow_inf_nan=False, gt=0, le=1e6)] | None = rule("a finite number > 0 or null")


class Passes(Section):
    kernels: Whole | None = None


class JobRecord(Section):
    condition: str | None = None


class Range(Section):
    range: Text | None = None
    instances: Count | None = None
    untimed: Count | None = None
    pass_groups: Count | None = None


def texts(*names: str) -> dict[str, Any]:       # fields of free text (absent or a string), for create_model
    return {k: (str | None, None) for k in names}


class Manifest(create_model("Run", __base__=Section, **texts("status", "error", "created_utc"))):  # type: ignore[misc]
    """Every kind: the fields a reader of any run takes."""
    kind: Text | None = None
    warnings: list[str] | None = None      # with status, error and created_utc: what the study's caveats read
    settings_warnings: list[str] | None = None
    config: Facts | None = rule("an object (the workload; its fields: the config rule) or null")
    gpu: Gpu | None = None
    versions: dict[str, str | None] | None = rule("an object: package -> a version string or null")
    timings: dict[str, Seconds] | None = rule("an object: phase -> a finite number of seconds >= 0")
    adaptive: Adaptive | None = None
    gpus: dict[str, Facts] | None = rule("an object: GPU UUID -> its facts (an object), or null")  # distribute/record.py
    hbm_copy_GBps: Bandwidth | None = None
    hbm_read_GBps: Bandwidth | None = None
    l2_read_GBps: Bandwidth | None = None


class LadderManifest(Manifest):
    measure: Measure | None = None
    unit_timings: dict[str, dict[str, Seconds]] | None = rule(
        "an object: unit -> (phase -> a finite number of seconds >= 0), or null")
    missing_units: dict[str, str] | None = rule("an object: unit -> why it was not measured, or null")
    workloads: dict[str, Facts] | None = rule("an object: profile -> its workload (an object), or null")
    real_data_checks: dict[str, Annotated[float, Field(allow_inf_nan=False, ge=0)]] | None = rule(
        "an object: variant:profile -> a finite relative error >= 0, or null")
    checks: dict[str, Facts] | None = rule("an object: variant -> its checks (an object), or null")
    variants: dict[str, Facts] | None = rule("an object: variant -> its compiled kernels (an object), or null")
    ptxas: Facts | None = rule(WHOLE_OBJECT)
    kernel_cache: Facts | None = rule(WHOLE_OBJECT)
    head_start: bool | None = None
    telemetry: str | None = None
    repeat_start_state: str | None = None
    startup_ages_s: dict[str, Seconds] | None = rule("an object: stage -> a finite number of seconds >= 0")


class ProfileManifest(Manifest):
    control: Facts | None = rule("an object (the control's inputs) or null (no control run)")
    jobs: list[JobRecord] | None = None
    replayer_passes: dict[str, Passes | Whole] | None = rule("an object: report -> a whole number of kernels >= 0")
    metrics: list[str] | None = None
    metrics_collected: list[str] | None = None
    derived_metrics: list[str] | None = None
    profiles: list[str] | None = None
    variants: dict[str, Facts] | None = rule("an object: variant -> its compiled kernels (an object), or null")
    child_workload_overrides: dict[str, str] | None = rule("an object: flag -> a string")
    parent_s: dict[str, Seconds] | None = rule("an object: phase -> a finite number of seconds >= 0")
    missing_units: dict[str, str] | None = rule("an object: unit -> why it was not measured, or null")


class TimelineManifest(Manifest):
    method: str | None = None
    ranges: list[Range] | None = None
    variants: dict[str, Facts] | None = rule("an object: variant -> its compiled kernels (an object), or null")
    timeline_calls: Whole | None = rule("a whole number of calls >= 0 or null")


MODELS: dict[str, type[Manifest]] = {Command.LADDER.value: LadderManifest, Command.PROFILE.value: ProfileManifest,
                                     Command.TIMELINE.value: TimelineManifest}

# -- the step kind and the sweep kind --------------------------------------------------------------
# The step's `step` is its options' (steps/declare.py StepOptions takes its fields' types from here: one
# ">= 2"), as recorded: a field an old run lacks reads as None, not today's default.
WHOLE, LABEL = 10 ** 9, "a name of letters, digits, '.', '_' and '-'"    # WHOLE: a manifest's largest count
Repeats = Annotated[StrictInt, Field(ge=2, le=WHOLE)]    # a step's repeats, asked or done: the one ">= 2"
Rounds = Annotated[StrictInt, Field(ge=1, le=WHOLE)]
Steps = Annotated[StrictInt, Field(ge=0, le=WHOLE)]
Micros = list[Annotated[float, Field(allow_inf_nan=False, gt=0, le=1e9)]]
MICROS = "a list of finite numbers > 0 (µs) or null"
COUNTED = "a whole number >= 0 (the count step_kernels.csv implies, steps/check/counts.py) or null"


# `step.facts`: what the caller said of the step (the LLM grid's shape, the rung steps' series); a
# fact no reader takes is kept as written
FACT_SIZES = ("hidden_size", "intermediate_size", "heads", "kv_heads", "layers", "full_layers", "vocab",
              "experts", "active_experts", "batch", "tokens")
FACT_WORDS = ("family", "model", "phase", "series", "write_back_how", "host_cpu", "transformers", "compile",
              "rung", "label")
StepFacts: type[Section] = create_model("StepFacts", __base__=Section, **texts(*FACT_WORDS), **{
    k: (Annotated[int, Field(ge=0, le=10 ** 12)] | None, rule("a whole number >= 0 or null")) for k in FACT_SIZES})


class StepSection(Section):      # the manifest's `step`: StepOptions' written fields, as recorded
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9._-]+$")] | None = rule(LABEL + " or null")   # names.check_label
    repeats: Repeats | None = None
    repeats_asked: Repeats | None = None
    max_repeats: Steps | None = None
    rounds: Rounds | None = None
    warmup: Steps | None = None
    mode: Literal[tuple(StepMode.values())] | None = rule("one of " + ", ".join(StepMode.values()) + " or null")
    edges: Steps | None = None
    facts: StepFacts | None = None      # type: ignore[valid-type]
    function: str | None = None


class GraphCounts(Section):
    matched_kernels: Steps | None = rule(COUNTED)
    eager_kernels: Steps | None = rule(COUNTED)


class Surgery(create_model("SurgeryTexts", __base__=GraphCounts,   # type: ignore[misc]
                           **texts("natural", "write_back_missing", "control_missing", "rewarm_missing"))):
    graph_kernels: Steps | None = rule(COUNTED)
    call_us: Micros | None = rule(MICROS)
    torch_graph_us: Micros | None = rule(MICROS)
    eager_us: Micros | None = rule(MICROS)
    call_kernel_us: Micros | None = rule(MICROS + ", one per repeat")
    call_kernels: list[Annotated[StrictInt, Field(gt=0, le=WHOLE)]] | None = rule(
        "a list of whole numbers > 0 (kernels), one per repeat, or null")
    control_us: list[Annotated[float, Field(allow_inf_nan=False, ge=-2, le=1000)]] | None = rule(
        "a list of finite numbers of µs in [-2, 1000] or null")
    rewarm_unread: list[Steps] | None = rule("a list of kernel node indices (whole numbers >= 0) or null")
    arms: list[Text] | None = rule("a list of arm names or null")
    compiled: bool | None = None
    call_kernel_difference: Facts | None = rule(WHOLE_OBJECT)


Graph = create_model("Graph", __base__=GraphCounts, replay_kernels=(Steps | None, rule(COUNTED)),
                     capture_ops_same=(bool | None, None), natural=(Text | None, None), cold=(Text | None, None))


class StepManifest(create_model("StepTexts", __base__=Manifest, **texts(  # type: ignore[misc]
        "command", "status", "fallback", "edges_method", "edges_level", "edges_error", "kernel_edges_error"))):
    step: StepSection | None = None
    surgery: Surgery | None = None
    graph: Graph | None = None
    edges_kernel_level: bool | None = None
    step_ncu: Facts | None = rule(WHOLE_OBJECT)

    @property
    def mode(self) -> str | None:
        return self.step.mode if self.step is not None else None


SweepAdaptive = create_model("SweepAdaptive", __base__=Adaptive, min_repeats=(Rounds | None, None),
                             max_repeats=(Rounds | None, None))

class SweepSection(Section):     # the manifest's `sweep` as readers take it (SweepOptions reads it whole)
    axis: Text | None = None
    repeats: Rounds | None = None
    host_repeat: bool | None = None
    spin_us: Annotated[float, Field(allow_inf_nan=False, ge=0, le=1e6)] | None = None
    adaptive: SweepAdaptive | None = None
    hot_rows: list[Annotated[float, Field(allow_inf_nan=False, ge=0, le=1e18)]] | None = rule(
        "a list of hot-set sizes (numbers >= 0) or null")


# a sweep records the ladder's compile and check facts (sweep/measure/distribute.py SCRATCH_KEYS): their rules
LADDER_FACTS = {k: (LadderManifest.model_fields[k].annotation, LadderManifest.model_fields[k])
                for k in ("workloads", "variants", "checks", "real_data_checks", "unit_timings")}


class SweepManifest(create_model("SweepFacts", __base__=Manifest,  # type: ignore[misc]
                                 **LADDER_FACTS, **texts("command"))):
    sweep: SweepSection | None = None
    limits: dict[str, Whole] | None = rule("an object: limit -> a whole number of bytes >= 0")
    sweep_timings: dict[str, Seconds] | None = rule("an object: phase -> a finite number of seconds >= 0")
    persisting_setaside_bytes: Whole | None = None
    persisting_limit_before_bytes: Whole | None = None


MODELS.update({Command.STEP.value: StepManifest, Command.SWEEP.value: SweepManifest})


def model_of(kind: Any) -> type[Manifest]:
    return MODELS.get(kind, Manifest) if isinstance(kind, str) else Manifest


def typed(manifest: Mapping[str, Any], source: str | None = None, model: type[Manifest] | None = None) -> Any:
    """The manifest through its kind's model (above: `source` names a manifest nothing has checked);
    `model`: the kind's model a reader of one kind reads it by, whatever its `kind` says."""
    return _cleaned(manifest, source, model)[0]


def recorded(manifest: Mapping[str, Any], dotted: str, absent: Any = None, source: str | None = None) -> Any:
    """The value at a dotted path as recorded (its JSON form), `absent` where a part is missing or
    broke its model's rule (said by check_manifest): what a page prints and a writer copies whole."""
    node: Any = _cleaned(manifest, source)[1]
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return absent
        node = node[part]
    return node


def sections(manifest: Mapping[str, Any], names: tuple[str, ...], source: str | None = None) -> dict[str, Any]:
    """The named top-level sections the manifest records, as recorded (what a writer copies whole)."""
    data = _cleaned(manifest, source)[1]
    return {k: data[k] for k in names if k in data}


def _cleaned(manifest: Mapping[str, Any], source: str | None = None,
             model: type[Manifest] | None = None) -> tuple[Any, dict[str, Any]]:
    """(the model, the manifest less every field that broke its rule: itself when none did)."""
    model = model or model_of(manifest.get("kind"))
    try:
        return model.model_validate(manifest), dict(manifest)
    except ValidationError as exc:
        if source is not None:
            from l2attr.typed import problems

            path, rule, value = problems(exc, model)[0]
            raise UserError(f"{source}: {'.'.join(path)} must be {rule} (found {value!r})") from None
        errors = exc.errors()
    data = copy.deepcopy(dict(manifest))
    for _ in range(64):             # each round drops what broke its rule (a field, a list's element)
        for loc in sorted((tuple(e["loc"]) for e in errors), key=len, reverse=True):
            _drop(data, loc)
        try:
            return model.model_validate(data), data
        except ValidationError as exc:
            errors = exc.errors()
    return model(), {}  # pragma: no cover - every round drops at least one value


def _drop(data: Any, loc: tuple[Any, ...]) -> None:
    """Remove the value at a pydantic error's location (its union branch names left out)."""
    node, parent, last = data, None, None
    for part in loc:
        if isinstance(node, dict) and part in node:
            parent, last, node = node, part, node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            parent, last, node = node, part, node[part]
    if parent is not None:
        del parent[last]


def check_model(manifest: Mapping[str, Any], bad: Any, said: set[str]) -> None:
    """Each field that breaks its model's rule, through `bad(field, rule, value)`; a section the
    rule tables already named is not named twice."""
    model = model_of(manifest.get("kind"))
    try:
        model.model_validate(manifest)
    except ValidationError as exc:
        from l2attr.typed import problems

        for path, rule, value in problems(exc, model):
            if path and path[0] not in said:
                bad(".".join(path), rule, value)


def declared(kind: str) -> set[str]:
    """The dotted fields the kind's model declares (nested sections' fields under their name)."""
    from l2attr.typed import flat_fields

    return {".".join(p) for p, _ in flat_fields(model_of(kind))}


def unknown(manifest: Mapping[str, Any], known: set[str]) -> list[str]:
    """The top-level fields neither the kind's model nor `known` (the rule tables' fields) declares:
    kept, shown, never used."""
    extra = typed(manifest).model_extra or {}
    return sorted(k for k in extra if k not in known)



# -- the experiment kind (experiment/table.py, check.py: typed(manifest, model=ExperimentManifest)) --
class ExperimentDeclared(Section):     # the declaration as the run recorded it (experiment/declare.py)
    name: str | None = None
    baseline: str | None = None
    conditions: list[str]


class ExperimentManifest(Manifest):     # not in MODELS: check_manifest holds it to manifest_fields' rules
    experiment: ExperimentDeclared | None = rule("the declaration (an object, its conditions a list) or null")
