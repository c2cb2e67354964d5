"""The run-damage property, its mutations drawn from the declared fields (issue 52: each battery
found a field a reader used before any rule typed it; a list of hand-picked cases never ends it).

For every declared (kind, field): integrity/manifest_fields.py COMMON and BY_KIND, the readers'
model of the kind (manifest_model.py MODELS; a kind without one, the common Manifest), and for the
ladder its options model (dlrm/measure/options.py LadderOptions, under `measure.`), each of the
mutations missing / wrong type / NaN / inf / negative / empty / huge is applied to a copy of the
kind's committed run (tests/runs_mutate.py RUNS; surgery.* to a graph-surgery step with its
matched arm, eager loop and control; graph.* to a graph step). Its readers must refuse in one
line, answer as for the intact run, or say what is wrong (runs_mutate.judge): never a traceback,
never a silently different number. A field added to a table tomorrow is a pair tomorrow. The
exhaustive product is `slow`; the fast run takes SAMPLE of it (a fixed stride), and each failure
the product found is kept in KEPT, by name.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

import runs_mutate as rm
from l2attr.dlrm.measure.options import LadderOptions
from l2attr.integrity.manifest_fields import BY_KIND, COMMON
from l2attr.manifest_model import declared as model_fields
from l2attr.manifest_model import model_of
from l2attr.typed import flat_fields, rule_text

MUTATIONS = ("missing", "wrong type", "NaN", "inf", "negative", "empty", "huge")


def declared() -> list[tuple[str, str]]:
    """Every (kind, dotted field) a rule or a model declares, sorted."""
    pairs = set()
    for kind, table in BY_KIND.items():
        names = {*COMMON, *table, *model_fields(kind)}
        if kind == "ladder":
            names |= {"measure." + ".".join(p) for p, _ in flat_fields(LadderOptions)}
        pairs |= {(kind, f) for f in names}
    return sorted(pairs)


PAIRS = declared()
# the fields a kind's model declares as text: a wrong type of one the run lacks is a number, not "7"
TEXTS = {kind: {".".join(p) for p, info in flat_fields(model_of(kind)) if rule_text(info).startswith("a string")}
         for kind in BY_KIND}
CASES = [(k, f, m) for k, f in PAIRS for m in MUTATIONS]
SAMPLE = CASES[::97]     # the fast run's share: a stride across every kind
# the failures the product found, each fixed and kept by name (tests/test_step_losses.py says each in words)
KEPT = [("step", "surgery.eager_us", "huge"),          # 1e308 in the eager loop: the share's interval moved
        ("step", "surgery.control_us", "negative"),    # -5 µs: the activations' interval moved (+0.45 -> -0.37)
        ("step", "surgery.control_us", "huge"),        # 1e308: an overflow, the activations moved
        # the step model's fields (issue 52, closed models): a graph step's facts gone printed "cold = ?"
        # unsaid (now required: manifest_fields.GRAPH_FACTS), an empty one "natural = " (now Text); a
        # text field the run lacks took the string "7" as its "wrong type" (now a number: TEXTS)
        ("step", "graph.natural", "missing"), ("step", "graph.cold", "empty"), ("step", "graph.eager_kernels", "missing"),
        ("step", "fallback", "wrong type"), ("step", "step.facts.series", "wrong type")]


def run_of(kind: str, field: str) -> str:
    """The committed run a (kind, field) mutation is applied to."""
    if kind == "step":
        return "step-matched" if field.startswith("surgery") else "step-graph" if field.startswith("graph") else "step"
    return kind


def mutated(value: Any, how: str, text: bool = False) -> Any:
    """The field's value after `how` (a list of numbers takes NaN / inf / negative in its first element:
    the reader's own loop meets it; `text`: the field is declared a string, so a wrong type is a number)."""
    if how == "wrong type":
        return (7 if isinstance(value, str) or (value is None and text) else {"a": 1} if isinstance(value, list)
                else [1] if isinstance(value, dict) else "7")
    if how == "empty":
        return [] if isinstance(value, list) else {} if isinstance(value, dict) else ""
    bad = {"NaN": math.nan, "inf": math.inf, "negative": -5 if not isinstance(value, (int, float)) or isinstance(value, bool)
           else -abs(value) - 5, "huge": 1e308 if not isinstance(value, int) or isinstance(value, bool) else 10 ** 30}[how]
    if isinstance(value, list) and value and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        return [bad, *value[1:]]
    return bad


