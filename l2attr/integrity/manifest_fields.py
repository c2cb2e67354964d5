"""The manifest's fields by type, per run kind: what each writer records, in which JSON form.

Why a table: a report prints manifest facts as they stand and the analysis takes settings from
them (an experiment's baseline, a step's repeats, a sweep's declared points); a field of another
JSON type was edited or damaged, and used to surface as a pandas TypeError, a KeyError or a
quietly different page. Each row is (dotted field, rule); `*` stands for every key of an object.
A field left out is the required-fields check's business (manifest.py); a present one must obey.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from l2attr.vocab import Command, Family, StepMode, TimerKind, CELL_CONDITIONS, condition_words

Rule = tuple[Callable[[Any], bool], str]
Bad = Callable[[str, str, Any], None]


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


TEXT: Rule = (lambda v: isinstance(v, str) and v.strip() != "", "a non-empty string")
ANY_TEXT: Rule = (lambda v: isinstance(v, str), "a string")
TEXT_OR_NULL: Rule = (lambda v: v is None or isinstance(v, str), "a string or null")
FLAG: Rule = (lambda v: isinstance(v, bool), "true or false")
OBJECT: Rule = (lambda v: isinstance(v, dict), "an object")
LIST: Rule = (lambda v: isinstance(v, list), "a list")
SCALAR: Rule = (lambda v: v is None or isinstance(v, (str, bool)) or _number(v),
                "a string, number, true/false or null")
SECONDS: Rule = (lambda v: _number(v) and v >= 0, "a finite number of seconds >= 0")
TOLERANCE: Rule = (lambda v: _number(v) and 0 <= v <= 1e6, "a finite number >= 0")
BYTES: Rule = (lambda v: _whole(v) and 0 <= v <= 10 ** 18, "a whole number of bytes >= 0")
NUMBER_OR_NULL: Rule = (lambda v: v is None or _number(v), "a finite number or null")


def whole(low: int) -> Rule:
    return (lambda v: _whole(v) and low <= v <= 10 ** 9, f"a whole number >= {low}")


def word(values: tuple[str, ...], null: bool = False) -> Rule:
    return ((lambda v: (null and v is None) or (isinstance(v, str) and v in values)),
            f"one of {', '.join(values)}" + (" or null" if null else ""))


def words(values: tuple[str, ...]) -> Rule:
    return ((lambda v: isinstance(v, list) and len(v) > 0 and len(set(map(str, v))) == len(v)
             and all(isinstance(x, str) and x in values for x in v)),
            f"a non-empty list of distinct words from {', '.join(values)}")


def texts(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


STRINGS: Rule = (texts, "a list of strings")
FINITES: Rule = (lambda v: isinstance(v, list) and all(_number(x) for x in v), "a list of finite numbers")
POSITIVES: Rule = (lambda v: isinstance(v, list) and all(_number(x) and 0 < x <= 1e9 for x in v),
                   "a list of finite numbers > 0 (µs, at most 1e9: 1000 s a call)")
# the flush's cost to one 1 MiB sum (a few µs long): a difference of two timings, so noise makes
# it negative (committed runs reach -0.5 µs), but a flush cannot make that kernel 2 µs faster, and
# no flush costs a small kernel 1 ms; past either end the split's activations would move silently
CONTROL: Rule = (lambda v: isinstance(v, list) and all(_number(x) and -2 <= x <= 1000 for x in v),
                 "a list of finite numbers of µs in [-2, 1000] (the flush's cost to one 1 MiB sum)")
NODES: Rule = (lambda v: isinstance(v, list) and all(_whole(x) and 0 <= x <= 10 ** 9 for x in v) and len(set(v)) == len(v),
               "a list of distinct kernel node indices (whole numbers >= 0)")

# every kind
COMMON: dict[str, Rule] = {
    "name": TEXT, "kind": TEXT, "command": TEXT, "status": TEXT_OR_NULL, "cwd": ANY_TEXT,
    "gpu.*": SCALAR, "software": OBJECT, "software.*": TEXT_OR_NULL,
    "versions": OBJECT, "versions.*": TEXT_OR_NULL, "timings": OBJECT, "timings.*": SECONDS,
    "persisting_reset": FLAG, "warnings": STRINGS,
}

def nullable(rules: dict[str, Rule]) -> dict[str, Rule]:
    """The same rules, null allowed (fields a writer records as null when not applicable)."""
    return {k: ((lambda v, ok=ok: v is None or ok(v)), rule if rule.endswith("null") else f"{rule} or null")
            for k, (ok, rule) in rules.items()}


NUMBER_OR_NULL_NONNEG: Rule = (lambda v: v is None or (_number(v) and v >= 0), "a finite number >= 0 or null")

MICROS_OR_NULL: Rule = (lambda v: v is None or (_number(v) and 0 <= v <= 1e15), "a finite number of µs >= 0 or null")
# a count a writer may record as a float (PM sampling's pass groups: 1.0): whole-valued, finite
COUNT: Rule = (lambda v: (_whole(v) or (_number(v) and float(v).is_integer())) and 0 <= v <= 10 ** 12,
               "a whole number >= 0")
POSITIVE: Rule = (lambda v: _number(v) and 0 < v <= 1e6, "a finite number > 0")
# the adaptive stopping rule a ladder, sweep or experiment records (measure/adaptive.py AdaptiveRule.manifest)
ADAPTIVE: dict[str, Rule] = {"": OBJECT, ".target_rel": POSITIVE, ".min_repeats": whole(1),
                             ".max_repeats": whole(1), ".max_seconds": POSITIVE}
FAMILIES: Rule = words(Family.values())


def adaptive(at: str, null: bool = False) -> dict[str, Rule]:
    rules = {f"{at}{k}": r for k, r in ADAPTIVE.items()}
    return {**rules, at: nullable({at: OBJECT})[at]} if null else rules


BY_KIND: dict[str, dict[str, Rule]] = {
    # the ladder's `measure` is its options model's (dlrm/measure/options.py LadderOptions; manifest.py)
    Command.LADDER.value: {
        "checks_memo": OBJECT, **adaptive("adaptive"),
        "distribute": OBJECT, "distribute.scheduler": TEXT_OR_NULL, "distribute.slots": STRINGS,
        "distribute.workers": whole(0), "gpus": OBJECT, "process_wall_s": SECONDS,
        "workloads_built_ahead": FLAG, "repeat_start_state": TEXT_OR_NULL, "telemetry": TEXT_OR_NULL,
    },
    Command.PROFILE.value: nullable({
        "app_replay_match": TEXT_OR_NULL, "app_replay_mode": TEXT_OR_NULL, "cache_control": TEXT_OR_NULL,
        "calls_per_cell": whole(0), "chip": TEXT_OR_NULL, "clock_control": TEXT_OR_NULL,
        "metric_set": TEXT_OR_NULL, "metric_validation": TEXT_OR_NULL, "metrics": STRINGS,
        "metrics_collected": STRINGS, "nvtx_include": STRINGS, "profiles": STRINGS, "rungs": STRINGS,
        "replay_mode": TEXT_OR_NULL, "settings_warnings": STRINGS, "wall_s_total": SECONDS,
        "jobs": LIST, "derived_metrics": STRINGS, "control": OBJECT, "ncu": OBJECT, "wall_s": OBJECT,
        "validity_control.hit_rate_label": TEXT_OR_NULL, "validity_control.hit_rate_metric": TEXT_OR_NULL,
        "validity_control.rule": TEXT_OR_NULL, "validity_control.ranges_separated": (
            lambda v: v is None or isinstance(v, bool), "true, false or null"),
    }),
    Command.EXPERIMENT.value: {
        "experiment": OBJECT, "experiment.name": TEXT,
        "experiment.conditions": words(condition_words(CELL_CONDITIONS)),
        "experiment.baseline": word(condition_words(CELL_CONDITIONS)),
        "experiment.calls": whole(1), "experiment.warmup": whole(0), "experiment.repeats": whole(1),
        "experiment.rtol": TOLERANCE, "experiment.atol": TOLERANCE,
        "experiment.timer": word(TimerKind.values()), "experiment.labels": OBJECT,
        "experiment.producer": TEXT_OR_NULL, "experiment.consumer": TEXT_OR_NULL,
        "experiment.reference": TEXT_OR_NULL, "experiment.setup": TEXT_OR_NULL,
        "timer": OBJECT, "timer.kind": word(TimerKind.values()),
        "timer.default_sm_clock_mhz": NUMBER_OR_NULL,
        "reference_check": OBJECT, "reference_check.reference": TEXT_OR_NULL,
        "reference_check.max_abs_error": NUMBER_OR_NULL, "reference_check.reference_max_abs": NUMBER_OR_NULL,
        "profile": OBJECT, "profile.chip": TEXT_OR_NULL, "profile.metrics": TEXT_OR_NULL,
        "profile.report": TEXT_OR_NULL, "profile.wall_s": SECONDS, "profile.command": STRINGS,
        "profile.ncu_argv": STRINGS, "profile.warnings": STRINGS, **adaptive("adaptive"),
        "experiment.until_rel_ci": nullable({"x": POSITIVE})["x"], "experiment.max_repeats": nullable({"x": whole(1)})["x"],
        "experiment.max_seconds": nullable({"x": POSITIVE})["x"],
    },
    # the step's `step` is its options model's (steps/declare.py StepOptions; manifest.py)
    Command.STEP.value: {
        "step": OBJECT, "cold": ANY_TEXT, "edges_method": ANY_TEXT,
        "surgery.eager_us": POSITIVES, "surgery.control_us": CONTROL, "surgery.call_us": POSITIVES,
        "surgery.torch_graph_us": POSITIVES, "surgery.rewarm_unread": NODES, "surgery.rewarm_nodes": whole(0),
        "surgery.rewarm_bytes": BYTES, "surgery.rounds": whole(1),
        # why a piece is missing: the headline says it (steps/analyse/split.py losses)
        "surgery.control_missing": TEXT, "surgery.rewarm_missing": TEXT, "surgery.write_back_missing": TEXT,
        "graph": OBJECT, "graph.*": SCALAR, "surgery": OBJECT, "surgery.compiled": FLAG,
        "surgery.arms": ((lambda v: isinstance(v, list) and len(v) > 0 and texts(v) and len(set(v)) == len(v)),
                         "a non-empty list of distinct arm names (the conditions step_kernels.csv holds; "
                         "absent: natural, cold, cold_dirty; other surgery keys are free)"), "surgery.call_kernel_difference": OBJECT, "step_ncu": OBJECT, "step_ncu.argv": OBJECT,
        "step_ncu.chip": TEXT_OR_NULL, "step_ncu.metrics": TEXT_OR_NULL,
    },
    Command.SWEEP.value: {
        "sweep.axis": TEXT, "sweep.families": FAMILIES, **adaptive("sweep.adaptive", null=True), "sweep.profiles": STRINGS,
        "sweep.repeats": whole(1), "sweep.host_repeat": FLAG, "sweep.spin_us": TOLERANCE,
        "sweep.orders": STRINGS, "sweep.nvtx_ranges": FLAG, "sweep.profile": FLAG,
        "sweep.cache_dir": TEXT_OR_NULL, "sweep.pin_granularity": TEXT_OR_NULL,
        "limits": OBJECT, "limits.*": BYTES, "persisting_setaside_bytes": BYTES,
        "persisting_limit_before_bytes": BYTES, "sweep_timings": OBJECT, "sweep_timings.*": SECONDS,
        "process_wall_s": SECONDS, "profile_wall_s": SECONDS,
    },
    Command.TIMELINE.value: {
        "ranges": (lambda v: isinstance(v, list) and len(v) > 0 and all(isinstance(r, dict) for r in v),
                   "a non-empty list of ranges (objects: the call ranges the timeline holds)"),
        "ranges[].range": TEXT, "ranges[].workload": TEXT_OR_NULL, "ranges[].chip": TEXT_OR_NULL,
        "ranges[].span_us": MICROS_OR_NULL, "ranges[].duration_us": MICROS_OR_NULL,
        "ranges[].interval_ns": nullable({"x": (lambda v: _number(v) and 0 < v <= 1e12, "a finite number of ns > 0")})["x"],
        "ranges[].instances": COUNT, "ranges[].untimed": COUNT, "ranges[].pass_groups": nullable({"x": COUNT})["x"],
        "jobs": LIST, "method": ANY_TEXT, "chip": TEXT_OR_NULL, "family": TEXT_OR_NULL,
        "rung": TEXT_OR_NULL, "profile": TEXT_OR_NULL, "nsys": TEXT_OR_NULL, "wall_s": OBJECT,
        "wall_s.*": SECONDS,
    },
}


GRAPH_FACTS = ("natural", "cold", "eager_kernels")      # every graph step's writer records them


def typed_ranges(ranges: Any) -> list[dict[str, Any]]:
    """A timeline's ranges with each field that breaks its rule left out (what --allow-partial
    reads on: never "-5 µs", "nan µs" or a float() of a list in the page)."""
    table = {k.removeprefix("ranges[]."): r for k, r in BY_KIND[Command.TIMELINE.value].items()
             if k.startswith("ranges[].")}
    return [{k: v for k, v in r.items() if k not in table or table[k][0](v)}
            for r in (ranges if isinstance(ranges, list) else []) if isinstance(r, dict)]


def _values(manifest: dict[str, Any], dotted: str) -> list[tuple[str, Any]]:
    """(field, value) for each present field the dotted path (with `*`) names."""
    found: list[tuple[str, Any]] = [("", manifest)]
    for part in dotted.split("."):
        nxt = []
        key, each = part.removesuffix("[]"), part.endswith("[]")     # `x[]`: every element of the list x
        for name, node in found:
            if not isinstance(node, dict):
                continue
            keys = list(node) if key == "*" else [key] if key in node else []
            got = [(f"{name}.{k}" if name else str(k), node[k]) for k in keys]
            nxt.extend(((f"{n}[{i}]", x) for n, v in got if isinstance(v, list) for i, x in enumerate(v))
                       if each else got)
        found = nxt
    return found


def check_fields(manifest: dict[str, Any], bad: Bad, required: tuple[str, ...] = ()) -> None:
    """Each present field of the common table and of the manifest's kind obeys its rule; an
    experiment's baseline is one of its conditions (a declaration without its baseline). A null
    `required` field is left to the required-fields check (it says "missing")."""
    kind = manifest.get("kind")
    table = {**COMMON, **BY_KIND.get(str(kind), {})}
    wrong: set[str] = set()
    for dotted, (ok, rule) in table.items():
        parent = dotted.rsplit(".", 1)[0].replace("[]", "") if "." in dotted else None
        if parent is not None and any(parent == w or parent.startswith(w + ".") for w in wrong):
            continue        # its object is itself of the wrong type: said once
        for name, value in _values(manifest, dotted):
            if value is None and (name in required or name.split(".")[0] in required):
                continue
            if not ok(value):
                wrong.add(name)
                bad(name, rule, value)
    step = manifest.get("step")
    if kind == Command.STEP.value and isinstance(step, dict) and step.get("mode", StepMode.SURGERY) in StepMode.values():
        mode = step.get("mode")       # (a mode of another form: the options model says so, once)
        for facts in (StepMode.GRAPH.value, StepMode.SURGERY.value):     # each mode's facts: a field of its name
            recorded = isinstance(manifest.get(facts), dict)
            if recorded != (mode == facts) and (recorded or "mode" in step):
                bad("step.mode", f"{facts} exactly when the manifest records the {facts} facts ({facts})", mode)
                break
    graph = manifest.get("graph")
    if kind == Command.STEP.value and isinstance(graph, dict) and "graph" not in wrong:
        for key in GRAPH_FACTS:         # what a graph step's page prints of how its arms were made
            if key not in graph:
                bad(f"graph.{key}", "present in a graph step's facts (its page prints how the arms were made)", None)
    for at in ("adaptive", "sweep.adaptive"):
        rule = _values(manifest, at)
        if rule and isinstance(rule[0][1], dict) and not any(w == at or w.startswith(at + ".") for w in wrong):
            lo, hi = rule[0][1].get("min_repeats"), rule[0][1].get("max_repeats")
            if _whole(lo) and _whole(hi) and lo > hi:
                bad(f"{at}.max_repeats", f"at least {at}.min_repeats ({lo})", hi)
    decl = manifest.get("experiment")
    if kind == Command.EXPERIMENT.value and isinstance(decl, dict) and "experiment.conditions" not in wrong:
        conditions, baseline = decl.get("conditions"), decl.get("baseline")
        if isinstance(conditions, list) and "experiment.baseline" not in wrong and baseline not in conditions:
            bad("experiment.baseline", "one of the declared conditions (the comparand every verdict needs)",
                baseline)


def manifest_doc(required: Callable[[dict[str, Any]], tuple[str, ...]], checked: dict[str, str],
                 models: dict[str, dict[str, str]]) -> str:
    """docs/run-dirs.md's manifest section, made from these tables (tests/test_schema_readme.py
    holds the page to it): per kind, every typed field, its rule, and whether every writer of the
    kind records it (`required(manifest)`: integrity/manifest.py's required_fields); `checked`: the
    rules manifest.py states by hand (field -> rule); `models`: per kind, the rules of its options
    model's fields (typed.rules)."""
    out = []
    for kind in (Command.LADDER.value, Command.SWEEP.value, Command.PROFILE.value, Command.TIMELINE.value,
                 Command.EXPERIMENT.value, Command.STEP.value):
        need = required({"kind": kind, "schema_version": 2})
        table = {**{f: (None, checked.get(f, "present")) for f in need},
                 **{f: (None, r) for f, r in checked.items()       # a kind's own section only where it has it
                    if f.split(".")[0] in need or f.split(".")[0] not in ("measure", Command.SWEEP.value, "config")},
                 **{f: (r[0], f"{r[1]}; {checked[f]}" if f in checked else r[1])
                    for f, r in {**COMMON, **BY_KIND.get(kind, {}),
                                 **{f: (None, r) for f, r in models.get(kind, {}).items()}}.items()}}
        out += [f"**`{kind}`** manifest", "", "| field | rule | every writer records it |", "|---|---|---|"]
        for name in sorted(table, key=lambda f: (f not in need, f)):
            rule = table[name][1].replace("|", "\\|")
            out.append(f"| `{name}` | {rule} | {'yes' if name in need else ''} |")
        out.append("")
    return "\n".join(out)
