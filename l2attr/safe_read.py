"""Read a file the user may have damaged or replaced: never block, never read without bound.

Why: a manifest.json, a check memo or a call record that a user can reach may be a FIFO (a plain
read waits for a writer forever), a device such as /dev/zero (a read fills memory), a folder, a
dangling link, or JSON nested so deep that the parser's recursion raises RecursionError. Each
reader here refuses anything but a regular file in one line, opens without blocking, reads at most
`limit` bytes, and measures the nesting before it parses. Every refusal is one UserError naming
the file (the CLI prints it as `l2attr: error: ...`).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

from l2attr.errors import UserError

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


def _what(mode: int) -> str | None:
    return next((name for test, name in _KINDS if test(mode)), None if stat.S_ISREG(mode) else "no regular file")


def not_a_file(path: Path) -> str | None:
    """None for a regular file (or a link to one); else what is there instead, as words: "missing",
    "a folder", "a FIFO (named pipe)", "a device", "a dangling link to X", ... (for one line)."""
    try:
        return _what(os.stat(path).st_mode)
    except FileNotFoundError:
        if os.path.islink(path):
            return f"a dangling link to {os.readlink(path)}"
        return "missing"
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"


def read_bytes_limited(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them; else one UserError."""
    what = not_a_file(path)
    if what == "missing":
        raise UserError(f"{path}: cannot be read (No such file or directory)")
    if what is not None and not what.startswith("unreadable"):
        raise UserError(f"{path}: is {what}, not a regular file")
    try:   # O_NONBLOCK: a FIFO swapped in after the check above opens at once instead of waiting
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        what = _what(os.fstat(fd).st_mode)
        if what is not None:
            raise UserError(f"{path}: is {what}, not a regular file")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if size > limit:
        raise UserError(f"{path}: larger than {limit} bytes, more than l2attr reads of such a file")
    return b"".join(chunks)


def read_text_limited(path: Path, limit: int) -> str:
    """The UTF-8 text of the regular file at `path` (at most `limit` bytes); else one UserError."""
    raw = read_bytes_limited(path, limit)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: must be UTF-8 text (byte {exc.start} is not)") from None


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.DOTALL)   # a string; an unterminated one runs to the end
_BRACKET = re.compile(r"[\[\]{}]")


def nesting_depth(text: str) -> int:
    """How deep `[`/`{` nest outside strings (so the parser's recursion never decides). The
    strings go first (a regex, not a loop over every character)."""
    outside = _STRING.sub("", text)
    depth = deepest = 0
    for ch in _BRACKET.findall(outside):
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def parse_json_limited(text: str, source: Path | str, depth: int) -> Any:
    """`text` parsed as JSON, refused in one line naming `source` when nested deeper than `depth`,
    invalid, or holding a number past Python's digit limit (never a RecursionError)."""
    if nesting_depth(text) > depth:
        raise UserError(f"{source}: nested more than {depth} levels deep (no l2attr writer nests so)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{source}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except (ValueError, RecursionError):   # an integer past Python's digit limit (int_max_str_digits)
        raise UserError(f"{source}: holds a number too long to read (more than {sys.get_int_max_str_digits()} "
                        "digits; no l2attr writer records one)") from None


def read_json_limited(path: Path, limit: int, depth: int) -> Any:
    """The JSON value of the regular UTF-8 file at `path` (at most `limit` bytes, nested at most
    `depth` levels); anything else is one UserError naming the file."""
    return parse_json_limited(read_text_limited(path, limit), path, depth)
