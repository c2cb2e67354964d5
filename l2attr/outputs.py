"""Output paths, checked before any work: never one of the command's inputs, never a new folder.

Why before: an output that equals an input (`traces hot med.txt --out med.txt`) would replace
the data the command is reading, and a typo in a folder name would otherwise either create a
stray tree or fail only after minutes of work.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from l2attr.errors import UserError


def same_file(a: Path, b: Path) -> bool:
    """True when both paths name one existing file (through links, `..` or hard links)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_output(path: Path, flag: str, inputs: Iterable[Path | None] = ()) -> Path:
    """Refuse an output that is a folder, one of `inputs`, or inside a folder that does not exist."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{flag} {path} is a directory; give a file name")
    for source in inputs:
        if source is not None and same_file(path, Path(source)):
            alias = "" if str(source) == str(path) else f" (the same file as {source})"
            raise UserError(f"{flag} {path} is an input of this command{alias}; write to another file")
    if not Path(os.path.abspath(path)).parent.is_dir():
        raise UserError(f"{flag} {path}: folder {path.parent} does not exist (create it first)")
    return path


def check_distinct(outputs: dict[str, Path | None]) -> None:
    """Refuse two outputs of one command that name one file (the second would replace the first)."""
    seen: dict[str, str] = {}
    for flag, path in outputs.items():
        if path is None:
            continue
        key = os.path.realpath(path)
        if key in seen:
            raise UserError(f"{seen[key]} and {flag} name the same file ({path}); give two files")
        seen[key] = flag
