"""Flags are refused before the user's command runs or a GPU is looked for, by the ladder's rules
shared by every command (one line, exit 2); a target that ends itself or takes arguments is one
line too. This machine may have no GPU: a refusal that came after the GPU check would read "no
GPU" or "torch is not installed" here instead of the rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from l2attr.cli import main

LATE = ("no GPU", "torch is not installed", "nvidia-smi", "ncu not found", "not installed")


def _line(argv: list[str], capsys: pytest.CaptureFixture) -> str:
    assert main(argv) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1, err
    return err[0]


def _script(tmp: Path, body: str) -> Path:
    f = tmp / "target.py"
    f.write_text("import l2attr\n" + body)
    return f


@pytest.mark.parametrize("argv,says", [
    (["sweep", "window", "--profiles", ""], "--profiles ''"),
    (["sweep", "window", "--workers", "1", "--profile"], "--workers with --profile"),
    (["profile", "--workers", "1", "--timeline"], "--workers with --timeline"),
    (["profile", "--import", "x.ncu-rep", "--nvtx-include", "regex:l2attr@([/"], "not a valid regular expression"),
    (["profile", "--import", "x.ncu-rep", "--nvtx-include", ""], "give a range expression"),
    (["experiment", "profile", "nowhere.py:make", "--metrics", "bogus"], "unknown metric set 'bogus'"),
    (["experiment", "profile", "nowhere.py:make", "--chip", "zz100"], "unknown chip"),
])
def test_a_bad_flag_is_refused_before_any_work(argv: list[str], says: str, capsys: pytest.CaptureFixture) -> None:
    line = _line(argv, capsys)
    assert says in line and not any(w in line for w in LATE), line


def test_metrics_refusal_suggests_no_flag_experiment_lacks(capsys: pytest.CaptureFixture) -> None:
    from l2attr.experiment import command as experiment

    line = _line(["experiment", "profile", "nowhere.py:make", "--metrics", "bogus"], capsys)
    flags = {a for action in _parser(experiment)._actions for a in action.option_strings}
    for word in line.split():
        if word.startswith("--"):
            assert word.strip(".,;()'") in flags, (word, line)


def _parser(module):
    import argparse

    p = argparse.ArgumentParser()
    module.add_arguments(p)
    return p


def test_a_target_that_exits_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    f = _script(tmp_path, "import sys\nsys.exit(3)\n")
    line = _line(["experiment", "time", f"{f}:make"], capsys)
    assert "sys.exit(3)" in line and str(f) in line


def test_a_target_that_takes_arguments_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    f = _script(tmp_path, "def make(size):\n    return l2attr.Experiment('x', consumer=lambda: None)\n")
    line = _line(["experiment", "time", f"{f}:make"], capsys)
    assert "takes arguments (size)" in line


def test_a_factory_that_exits_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    f = _script(tmp_path, "import sys\ndef make():\n    sys.exit(4)\n")
    line = _line(["experiment", "time", f"{f}:make"], capsys)
    assert "make() called sys.exit(4)" in line


@pytest.mark.parametrize("flags,says", [
    (["--ncu", "--ncu-metrics", "bogus"], "unknown metric set 'bogus'"),
    (["--ncu", "--chip", "bogus"], "unknown chip 'bogus'"),
    (["--chip", "gh100"], "only apply with --ncu"),
])
def test_step_flags_are_checked_before_the_users_command(flags: list[str], says: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    ran = tmp_path / "ran"
    script = tmp_path / "step.py"
    script.write_text(f"open({str(ran)!r}, 'w').write('x')\n")
    import sys

    line = _line(["step", *flags, "--out", str(tmp_path / "runs"), "--", sys.executable, str(script)], capsys)
    assert says in line and not ran.exists()
