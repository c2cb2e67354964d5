"""What the CLI does when a command fails outside its own checks: Ctrl-C, a closed pipe, a full
disk, an allocation too large, a usage mistake. Each is one line (or silence) and a set status."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers_rundirs import write_ladder_run

from l2attr import cli
from l2attr.cli import main, os_error_text

REPO = Path(__file__).resolve().parents[1]


def _l2attr(*argv: str, **kw) -> subprocess.CompletedProcess:
    """The real entry point in a child: stdout/stderr as the OS sees them, not a capture."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "l2attr", *argv], env=env, text=True, **kw)


def _raise_in(monkeypatch: pytest.MonkeyPatch, module: str, exc: BaseException) -> None:
    def boom(args):
        raise exc
    path = cli.SUBCOMMANDS[module][0] if module in cli.SUBCOMMANDS else module   # a kind's dotted module path
    monkeypatch.setattr(f"{path if '.' in path else 'l2attr.commands.' + path}.run", boom)


@pytest.mark.parametrize("argv, expected", [
    (["ladder"], "interrupted; finished cells are on disk (use --resume RUN_DIR)"),
    (["profile", "--import", "r.ncu-rep"], "interrupted; nothing was written"),
    (["profile"], "interrupted; a run dir it started is incomplete (manifest status 'running'): "
                  "run the profile again"),
    (["report", "run"], "interrupted; no report was written"),
    (["traces", "stats", "--profile", "low"],
     "interrupted; files it had not yet reported as written were not written"),
    (["doctor"], "interrupted"),
])
def test_ctrl_c_message_fits_the_command(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                         argv: list[str], expected: str) -> None:
    _raise_in(monkeypatch, argv[0], KeyboardInterrupt())
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert err == f"l2attr {argv[0]}: {expected}\n"
    assert ("--resume" in err) == (argv[0] == "ladder")


def test_memory_error_is_one_line_with_numpys_estimate(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    _raise_in(monkeypatch, "traces", MemoryError("Unable to allocate 626. TiB for an array"))
    assert main(["traces", "stats", "--profile", "low"]) == 2
    err = capsys.readouterr().err
    assert err == ("l2attr traces: error: out of memory (Unable to allocate 626. TiB for an array); "
                   "try a smaller workload (--rows, --lookups)\n")


def test_os_error_names_the_file_or_the_output() -> None:
    assert os_error_text(PermissionError(errno.EACCES, "Permission denied", "/x/y")) == "/x/y: Permission denied"
    assert os_error_text(OSError(errno.ENOSPC, "No space left on device")) == \
        "cannot write the output (No space left on device)"
    assert os_error_text(OSError(errno.EINVAL, "Invalid argument")) == "Invalid argument"


def test_full_disk_on_stdout_is_one_line_and_exit_2() -> None:
    with open("/dev/full", "w") as full:
        res = _l2attr("traces", "stats", "--profile", "medium", "--rows", "5000", "--top-k", "10",
                      stdout=full, stderr=subprocess.PIPE)
    assert res.returncode == 2
    assert res.stderr == "l2attr traces: error: cannot write the output (No space left on device)\n"


@pytest.mark.parametrize("writer", ["rich", "plain"])
def test_closed_pipe_is_a_quiet_exit_141(tmp_path: Path, writer: str) -> None:
    if writer == "rich":     # rich's Console handles EPIPE itself
        argv = ["traces", "stats", "--profile", "medium", "--rows", "5000", "--top-k", "10"]
    else:                    # sys.stdout.write
        argv = ["report", str(write_ladder_run(tmp_path)), "--format", "md"]
    read_end, write_end = os.pipe()
    os.close(read_end)                       # the reader is gone before the first write
    try:
        res = _l2attr(*argv, stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert (res.returncode, res.stderr) == (cli.EXIT_BROKEN_PIPE, "")


def test_usage_mistake_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["traces", "gen", "--profile", "low", "--out", "x", "--rows", "many"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err == ("l2attr traces gen: error: argument --rows: invalid int value: 'many' "
                   "(see l2attr traces gen --help)\n")
