"""The one-line parser every command's flags go through: argparse, but a usage mistake is one line
(the rule for every bad input), said by the command it concerns, with the nearest flag or command
for a mistyped one. Below every kind: the CLI (cli.py) and a kind's command (experiment/command.py)
build their parsers from it.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from typing import Any, Iterable, NoReturn, Sequence

from l2attr.outputs import ClosedStdout


def did_you_mean(word: str, options: Iterable[str]) -> str:
    """'; did you mean --family?' for the closest option to a mistyped one, else ''."""
    close = difflib.get_close_matches(word, sorted(set(options)), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def _chosen(parser: argparse.ArgumentParser, ns: argparse.Namespace) -> argparse.ArgumentParser:
    """The innermost (sub)command parser the arguments chose: the one whose flags a mistyped
    flag was meant for (argparse reports it against the top-level parser)."""
    while True:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(ns, subs[0].dest, None) if subs and subs[0].dest != argparse.SUPPRESS else None
        if name is None or name not in subs[0].choices:
            return parser
        parser = subs[0].choices[name]


class Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line (the rule for every bad input), not usage + error,
    said by the command it concerns, with the nearest flag or command for a mistyped one."""

    def error(self, message: str) -> NoReturn:
        if "invalid choice: '" in message and "(choose from" in message:
            word = message.split("invalid choice: '", 1)[1].split("'", 1)[0]
            choices = [c.strip(" '") for c in message.split("(choose from", 1)[1].rstrip(")").split(",")]
            message = message.split(" (choose from", 1)[0] + did_you_mean(word, choices) + \
                f" (valid: {', '.join(choices)})"
        say(f"{self.prog}: error: {message} (see {self.prog} --help)")
        raise SystemExit(2)

    def _print_message(self, message: str, file: Any = None) -> None:
        if message and isinstance(file, ClosedStdout):     # --help, --version with `>&-`
            raise SystemExit(closed_stdout_error(self.prog))
        super()._print_message(message, file)

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: Any = None) -> argparse.Namespace:
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            target = _chosen(self, ns)
            flags = [a.split("=", 1)[0] for a in extras if a.startswith("-")]
            options = [o for a in target._actions for o in a.option_strings]
            hint = did_you_mean(flags[0], options) if flags else ""
            target.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return ns


def say(line: str) -> None:
    """One line on stderr; if stderr itself cannot be written, there is nobody left to tell."""
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:
        pass


def closed_stdout_error(prefix: str) -> int:
    say(f"{prefix}: error: standard output is closed, so what the command prints was lost "
         "(send it to /dev/null to discard it)")
    return 2
