"""A progress line on stderr while a report is made (reading, analysing, drawing take ~20 s).

Why: `l2attr report examples/` sat silent for about 20 seconds. On a terminal one line is
rewritten in place and cleared at the end, so what stays on screen is the command's own output;
elsewhere (pipes, CI logs, tests) nothing is written unless L2ATTR_PROGRESS=1 asks for it, and
then each step is a plain line. Errors therefore stay the one line they are.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

ENV = "L2ATTR_PROGRESS"


class Progress:
    """`step(text)` says what the command is doing now; `done()` clears the line."""

    def __init__(self, prog: str = "l2attr report", stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.prog = prog
        forced = os.environ.get(ENV, "")
        self.tty = forced != "1" and _isatty(self.stream)
        self.on = forced == "1" or (forced != "0" and self.tty)
        self.start = time.monotonic()
        self.shown = False

    def step(self, text: str) -> None:
        if not self.on:
            return
        line = f"{self.prog}: {text} ({time.monotonic() - self.start:.0f} s)"
        self.stream.write(f"\r\033[K{line}" if self.tty else line + "\n")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.on and self.tty and self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
        self.shown = False


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
