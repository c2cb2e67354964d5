"""One exception type for user mistakes: the CLI turns it into one line on stderr and exit 2;
a script that uses the Python API gets the same line from `install_script_hook`."""

import sys
from types import TracebackType


class UserError(Exception):
    """Bad input from the user (file, flag, config). Never shown as a traceback."""

    exit_code = 2


def _one_line(kind: type[BaseException], exc: BaseException, tb: TracebackType | None,
              previous=sys.__excepthook__) -> None:
    if isinstance(exc, UserError):
        print(f"l2attr: error: {exc}", file=sys.stderr)
    else:
        previous(kind, exc, tb)


def install_script_hook() -> None:
    """Let a UserError that escapes a user's script (no GPU, a bad declaration) end it with one
    line, `l2attr: error: ...`, instead of a traceback; every other exception is shown as before.
    Installed once, when the script first touches `l2attr.Experiment`, `l2attr.step`, ...; a hook
    the script set itself is kept for everything else."""
    if getattr(sys.excepthook, "_l2attr", False):
        return
    previous = sys.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        _one_line(kind, exc, tb, previous)

    hook._l2attr = True  # type: ignore[attr-defined]
    sys.excepthook = hook


class Damage:
    """Where reading finds a damaged or partial run: raise (the default), or with
    `report --allow-partial` note what is wrong, keep what is intact, and go on.

    Every integrity check calls `found(message)`; in the strict mode that is the one-line error
    it always was, in the partial mode the message is kept for the report's top."""

    def __init__(self, allow_partial: bool = False) -> None:
        self.allow_partial = allow_partial
        self.messages: list[str] = []

    def found(self, message: str) -> None:
        if not self.allow_partial:
            raise UserError(message)
        self.messages.append(message)


STRICT = Damage()