def paths(manifest: dict[str, Any], field: str) -> list[tuple[Any, ...]]:
    """The concrete paths a dotted field (`*`: every key, `x[]`: the first element) names in this
    manifest; a field the run lacks is one path made under its nearest present parent."""
    out: list[tuple[Any, ...]] = [()]
    for part in field.split("."):
        key, each = part.removesuffix("[]"), part.endswith("[]")
        nxt = []
        for p in out:
            node = rm._at(manifest, p) if _has(manifest, p) else None
            keys = (list(node) or ["x"]) if key == "*" and isinstance(node, dict) else ["x" if key == "*" else key]
            for k in keys:
                nxt.append((*p, k, 0) if each else (*p, k))
        out = nxt
    return out


def _has(manifest: Any, path: tuple[Any, ...]) -> bool:
    try:
        rm._at(manifest, path)
        return True
    except (KeyError, IndexError, TypeError):
        return False


def apply(manifest: dict[str, Any], field: str, how: str, text: bool = False) -> bool:
    """Apply the mutation in place; False when it changes nothing (a missing field removed)."""
    changed = False
    for path in paths(manifest, field):
        if how == "missing":
            if _has(manifest, path):
                rm.set_field(manifest, path, None, delete=True)
                changed = True
            continue
        node: Any = manifest
        for part in path[:-1]:          # make the parents a field the run lacks needs
            if isinstance(node, dict) and not isinstance(node.get(part), (dict, list)):
                node[part] = [] if isinstance(part, int) else {}
            if isinstance(node, list) and isinstance(part, int) and len(node) <= part:
                node.append({})
            node = node[part]
        last = path[-1]
        if isinstance(node, list) and isinstance(last, int) and len(node) <= last:
            node.append(None)
        old = node[last] if isinstance(node, list) or last in node else None
        node[last] = mutated(old, how, text)
        changed = True
    return changed


def check(kind: str, field: str, how: str, tmp: Path) -> None:
    """One case: refused in one line, the intact answer, or said (runs_mutate.judge)."""
    which = run_of(kind, field)
    _, want = rm.intact(which, tmp / "intact")
    run = tmp / "damaged" / (rm.RUNS.get(which) or rm.EXTRA[which]).name
    shutil.rmtree(run.parent, ignore_errors=True)
    run.parent.mkdir(parents=True)
    rm.copy_run(which, run.parent)
    manifest = json.loads((run / "manifest.json").read_text())
    if not apply(manifest, field, how, field in TEXTS.get(kind, set())):
        return
    (run / "manifest.json").write_text(json.dumps(manifest, indent=2))
    before = rm.digest(run)
    rm.judge(which, run, want, rm.run_readers(which, run), f"manifest {field} ({kind}) {how}")
    assert rm.digest(run) == before, f"{field} {how}: a reader changed a file of the run"


def test_every_declared_field_of_every_kind_is_a_pair(capsys: pytest.CaptureFixture[str]) -> None:
    """The pairs are the tables' and the model's fields, no fewer (printed: `pytest -s`)."""
    want = sum(len({*COMMON, *t, *model_fields(k)}) for k, t in BY_KIND.items()) + len(
        {"measure." + ".".join(p) for p, _ in flat_fields(LadderOptions)} - set(COMMON) - set(BY_KIND["ladder"])
        - model_fields("ladder"))
    with capsys.disabled():
        print(f"\n{len(PAIRS)} distinct (kind, field) pairs x {len(MUTATIONS)} mutations = {len(CASES)} cases")
    assert len(PAIRS) == want and {k for k, _ in PAIRS} == set(BY_KIND)
    assert len({run_of(k, f) for k, f in PAIRS} - set(rm.RUNS) - set(rm.EXTRA)) == 0


def test_a_field_added_tomorrow_is_covered_tomorrow(monkeypatch: pytest.MonkeyPatch) -> None:
    from l2attr.integrity import manifest_fields

    monkeypatch.setitem(manifest_fields.BY_KIND, "step", {**BY_KIND["step"], "step.tomorrow": manifest_fields.FLAG})
    assert ("step", "step.tomorrow") in declared()


@pytest.mark.parametrize("kind,field,how", SAMPLE, ids=[f"{k}:{f}:{m}" for k, f, m in SAMPLE])
def test_a_sample_of_declared_damage(kind: str, field: str, how: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    check(kind, field, how, tmp_path_factory.getbasetemp() / f"declared-{run_of(kind, field)}")


@pytest.mark.parametrize("kind,field,how", KEPT, ids=[f"{k}:{f}:{m}" for k, f, m in KEPT])
def test_kept_declared_damage(kind: str, field: str, how: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    check(kind, field, how, tmp_path_factory.getbasetemp() / f"declared-{run_of(kind, field)}")


@pytest.mark.parametrize("kind,field,how", CASES, ids=[f"{k}:{f}:{m}" for k, f, m in CASES])
def test_every_declared_damage(kind: str, field: str, how: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    check(kind, field, how, tmp_path_factory.getbasetemp() / f"declared-{run_of(kind, field)}")
