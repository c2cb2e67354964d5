"""A step whose eager loop, control kernel or rewarmed arms are missing says so in its headline's
first words (issue 52: the eager loop gone moved "1.25 % of the eager step" to "10.31 % of the
graph replay" without a word), and damaged eager / control values are refused in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from l2attr.steps.analyse.answer import analyse_step
from l2attr.cli import main
from l2attr.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "examples" / "steps" / "hf_grid" / "20261205T185755Z-llama-decode-b1-kv512"


def edited(tmp_path: Path, **surgery: Any) -> Path:
    """A copy of a committed surgery run, its manifest's `surgery` section edited (None: removed)."""
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    m = json.loads((run / "manifest.json").read_text())
    for key, value in surgery.items():
        if value is None:
            m["surgery"].pop(key, None)
        else:
            m["surgery"][key] = value
    (run / "manifest.json").write_text(json.dumps(m))
    return run


def first_words(run: Path) -> str:
    return analyse_step(run).headline().splitlines()[0]


def test_the_committed_run_loses_nothing(tmp_path: Path) -> None:
    head = analyse_step(edited(tmp_path)).headline()
    assert "of the eager step" in head and "recorded" not in head


@pytest.mark.parametrize("eager", [None, []])
def test_the_eager_loop_removed_says_the_denominator_changed(tmp_path: Path, eager: Any) -> None:
    run = edited(tmp_path, eager_us=eager)
    assert first_words(run).startswith("no eager loop recorded: the share is of the graph replay")
    assert "of the graph replay" in analyse_step(run).headline()


@pytest.mark.parametrize("control", [{"control_us": []}, {"control_us": None},
                                     {"control_missing": "the control kernel's launches were not all traced"}])
def test_a_missing_control_is_said(tmp_path: Path, control: dict[str, Any]) -> None:
    assert first_words(edited(tmp_path, **control)).startswith("no control kernel recorded")


def test_control_missing_is_read_and_its_reason_said(tmp_path: Path) -> None:
    run = edited(tmp_path, control_us=[], control_missing="launches not all traced")
    assert "no control kernel recorded (launches not all traced)" in first_words(run)


def test_missing_rewarmed_arms_are_said(tmp_path: Path) -> None:
    run = edited(tmp_path, rewarm_missing="no kernel node's inputs could be read back (x)")
    assert first_words(run).startswith("no rewarmed arms recorded (no kernel node's inputs")


@pytest.mark.parametrize("field", ["eager_us", "control_us"])
@pytest.mark.parametrize("value", [["12.5", 13.0], [float("nan"), 13.0], [True, 13.0], 12.5, "12.5"],
                         ids=["string", "nan", "bool", "bare-number", "bare-string"])
