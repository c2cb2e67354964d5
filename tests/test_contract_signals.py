"""No temp file outlives a terminated command (issue 38: SIGTERM between a temp file's write and its
rename left a hidden 4.9 MB `.tmp` for good). SIGTERM and SIGINT unwind like Ctrl-C, so the write's
own cleanup runs; after SIGKILL the next write of the same file removes what the dead one left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from l2attr import atomic

SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from l2attr import atomic, cli
    # the child's own dispositions: a parent started with SIGINT ignored (a script's background
    # job) hands SIG_IGN on, and then Python installs no Ctrl-C handler and the kill did nothing
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.argv[3] == "cli":
        cli.terminate_as_interrupt()
    def write(fh):
        fh.write(b"x" * 4_000_000)
        os.kill(os.getpid(), getattr(signal, sys.argv[2]))
        fh.write(b"y")
    try:
        atomic.write_stream(Path(sys.argv[1]) / "table.csv", write)
    except KeyboardInterrupt:
        sys.exit(cli.EXIT_TERMINATED if sys.argv[2] == "SIGTERM" else cli.EXIT_INTERRUPTED)
""")


@pytest.mark.parametrize("sig, code", [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_mid_write_leaves_no_temp_file(tmp_path, sig, code):
    got = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), sig, "cli"], capture_output=True, text=True)
    assert got.returncode == code, got.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_child_sets_its_own_dispositions_whatever_it_inherits(tmp_path):
    """Issue 52: pytest started with SIGINT ignored (`trap '' INT`, a script's background job)
    failed the SIGINT case above: the child inherited SIG_IGN. Here it inherits SIG_IGN on purpose."""
    def ignore_both() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    got = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), "SIGINT", "cli"], capture_output=True,
                         text=True, preexec_fn=ignore_both)
    assert got.returncode == 130, got.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_console_script_handles_sigterm(tmp_path):
    """`l2attr ...` as a process: main() without argv installs the SIGTERM handler."""
    code = ("import signal, l2attr.cli as c; c.terminate_as_interrupt(); "
            "print(signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert out.strip() == "True"


def test_after_sigkill_the_next_write_removes_the_dead_writers_temp(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    stale = tmp_path / f".table.csv.{dead}.abc123.tmp"
    stale.write_bytes(b"x" * 1000)
    mine = tmp_path / f".table.csv.{os.getpid()}.zzz.tmp"      # a live writer's: kept
    mine.write_bytes(b"y")
    atomic.write_text(tmp_path / "table.csv", "a\n1\n")
    assert not stale.exists() and mine.exists()
    assert (tmp_path / "table.csv").read_text() == "a\n1\n"
