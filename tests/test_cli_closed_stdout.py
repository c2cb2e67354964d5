"""A closed standard output (`l2attr step --show RUN >&-`, issue 52): Python starts with sys.stdout
None and the first print was an AttributeError traceback. Now: one line on stderr and exit 2 where
the command printed, a quiet exit 0 where it printed nothing, for every verb (cli.main)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from l2attr.cli import main

REPO = Path(__file__).resolve().parents[1]
RUN = REPO / "examples" / "steps" / "runs" / "20261201T201821Z-selfcheck-quarter-l2"
LINE = "standard output is closed, so what the command prints was lost (send it to /dev/null to discard it)"


def test_a_verb_that_prints_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["step", "--show", str(RUN)]) == 2
    assert capsys.readouterr().err == f"l2attr step: error: {LINE}\n"


def test_a_verb_that_prints_nothing_is_a_quiet_exit_0(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("l2attr.commands.report.run", lambda args: 0)
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["report", str(RUN)]) == 0
    assert capsys.readouterr().err == ""


def test_version_to_a_closed_stdout_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", None)
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 2 and capsys.readouterr().err == f"l2attr: error: {LINE}\n"


def test_the_real_process_with_fd_1_closed() -> None:
    """As a shell's `>&-` leaves it: fd 1 closed before the interpreter starts."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run([sys.executable, "-m", "l2attr", "step", "--show", str(RUN)], env=env, text=True,
                         stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1), timeout=120)
    assert (res.returncode, res.stderr) == (2, f"l2attr step: error: {LINE}\n")


def test_a_stdout_open_for_reading_only_says_it_cannot_write() -> None:
    """`l2attr step --show RUN 1</dev/null`: EBADF at the flush was the bare "Bad file descriptor"."""
    import errno

    from l2attr.cli import os_error_text

    assert os_error_text(OSError(errno.EBADF, "Bad file descriptor")) == "cannot write the output (Bad file descriptor)"
