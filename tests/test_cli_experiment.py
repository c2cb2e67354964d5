"""`l2attr experiment` on a CPU: a target that fails is one line, `profile -- CMD` hands the whole
command on, bad numbers are refused before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from l2attr.cli import main


def test_a_failing_target_is_one_line(tmp_path: Path, capsys) -> None:
    script = tmp_path / "mine.py"
    script.write_text("raise RuntimeError('no GPU here')\n")
    assert main(["experiment", "time", f"{script}:make"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "RuntimeError: no GPU here" in err[0]


def test_a_target_that_is_no_experiment_is_one_line(tmp_path: Path, capsys) -> None:
    script = tmp_path / "mine.py"
    script.write_text("make = 3\n")
    assert main(["experiment", "time", f"{script}:make"]) == 2
    assert "is not an l2attr.Experiment" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--", "python", "my.py", "--x", "1"], ["--out", "R", "--", "python", "my.py", "--x", "1"]])
def test_profile_hands_the_whole_command_on(monkeypatch, argv) -> None:
    import l2attr.experiment.command as ex

    seen = {}
    monkeypatch.setattr(ex, "_profile_command", lambda args, command: seen.setdefault("cmd", command) and 0)
    main(["experiment", "profile", *argv])
    assert seen["cmd"] == ["python", "my.py", "--x", "1"]


def test_bad_numbers_are_refused(capsys) -> None:
    assert main(["experiment", "time", "x.py:y", "--repeats", "0"]) == 2
    assert "--repeats" in capsys.readouterr().err


def test_a_target_takes_its_options(monkeypatch) -> None:
    import l2attr.experiment.command as ex

    seen = {}
    monkeypatch.setattr(ex, "load_target", lambda t: (_ for _ in ()).throw(SystemExit(seen.setdefault("t", t))))
    with pytest.raises(SystemExit):
        main(["experiment", "profile", "mine.py:make", "--calls", "3"])
    assert seen["t"] == "mine.py:make"