def test_damaged_eager_or_control_values_are_refused_in_one_line(tmp_path: Path, field: str, value: Any,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run = edited(tmp_path, **{field: value})
    with pytest.raises(UserError, match=f"surgery.{field}"):
        analyse_step(run)
    assert main(["step", "--show", str(run)]) != 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "TypeError" not in err and f"surgery.{field}" in err


def test_a_negative_eager_time_is_refused_a_noisy_control_is_not(tmp_path: Path) -> None:
    """The control is a difference of two timings (committed runs hold -0.5 µs); the eager loop is a time."""
    with pytest.raises(UserError, match="surgery.eager_us"):
        analyse_step(edited(tmp_path, eager_us=[-5.0, 4000.0]))
    shutil.rmtree(tmp_path / RUN.name)
    assert "of the eager step" in analyse_step(edited(tmp_path, control_us=[-0.5] * 10)).headline()


@pytest.mark.parametrize("field,value", [("control_us", -5.06), ("control_us", 1e308), ("eager_us", 1e308)])
def test_a_reading_past_what_a_run_can_hold_is_refused(tmp_path: Path, field: str, value: float) -> None:
    """Kept from the declared-field property: a first control reading of -5 µs or 1e308, or an eager
    reading of 1e308, moved the activations' interval (+0.45 -> -0.37) or the eager share silently."""
    run = edited(tmp_path)
    m = json.loads((run / "manifest.json").read_text())
    m["surgery"][field] = [value, *m["surgery"][field][1:]]
    (run / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(UserError, match=f"surgery.{field} must be"):
        analyse_step(run)


@pytest.mark.parametrize("surgery,eager,replay,want", [
    ({"call_us": [1.0]}, False, True, "no eager loop recorded: the share is of the graph replay"),
    ({}, False, True, "no eager loop recorded (a graph of the user's own has no function to loop)"),
    ({"call_us": [1.0]}, False, False, "the share is of the step's kernel time (no replay timed either)"),
    ({"control_us": [1.0], "control_missing": "why"}, True, True, "no control kernel recorded (why)"),
    ({"control_us": [1.0], "rewarm_missing": "why"}, True, True, "no rewarmed arms recorded (why)"),
])
def test_each_loss_has_its_words(surgery: dict[str, Any], eager: bool, replay: bool, want: str) -> None:
    from l2attr.steps.analyse.split import losses

    assert want in losses({"surgery": surgery}, eager, replay, split_made=True)
    assert losses({"surgery": {"control_us": [1.0], "call_us": [1.0]}}, True, True, True) == ""


def test_a_committed_arm_of_steps_0_to_8_and_10_is_refused_in_one_line(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import pandas as pd

    run = edited(tmp_path)
    k = pd.read_csv(run / "step_kernels.csv.gz")
    k.loc[(k["condition"] == "cold") & (k["step"] == 9), "step"] = 10
    k.to_csv(run / "step_kernels.csv.gz", index=False)
    assert main(["step", "--show", str(run)]) != 0
    err = capsys.readouterr().err
    assert "step 10 is no repeat of 0..9" in err and len(err.strip().splitlines()) == 1 and "nan" not in err


@pytest.mark.parametrize("field", ["control_missing", "rewarm_missing", "write_back_missing"])
@pytest.mark.parametrize("value", [{"a": 1}, 5, ""])
def test_a_reason_that_is_no_text_is_refused(tmp_path: Path, field: str, value: Any) -> None:
    """The headline says the reason a piece is missing: an object or a number there was said as its key."""
    with pytest.raises(UserError, match=f"surgery.{field} must be a non-empty string"):
        analyse_step(edited(tmp_path, **{field: value}))


def test_by_hand_the_eager_loop_removed_moves_the_share_and_says_so() -> None:
    """Known by hand (tests/test_step_answer_cpu.py): 7 µs is 7.00 % of the 100 µs eager step, and
    17.50 % of the 40 µs replay once the eager loop is gone: the headline opens with the change."""
    from test_step_answer_cpu import MANIFEST, OPS, TIMES, _kernels

    from l2attr.steps.analyse.answer import answer

    whole = answer(_kernels(), OPS, TIMES, every_kernel=True, manifest=MANIFEST).headline("two")
    gone = {"surgery": {**MANIFEST["surgery"], "eager_us": [], "call_us": [1.0]}}
    head = answer(_kernels(), OPS, TIMES, every_kernel=True, manifest=gone).headline("two")
    assert whole.startswith("two: inter-kernel L2 reuse is worth 7.00 % of the eager step")
    assert head.splitlines()[0] == "no eager loop recorded: the share is of the graph replay."
    assert head.splitlines()[1].startswith("two: inter-kernel L2 reuse is worth 17.50 % of the graph replay")


def test_a_grid_never_counts_a_replay_share_as_the_eager_steps() -> None:
    """A grid step whose eager loop is gone had its activations' share of the replay (4 / 40 µs,
    "above") counted in the grid's line "as a share of the eager step": now it is left out, and said."""
    from dataclasses import replace

    from test_step_answer_cpu import MANIFEST, OPS, TIMES, _kernels

    from l2attr.steps.analyse.answer import answer
    from l2attr.steps.analyse.reading import grid_rows, grid_sentence

    whole = replace(answer(_kernels(), OPS, TIMES, every_kernel=True, manifest=MANIFEST), name="s1")
    gone = {"surgery": {**MANIFEST["surgery"], "eager_us": []}}
    lost = replace(answer(_kernels(), OPS, TIMES, every_kernel=True, manifest=gone), name="s2")
    rows = grid_rows([whole, lost])
    assert rows.loc[1, "activations_share"] == "n/a"
    assert rows.loc[1, "versus_study"] == "not measured (no eager loop recorded)"
    line = grid_sentence([whole, lost])
    assert ": 0 of 1 steps below it, 1 above it" in line and line.endswith(
        " 1 step(s) with no eager loop recorded are left out.")
