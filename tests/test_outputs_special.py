"""Outputs are replaced (temp + rename) only where a regular file or nothing is; a device, FIFO
or /dev/stdout is written to, a link keeps being a link, a folder is refused (issue 20)."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from l2attr import atomic
from l2attr.cli import main


def _drain(fifo: Path, into: list[bytes]) -> threading.Thread:
    def read() -> None:
        with open(fifo, "rb") as fh:
            into.append(fh.read())
    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t


def test_a_fifo_is_written_to_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = _drain(fifo, got)
    atomic.write_text(fifo, "hello\n")
    reader.join(5)
    assert got == [b"hello\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]          # no temp file left


def test_dev_null_is_written_to_never_replaced() -> None:
    before = os.stat("/dev/null")
    atomic.write_text(Path("/dev/null"), "x" * 10_000)
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino and after.st_rdev == before.st_rdev


@pytest.mark.parametrize("argv", [
    ["traces", "gen", "--profile", "random", "--lookups", "1000", "--rows", "100000", "--out", "/dev/null"],
])
def test_cli_outputs_to_dev_null(argv: list[str]) -> None:
    ino = os.stat("/dev/null").st_ino
    assert main(argv) == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and os.stat("/dev/null").st_ino == ino


def test_traces_hot_into_a_fifo(tmp_path: Path) -> None:
    trace = tmp_path / "t.txt"
    trace.write_text("".join(f"{i % 50}\n" for i in range(500)))
    fifo = tmp_path / "hot.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = _drain(fifo, got)
    assert main(["traces", "hot", str(trace), "--top-k", "5", "--rows", "50", "--out", str(fifo)]) == 0
    reader.join(5)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and len(got[0].splitlines()) >= 5


def test_a_link_stays_a_link_and_its_target_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    atomic.write_text(link, "new")
    assert link.is_symlink() and target.read_text() == "new"


def test_a_regular_file_is_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("old")
    ino = path.stat().st_ino
    atomic.write_text(path, "new")
    assert path.read_text() == "new" and path.stat().st_ino != ino      # a new file renamed over it


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        atomic.write_text(tmp_path, "x")
    assert tmp_path.is_dir()


def test_dev_stdout_is_written_to(tmp_path: Path) -> None:
    """`-o /dev/stdout` with stdout redirected to a file: the bytes land in that file (no rename
    onto /proc/self/fd/1's target, no new file beside it)."""
    out = tmp_path / "captured.txt"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    saved = os.dup(1)
    try:
        os.dup2(fd, 1)
        atomic.write_text(Path("/dev/stdout"), "to stdout\n")
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(fd)
    assert out.read_text() == "to stdout\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["captured.txt"]


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_report_to_dev_null(tmp_path: Path, fmt: str) -> None:
    from helpers_rundirs import write_ladder_run

    ino = os.stat("/dev/null").st_ino
    assert main(["report", str(write_ladder_run(tmp_path)), "--format", fmt, "-o", "/dev/null"]) == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and os.stat("/dev/null").st_ino == ino


def test_every_replacing_write_and_append_is_flushed_to_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite makes atomic._fsync a no-op (tests/conftest.py); the library's own is os.fsync,
    and a replacing write and a journal append each call it once."""
    import subprocess
    import sys

    code = "import os, l2attr.atomic as a; raise SystemExit(0 if a._fsync is os.fsync else 1)"
    assert subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1]).returncode == 0
    calls: list[int] = []
    monkeypatch.setattr(atomic, "_fsync", calls.append)
    import pandas as pd

    atomic.write_text(tmp_path / "a.txt", "x")
    atomic.append_csv(tmp_path / "j.csv", pd.DataFrame({"a": [1]}))    # new: a replacing write
    atomic.append_csv(tmp_path / "j.csv", pd.DataFrame({"a": [2]}))    # the append
    assert len(calls) == 3 and (tmp_path / "j.csv").read_text() == "a\n1\n2\n"
