"""The manifest's typed contract on every path that reads one: `--resume` (which built
WorkloadConfig, Family and LadderOptions from whatever the manifest held), report, show and the
Python loaders; issue 38's battery found each case below a traceback or silent on main 2508830.

An intact run resumed on this CPU machine stops at the GPU check (its one line); a damaged one must
stop before, with one line naming manifest.json and the field.
"""

from __future__ import annotations

import json

import pytest
from runs_mutate import copy_run, read

from l2attr.errors import UserError


def manifest(run) -> dict:
    return json.loads((run / "manifest.json").read_text())


def save(run, m) -> None:
    (run / "manifest.json").write_text(json.dumps(m))


def one_line(argv, *needles):
    o = read(argv)
    assert o.code != 0 and "Traceback" not in o.err, o.err
    errors = [x for x in o.err.splitlines() if ": error: " in x]
    assert len(errors) == 1, o.err
    for n in needles:
        assert n in errors[0], errors[0]
    return errors[0]


RESUME = {"ladder": ["ladder", "--resume"], "sweep": ["sweep", "--resume"]}


def test_intact_runs_resume_as_far_as_the_gpu_check(tmp_path):
    for kind in RESUME:
        run = copy_run(kind, tmp_path / kind)
        line = one_line([*RESUME[kind], str(run)])
        assert "manifest.json" not in line       # the GPU (torch, a driver) is what stops it here


@pytest.mark.parametrize("kind, damage, field", [
    ("ladder", lambda m: m["config"].update(turbo=1), "config.turbo"),
    ("ladder", lambda m: m.pop("measure"), "measure"),
    ("ladder", lambda m: m["measure"].update(families=["turbo"]), "measure.families"),
    ("ladder", lambda m: m.update(config=[1, 2]), "config"),
    ("ladder", lambda m: m["measure"].update(warp_speed=True), "measure.warp_speed"),
    ("ladder", lambda m: m["measure"].update(rungs=["nope"]), "measure"),
    ("ladder", lambda m: m["measure"].update(shape={"bogus": 1}), "measure"),
    ("sweep", lambda m: m["config"].update(turbo=1), "config.turbo"),
    ("sweep", lambda m: m.pop("sweep"), "sweep"),
    ("sweep", lambda m: m["sweep"].update(families=["turbo"]), "sweep.families"),
    ("sweep", lambda m: m.update(config="big"), "config"),
    ("sweep", lambda m: m["sweep"].update(adaptive="yes"), "sweep.adaptive"),
    ("sweep", lambda m: m["sweep"].update(ks="many"), "sweep"),
])
def test_resume_refuses_a_damaged_manifest_before_building(tmp_path, kind, damage, field):
    run = copy_run(kind, tmp_path)
    m = manifest(run)
    damage(m)
    save(run, m)
    one_line([*RESUME[kind], str(run)], "manifest.json", field)


@pytest.mark.parametrize("damage, field", [
    (lambda m: m["sweep"].update(adaptive="yes"), "sweep.adaptive"),
    (lambda m: m["sweep"].update(adaptive={"target_rel": 0.01, "min_repeats": 5, "max_repeats": 2,
                                           "max_seconds": 1.0}), "sweep.adaptive.max_repeats"),
    (lambda m: m["sweep"].update(families=["turbo"]), "sweep.families"),
])
def test_sweep_manifest_types_on_report(tmp_path, damage, field):
    run = copy_run("sweep", tmp_path)
    m = manifest(run)
    damage(m)
    save(run, m)
    one_line(["report", str(run), "--format", "md", "-o", str(tmp_path / "o.md")], "manifest.json", field)


def test_experiment_adaptive_of_another_type_is_refused(tmp_path):
    from l2attr.experiment.result import ExperimentResult

    run = copy_run("experiment", tmp_path)
    m = manifest(run)
    m["adaptive"] = "yes"
    save(run, m)
    one_line(["experiment", "show", str(run)], "manifest.json", "adaptive")
    with pytest.raises(UserError, match="adaptive"):
        ExperimentResult.from_run(run)


@pytest.mark.parametrize("kind", ["step", "experiment", "timeline"])
def test_schema_version_1_of_a_kind_that_never_had_it_is_refused(tmp_path, kind):
    run = copy_run(kind, tmp_path)
    m = manifest(run)
    m["schema_version"] = 1
    save(run, m)
    one_line(["report", str(run), "--format", "md", "-o", str(tmp_path / "o.md")], "manifest.json",
             "schema_version")


@pytest.mark.parametrize("kind, path", [
    ("ladder", ("gpu", "name")), ("ladder", ("command",)), ("step", ("step", "name")),
    ("experiment", ("command",)), ("step", ("gpu", "name")),
])
def test_a_lone_surrogate_escape_is_refused(tmp_path, kind, path):
    """`"\\ud800"` decodes to a str no page or terminal can encode (UnicodeEncodeError tracebacks)."""
    run = copy_run(kind, tmp_path)
    text = (run / "manifest.json").read_text()
    m = json.loads(text)
    node = m
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = "x\ud800y"
    (run / "manifest.json").write_text(json.dumps(m))       # ensure_ascii: the escape as written
    assert "\\ud800" in (run / "manifest.json").read_text()
    argv = [["report", str(run), "--format", "md", "-o", str(tmp_path / "o.md")]]
    if kind in ("step", "experiment"):
        argv.append(["step", "--show", str(run)] if kind == "step" else ["experiment", "show", str(run)])
    for a in argv:
        one_line(a, "manifest.json", ".".join(path))


def test_an_experiment_resume_checks_the_typed_contract_before_anything_is_built(tmp_path):
    """Issue 38: `Experiment.time(resume=...)` reads the manifest through the same typed rules as
    every other read path, before a device or a declaration is touched."""
    import json
    import shutil
    from pathlib import Path

    import pytest

    import l2attr
    from l2attr.errors import UserError

    src = Path(__file__).resolve().parents[1] / "examples" / "experiments" / "20261201T163314Z-my-pair"
    run = tmp_path / src.name
    shutil.copytree(src, run)
    m = json.loads((run / "manifest.json").read_text())
    m["experiment"]["repeats"] = "many"
    (run / "manifest.json").write_text(json.dumps(m))

    class NoDevice:
        def __getattr__(self, name):
            raise AssertionError("the device was used before the manifest was checked")

    exp = l2attr.Experiment("my-pair", setup=lambda: None, producer=lambda t: None, consumer=lambda t: None)
    with pytest.raises(UserError, match="manifest.json"):
        exp.time(resume=run, device=NoDevice())
