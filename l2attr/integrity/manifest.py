"""The manifest's types: what every run kind's manifest.json must say, and in which form.

Why: the report prints the manifest's facts as they stand, so `tables: -12` became "-12 tables",
`rows: "many"` "many rows", a NaN bandwidth a NaN roofline and `created_utc: "yesterday"` an
undated run whose measurements lose to every dated one. A manifest is JSON written by l2attr;
a field of the wrong type was edited or damaged, and is refused like a damaged table row.
"""

from __future__ import annotations

import math
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import Any, Mapping

from l2attr.dlrm.config import WorkloadConfig
from l2attr.errors import Damage, UserError
from l2attr.integrity.manifest_fields import check_fields
from l2attr.manifest_model import check_model
from l2attr.vocab import Command, TimerKind, VALIDITY_VERDICTS

BANDWIDTHS = ("hbm_copy_GBps", "hbm_read_GBps", "l2_read_GBps")
# validity_control figures that must be numbers when present (analysis/control.py writes them)
CONTROL_NUMBERS = ("hit_rate_gain_points", "dram_read_reduction")
CONTROL_ARMS = ("after_pin", "after_flush", "after_reset")


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_iso_time(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


# What the writers of every run kind have always recorded (checked in git history back to the
# first ladder): rundir.run_manifest writes name and created_utc, each kind's writer kind, command
# and config. From schema version 2 on (the kernel families; every sweep is a version 2 run) every
# kind also records the software (versions.l2attr) and the GPU (gpu.name): the ladder and the sweep
# themselves, a profile or PM-timeline run from its children's manifests (profile/manifest.py
# child_facts). Version 1 profile runs predate child_facts, so versions and gpu are optional there.
# Left optional on purpose: versions.git_sha and versions.source_digest (null outside a git
# checkout, e.g. from a wheel), and everything of an nsys timeline beyond the base fields (its
# writer, nsys_timeline_manifest, starts no l2attr child whose facts it could copy).
REQUIRED_BASE = ("name", "created_utc", "kind", "command", "config")
REQUIRED_V2 = ("versions.l2attr", "gpu.name")
REQUIRED_BY_KIND = {Command.LADDER.value: ("measure",), Command.SWEEP.value: ("sweep",),
                    Command.TIMELINE.value: ("ranges",)}
REQUIRED_WHY = {"name": "the run's name", "created_utc": "when it was made: runs of the same cells are "
                "ordered by it", "kind": "what kind of run it is", "command": "the command line that made it",
                "config": "the workload's shape", "versions.l2attr": "the code that measured",
                "gpu.name": "the GPU it measured: runs of two GPUs are a comparison, not one study",
                "measure": "the ladder's settings and the cells it declares",
                "sweep": "the sweep's settings and the points it declares",
                "ranges": "the call ranges its timeline must hold"}


# The engine's kinds (experiment, step; experiment/measure.py, steps/measure/run.py) record no workload
# config; their software facts are under `software`, their declaration under their kind's name.
REQUIRED_ENGINE = ("name", "created_utc", "kind", "command", "software.l2attr", "gpu.name")
ENGINE_KINDS = (Command.EXPERIMENT.value, Command.STEP.value)
REQUIRED_WHY.update({"software.l2attr": REQUIRED_WHY["versions.l2attr"],
                     Command.EXPERIMENT.value: "the experiment's declaration (conditions, baseline)",
                     Command.STEP.value: "the step's settings (name, repeats, mode)"})


# what the engine's readers take from the declaration (the verdict's comparand, the step's name)
REQUIRED_DECLARATION = {Command.EXPERIMENT.value: ("experiment.name", "experiment.conditions", "experiment.baseline"),
                        Command.STEP.value: ("step.name", "step.repeats", "step.warmup")}
REQUIRED_WHY.update({f: "the declaration the report reads" for fs in REQUIRED_DECLARATION.values() for f in fs})


def required_fields(manifest: dict[str, Any]) -> tuple[str, ...]:
    """The dotted fields a run of this manifest's kind and schema version always records."""
    kind = manifest.get("kind")
    if kind in ENGINE_KINDS:
        return REQUIRED_ENGINE + (str(kind),) + REQUIRED_DECLARATION.get(str(kind), ())
    if kind == Command.TIMELINE and manifest.get("method") == "nsys":
        return REQUIRED_BASE
    out = REQUIRED_BASE + REQUIRED_BY_KIND.get(str(kind), ())
    if not (manifest.get("schema_version") == 1 and kind == Command.PROFILE):
        out += REQUIRED_V2
    return out


# run kind -> the manifest section its options model types (the model itself is the kind's: its
# loader hands it to check_manifest; only the ladder's, in the DLRM testbed below every kind, is known here)
SECTIONS = {Command.LADDER.value: "measure", Command.STEP.value: Command.STEP.value}


def _models(options: Mapping[str, Any] | None = None) -> dict[str, tuple[str, Any]]:
    """Per kind, the manifest section its options model is, and the model: the ladder's
    (dlrm/measure/options.py) and those `options` (kind -> model) hands in."""
    from l2attr.dlrm.measure.options import LadderOptions

    given = {Command.LADDER.value: LadderOptions, **(options or {})}
    return {kind: (SECTIONS[kind], model) for kind, model in given.items()}


def manifest_doc(options: Mapping[str, Any] | None = None) -> str:
    """The manifest section of docs/run-dirs.md (manifest_fields.manifest_doc over these rules and
    the options models' fields; `options`: each kind's model, kind -> model, as kinds.py holds them)."""
    from l2attr.integrity.manifest_fields import BY_KIND, COMMON
    from l2attr.integrity.manifest_fields import manifest_doc as doc
    from l2attr.manifest_model import model_of
    from l2attr.typed import flat_fields, rule_text, rules

    models = {kind: {f: r for f, r in rules(model, at).items() if _written(model, f)}
              for kind, (at, model) in _models(options).items()}
    models[Command.LADDER.value]["measure.variants"] = VARIANTS_RULE
    for kind in BY_KIND:        # the readers' models (manifest_model.py): the fields no table states
        stated = {*COMMON, *BY_KIND[kind], *CHECKED, *models.get(kind, {})}
        models.setdefault(kind, {}).update({f: rule_text(info) for f, info in (
            (".".join(p), info) for p, info in flat_fields(model_of(kind))) if f not in stated})
    return doc(required_fields, CHECKED, models)


def _written(model: Any, dotted: str) -> bool:
    """Whether a field of a model is part of its manifest section (a child's instructions are not)."""
    info = model.model_fields.get(dotted.split(".")[1])
    extra = info.json_schema_extra if info is not None and isinstance(info.json_schema_extra, dict) else {}
    return extra.get("manifest", True) is not False


def undeclared(manifest: dict[str, Any]) -> list[str]:
    """The top-level fields no rule or model of the run's kind declares: kept, shown (the provenance
    table names them), never read."""
    from l2attr.integrity.manifest_fields import BY_KIND, COMMON
    from l2attr.manifest_model import unknown

    kind = str(manifest.get("kind"))
    rows = (*COMMON, *BY_KIND.get(kind, {}), *required_fields(manifest), *CHECKED, SECTIONS.get(kind, ""))
    return unknown(manifest, {r.split(".")[0].split("[")[0] for r in rows})


VARIANTS_RULE = "a list of lists of strings (what the options declare; written beside them, never read back)"


def _check_options(manifest: dict[str, Any], bad: Any, damage: Damage, source: str, options: Any) -> None:
    """A ladder's `measure`, a step's `step`, through the kind's options model (dlrm/measure/options.py,
    or the one the kind's loader hands in: steps/declare.py's): each field's type and range, and a
    field the model does not know (kept, never used) named."""
    kind = str(manifest.get("kind"))
    models = _models({kind: options} if options is not None and kind in SECTIONS else None)
    if kind not in models:
        return
    at, model = models[kind]
    section = manifest.get(at)
    if not isinstance(section, dict):
        return
    from pydantic import ValidationError

    from l2attr.typed import extras, problems

    try:
        opts = model.model_validate(section)
    except ValidationError as exc:
        for path, rule, value in problems(exc, model):
            bad(".".join((at, *path)), rule, value)
        return
    except UserError as exc:          # a name no run declares (a rung, a family's pin)
        damage.found(f"{source}: {at}: {exc}")
        return
    known = [f for f in model.model_fields if _written(model, f"{at}.{f}")]
    for name, value in extras(opts, at).items():
        bad(name, f"a setting of the {kind}'s options (" + ", ".join(known) + ")", value)
    if kind == Command.STEP.value:          # what only a run of the model records: refused when present
        for name in model.model_fields:
            if name in section and not _written(model, f"{at}.{name}"):
                bad(f"{at}.{name}", f"absent (a setting of the run, not of its manifest: {', '.join(known)})",
                    section[name])


SPIN_RULE = "present (the head start a spin timer's samples are judged by; every spin run records it)"

# the rules check_manifest states by hand (beside manifest_fields' tables), for the docs
CHECKED = {
    "schema_version": "1 or 2 (1: a ladder or profile run written before kernel families)",
    "created_utc": "an ISO 8601 time (when the run was made)",
    "config": "an object: every field of the workload (WorkloadConfig), no other",
    "gpu.name": "a non-empty string (the GPU the run measured)",
    "measure": "an object (the ladder's settings)", "sweep": "an object (the sweep's settings)",
    "measure.spin_us": "in a ladder run whose kernel timer spins (measure.timer not blocking): " + SPIN_RULE,
    "measure.timer": "in a ladder run whose samples.csv has timer_discard: present, not null (every writer of "
                     "that column records its kernel timer; integrity/runs.py check_timer_named)",
    **{k: "a finite number > 0 (GB/s)" for k in BANDWIDTHS},
    "validity_control.verdict": "one of " + ", ".join((*VALIDITY_VERDICTS, "skipped")),
    "replayer_passes": "an object: report -> a whole number of kernels >= 0",
    "software.l2attr": "a string (the code that measured)", "versions.l2attr": "a string (the code that measured)",
    "(any string)": "text without a lone surrogate escape (\\ud800)",
}


def _lookup(manifest: dict[str, Any], dotted: str) -> Any:
    value: Any = manifest
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def check_manifest(manifest: dict[str, Any], path: Path, damage: Damage | None = None, options: Any = None) -> None:
    """Every typed field of a run's manifest (any kind); each wrong one through `damage`. `options`:
    the kind's options model, from the kind's loader (steps/table.py: StepOptions); the ladder's is
    known here."""
    from l2attr.errors import STRICT

    damage = damage or STRICT
    source = f"{path}/manifest.json"

    said: set[str] = set()

    def bad(field: str, rule: str, value: Any) -> None:
        said.add(field.split(".")[0])
        damage.found(f"{source}: {field} must be {rule} (found {value!r})")

    check_fields(manifest, bad, required_fields(manifest))
    _check_options(manifest, bad, damage, source, options)
    config = manifest.get("config")
    if isinstance(config, dict):
        known = {f.name for f in fields(WorkloadConfig)}
        shape = ("tables", "rows", "dim", "batch_size", "pooling")
        # every field of the workload from schema 2 on (each writer records cfg.to_dict())
        for name in shape if manifest.get("schema_version") == 1 else sorted(known):
            if name not in config:
                bad(f"config.{name}", "present (the workload's shape)", None)
        for name in sorted(set(map(str, config)) - known):     # every writer records cfg.to_dict()
            bad(f"config.{name}", "a field of the workload (" + ", ".join(sorted(known)) + ")", config[name])
        try:
            WorkloadConfig(**{k: v for k, v in config.items() if k in known})
        except UserError as exc:
            damage.found(f"{source}: {exc}")
        except TypeError as exc:   # pragma: no cover - a field WorkloadConfig does not take
            damage.found(f"{source}: config: {exc}")
    # fields outside required_fields may be left out (shown as "unknown"); one present in another
    # form was edited or damaged
    if "created_utc" in manifest and not is_iso_time(manifest["created_utc"]):
        bad("created_utc", "an ISO 8601 time (when the run was made)", manifest["created_utc"])
    if "gpu" in manifest:
        gpu = manifest.get("gpu")
        name = gpu.get("name") if isinstance(gpu, dict) else None
        if not (isinstance(name, str) and name.strip()) and not (isinstance(gpu, dict) and "name" not in gpu):
            bad("gpu.name", "a non-empty string (the GPU the run measured)", name if isinstance(gpu, dict) else gpu)
    if "config" in manifest and not isinstance(config, dict) and manifest.get("kind") not in ENGINE_KINDS:
        bad("config", "an object (the workload's shape)", config)
    if "measure" in manifest and not isinstance(manifest["measure"], dict):
        bad("measure", "an object (the ladder's settings)", manifest["measure"])
    elif (manifest.get("kind") == Command.LADDER.value and isinstance(manifest.get("measure"), dict)
          and manifest["measure"].get("timer") != TimerKind.BLOCKING.value and "spin_us" not in manifest["measure"]):
        bad("measure.spin_us", SPIN_RULE, None)   # the report would print a 0 µs head start, the caveat none
    if "sweep" in manifest and not isinstance(manifest["sweep"], dict):
        bad("sweep", "an object (the sweep's settings)", manifest["sweep"])
    for key in BANDWIDTHS:
        value = manifest.get(key)
        if value is not None and not (is_number(value) and value > 0):
            bad(key, "a finite number > 0 (GB/s)", value)
    _check_control(manifest.get("validity_control"), bad)
    _check_passes(manifest.get("replayer_passes"), bad)
    check_model(manifest, bad, set(said))      # the readers' models (manifest_model.py), each field once
    for field_name in required_fields(manifest):
        if field_name.split(".")[0] in said:
            continue    # present in another form: said above
        if _lookup(manifest, field_name) is None:
            damage.found(f"{source}: {field_name} is missing; every {manifest.get('kind')} run's writer "
                         f"records it ({REQUIRED_WHY[field_name]})")


def _check_control(vc: Any, bad: Any) -> None:
    """The validity control's figures are printed as percentages: "high %" is not one."""
    if vc is None:
        return
    if not isinstance(vc, dict):
        bad("validity_control", "an object", vc)
        return
    verdict = vc.get("verdict")
    if verdict not in (*VALIDITY_VERDICTS, "skipped"):
        bad("validity_control.verdict", f"one of {', '.join(VALIDITY_VERDICTS)}, skipped", verdict)
    for key in CONTROL_NUMBERS:
        if key in vc and vc[key] is not None and not is_number(vc[key]):
            bad(f"validity_control.{key}", "a finite number", vc[key])
    for arm in CONTROL_ARMS:
        facts = vc.get(arm)
        if facts is None:
            continue
        if not isinstance(facts, dict):
            bad(f"validity_control.{arm}", "an object", facts)
            continue
        for key, value in facts.items():
            if value is not None and not is_number(value):
                bad(f"validity_control.{arm}.{key}", "a finite number", value)
            elif key == "calls" and value is not None and not (is_whole(value) and value >= 0):
                bad(f"validity_control.{arm}.calls", "a whole number >= 0", value)


def _check_passes(passes: Any, bad: Any) -> None:
    if passes is None:
        return
    if not isinstance(passes, dict):
        bad("replayer_passes", "an object (report -> kernel count)", passes)
        return
    for report, facts in passes.items():
        kernels = facts.get("kernels") if isinstance(facts, dict) else facts
        if not (is_whole(kernels) and kernels >= 0):
            bad(f"replayer_passes[{report}].kernels", "a whole number >= 0", kernels)
