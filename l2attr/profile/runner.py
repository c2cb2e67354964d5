"""Run the child tools of a profile run (ncu, nsys) and keep what they said.

Nothing here prints: progress goes to a `Log` the command gives (l2attr.commands prints it),
so the same run can be shown on a console or collected by a test.
"""

from __future__ import annotations

import collections
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol, Sequence

from l2attr.errors import UserError
from l2attr.profile import ncu_errors


class Log(Protocol):
    """Where a run's progress goes."""

    def line(self, text: str) -> None:
        """One line of progress (a warning, the run dir)."""

    def rule(self, title: str) -> None:
        """A heading before a child tool's output."""

    def stream(self, text: str) -> None:
        """A child tool's own output as it comes, newlines kept."""


class QuietLog:
    """A Log whose line goes to `log`, the child tool's own output is not echoed."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log

    def line(self, text: str) -> None:
        self.log(text)

    def rule(self, title: str) -> None:
        pass

    def stream(self, text: str) -> None:
        pass


StreamRunner = Callable[[Sequence[str], Callable[[str], None]], int]


def stream_run(argv: Sequence[str], echo: Callable[[str], None]) -> int:
    """Run a command, echoing its merged stdout/stderr line by line as it comes."""
    try:
        proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, bufsize=1)
    except FileNotFoundError:
        raise UserError(f"cannot run {argv[0]!r}: not found") from None
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            echo(line)
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait()
        raise
    return proc.wait()


@dataclass
class JobResult:
    name: str
    returncode: int
    wall_s: float
    tail: str = ""


def run_job(name: str, argv: Sequence[str], log: Log, runner: StreamRunner = stream_run,
            tool: str = "ncu", keep_lines: int = 400) -> JobResult:
    """Run one child tool under a heading, its command line first, its output streamed to `log`;
    the tail is kept for error translation."""
    tail: collections.deque[str] = collections.deque(maxlen=keep_lines)

    def both(line: str) -> None:
        tail.append(line)
        log.stream(line)

    log.rule(f"{tool}: {name}")
    log.stream(shlex.join(argv) + "\n")
    start = time.perf_counter()
    rc = runner(argv, both)
    return JobResult(name, rc, time.perf_counter() - start, "".join(tail))


def check_job(result: JobResult, report: Path, chip: str | None) -> None:
    """A failed ncu run, or one that wrote no report, becomes one clear line."""
    problems = ncu_errors.translate(result.tail, chip)
    if result.returncode != 0 or not report.is_file():
        msg = ncu_errors.summarize(result.tail, result.returncode, chip)
        if result.returncode == 0 and not problems:
            msg = f"ncu wrote no report at {report}"
        raise UserError(f"{result.name}: {msg}")
    if any(p.code == "no_kernels" for p in problems):
        raise UserError(f"{result.name}: {ncu_errors.summarize(result.tail, result.returncode, chip)}")
