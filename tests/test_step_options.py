"""The step's one options model (steps/declare.py StepOptions): its manifest section is written from
the model and read back as it, a damaged field is one line naming it and its rule (a bad flag or API
argument too), the command's flags are the model's fields, and a child of `l2attr step` receives a
file of the model's JSON, never JSON in its environment."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pandas as pd
import pytest

from l2attr.errors import Damage, UserError
from l2attr.integrity.manifest import check_manifest
from l2attr.steps.declare import StepOptions, node_bytes
from l2attr.steps.measure.record import ENV
from l2attr.typed import dests
from l2attr.vocab import Job, StepMode
from tests.conftest import EXAMPLES

RULE = StepOptions(name="decode", repeats=6, warmup=1, edges=0, facts={"series": "hf-grid", "batch": 8},
                   until_decided=True, max_repeats=24)


def _step_runs() -> list[Path]:
    return [p for p in sorted(EXAMPLES.rglob("manifest.json")) if json.loads(p.read_text()).get("kind") == "step"]


def test_the_section_is_written_from_the_model_and_read_back_as_it() -> None:
    ran = RULE.model_copy(update={"repeats": 18, "repeats_asked": 6, "rounds": 3, "mode": StepMode.SURGERY,
                                  "function": "__main__:decode"})
    written = json.loads(json.dumps(ran.manifest()))           # what manifest.json holds
    assert list(written) == ["name", "repeats", "repeats_asked", "max_repeats", "rounds", "warmup", "mode", "edges",
                             "facts", "function"]
    back = StepOptions.from_manifest(written)
    assert back.manifest() == written and back.model_extra == {} and back.mode == StepMode.SURGERY
    plain = StepOptions(name="x").model_copy(update={"mode": StepMode.EAGER, "function": "m:f"}).manifest()
    assert "repeats_asked" not in plain and "max_repeats" not in plain     # no stopping rule: none of its fields
    assert StepOptions.from_manifest(plain).manifest() == plain


def test_the_committed_step_runs_read_as_the_model() -> None:
    runs = _step_runs()
    assert len(runs) >= 10
    for p in runs:
        section = json.loads(p.read_text())["step"]
        opts = StepOptions.from_manifest(section)
        assert opts.model_extra == {}, p
        if "mode" in section:             # two runs from before the mode was recorded
            assert opts.manifest() == section, p


@pytest.mark.parametrize("field, value, line", [
    ("repeats", 1, "step.repeats must be a whole number >= 2 and <= 1000000000 (found 1)"),
    ("repeats", "10", "step.repeats must be a whole number >= 2"),
    ("repeats", 10.0, "step.repeats must be a whole number >= 2"),
    ("warmup", -1, "step.warmup must be a whole number >= 0"),
    ("edges", True, "step.edges must be a whole number >= 0"),
    ("name", "a b", "step.name must be a name of letters, digits, '.', '_' and '-' (found 'a b')"),
    ("name", None, "step.name must be a name of letters"),
    ("mode", "fast", "step.mode must be one of eager, graph, surgery (found 'fast')"),
    ("mode", None, "step.mode must be one of eager, graph, surgery (found None)"),
    ("facts", [], "step.facts must be an object (found [])"),
    ("function", 3, "step.function must be a string or null (found 3)"),
    ("repeats_asked", 1, "step.repeats_asked must be a whole number >= 2"),
    ("rounds", None, "step.rounds must be a whole number >= 1 and <= 1000000000 (found None)"),
    ("warp_speed", True, "step.warp_speed must be a setting of the step's options (name, repeats,"),
    ("eager", True, "step.eager must be absent (a setting of the run, not of its manifest"),
    ("program", "step-measure", "step.program must be absent"),
])
def test_a_damaged_field_is_one_line_naming_it_and_its_rule(tmp_path: Path, field, value, line) -> None:
    m = json.loads(_step_runs()[-1].read_text())
    m["step"][field] = value
    damage = Damage(allow_partial=True)
    check_manifest(m, tmp_path, damage, StepOptions)
    assert len(damage.messages) == 1 and line in damage.messages[0], damage.messages
    assert damage.messages[0].startswith(f"{tmp_path}/manifest.json: ")


def test_the_flags_are_the_models_fields() -> None:
    import argparse

    from l2attr.steps import command as step_cmd

    p = argparse.ArgumentParser()
    step_cmd.add_arguments(p)
    flags = {a.dest for a in p._actions}
    not_flags = {"repeats_asked", "rounds", "mode", "facts", "function", "program", "replays", "write_back"}
    assert dests(StepOptions) - not_flags <= flags and not (not_flags & flags)
    given = p.parse_args(["--repeats", "4", "--no-rewarm", "--", "python", "x.py"])
    opts = StepOptions.from_flags({k: v for k, v in vars(given).items() if k in dests(StepOptions)})
    assert (opts.repeats, opts.rewarm, opts.warmup) == (4, False, 3) and opts.model_fields_set == {"repeats", "rewarm"}


@pytest.mark.parametrize("argv, line", [
    (["--repeats", "1"], "--repeats must be a whole number >= 2 and <= 1000000000 (got 1)"),
    (["--warmup", "-1"], "--warmup must be a whole number >= 0"),
    (["--name", "a b"], "--name must be a name of letters"),
    (["--until-decided", "--repeats", "4"], "--max-repeats must be at least repeats (4) with until_decided (got 0)"),
])
def test_a_bad_flag_is_one_line(capsys, argv, line) -> None:
    from l2attr.cli import main

    assert main(["step", *argv, "--", "python", "x.py"]) == 2
    assert line in capsys.readouterr().err


@pytest.mark.parametrize("kw, line", [
    ({"repeats": 1}, "step: repeats must be a whole number >= 2 and <= 1000000000 (found 1)"),
    ({"eager": "yes"}, "step: eager must be true or false"),
    ({"name": ""}, "step: name must be a name of letters"),
    ({"write_back": "nowhere.csv"}, "nowhere.csv"),
    ({"write_back": [1, 2]}, "write_back must be a table with node and bytes columns"),
])
def test_a_bad_api_argument_is_one_line_before_the_gpu(kw, line) -> None:
    import l2attr

    with pytest.raises(UserError, match=None) as err:
        l2attr.step(lambda: None, **kw)
    assert line in str(err.value) and "\n" not in str(err.value)


def test_the_write_back_has_one_typed_form() -> None:
    table = pd.DataFrame({"node": [0, 1], "write_none_b": [5e6, 1.0], "write_all_b": [0.0, 2.0]})
    assert node_bytes(table) == {0: 5e6, 1: 0.0}                    # clipped at 0, as the matched arm reads it
    assert node_bytes(pd.DataFrame({"node": [1, 0], "bytes": [3, 4]})) == {1: 3.0, 0: 4.0}
    assert node_bytes({0: 0, 1: 2}) == {0: 0.0, 1: 2.0} and node_bytes(0) == 0.0 and node_bytes(None) is None
    for bad in (True, -1.0, float("nan"), {0: -1}, {"a": 1}, pd.DataFrame({"x": [1]})):
        with pytest.raises(UserError, match="write_back must be a table"):
            node_bytes(bad)


def test_the_child_receives_a_file_not_json(tmp_path: Path) -> None:
    """`l2attr step -- python script.py`: every variable the command adds names no JSON, and the
    one l2attr reads names a file the model validates, with the flags given and the run dir."""
    from l2attr.cli import main

    script, seen = tmp_path / "script.py", tmp_path / "seen.json"
    script.write_text("import json, os, sys\n"
                      f"env = dict(os.environ)\nopts = open(env[{ENV!r}]).read()\n"
                      f"json.dump({{'env': env, 'opts': opts}}, open({str(seen)!r}, 'w'))\n")
    assert main(["step", "--out", str(tmp_path / "runs"), "--repeats", "4", "--edges", "0", "--",
                 sys.executable, str(script)]) == 2          # the script writes no run: one line
    got = json.loads(seen.read_text())
    added = {k: v for k, v in got["env"].items() if os.environ.get(k) != v}
    assert set(added) == {ENV}
    for k, v in added.items():
        with pytest.raises(ValueError):
            json.loads(v)                # a path, not the options
    opts = StepOptions.from_child(_copy(tmp_path, got["opts"]), {"name": "marked"})
    assert (opts.repeats, opts.edges, opts.name, opts.program) == (4, 0, "marked", Job.STEP_MEASURE)
    assert opts.out == (tmp_path / "runs").resolve() and opts.warmup == 3


def _copy(tmp_path: Path, text: str) -> str:
    path = tmp_path / "copy.json"
    path.write_text(text)
    return str(path)


def test_an_ncu_child_is_told_its_program_in_a_file(tmp_path: Path) -> None:
    from l2attr.steps.measure.ncu import child_env

    env = child_env(tmp_path, 2, Job.STEP_GRAPH, 3)
    opts = StepOptions.from_child(env[ENV], {"name": "decode"})
    assert (opts.program, opts.warmup, opts.replays, opts.name) == (Job.STEP_GRAPH, 2, 3, "decode")
    Path(env[ENV]).write_text('{"program": "sweep"}')           # a profile job is no step's program
    with pytest.raises(UserError, match="program must be one of step-measure, step-ops, step-graph"):
        StepOptions.from_child(env[ENV], {})
    Path(env[ENV]).write_text('{"repeats": 2, "speed": 1}')
    with pytest.raises(UserError, match="no option speed"):
        StepOptions.from_child(env[ENV], {})


def test_the_api_shows_the_models_defaults() -> None:
    """The signatures' defaults are the model's (the 10 repeats written once, in the model)."""
    import inspect

    import l2attr.api as api

    for verb in (api.step, api.step_range):
        for name, p in inspect.signature(verb).parameters.items():
            if name in StepOptions.model_fields and name != "facts":
                assert p.default == StepOptions.model_fields[name].get_default(call_default_factory=True), (verb, name)
