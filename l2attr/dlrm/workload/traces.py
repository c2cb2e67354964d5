"""Read and write index traces in the artifact's format: one non-negative integer per line.

Why a hand-written parser: the file is parsed with numpy on the raw bytes (fast for multi-MB
traces), yet a bad line is still reported as FILE:LINE with the reason, which np.loadtxt and
np.fromstring do not give (fromstring even stops silently at the first bad byte).

Format rules (strict, so a wrong file fails loudly instead of skewing a measurement):
- each line holds one decimal integer, optionally surrounded by spaces, tabs or a CR (CRLF files);
- blank lines are errors, except blank lines at the very end of the file;
- negative or non-integer lines are always errors;
- ids >= rows are errors unless ``drop_out_of_range`` is set, which drops them the way the
  artifact's loader silently did.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from l2attr import atomic
from l2attr.errors import UserError

_MAX_DIGITS = 18  # 10**18 - 1 still fits int64; longer numbers are reported as out of range
_POW10 = 10 ** np.arange(_MAX_DIGITS, dtype=np.int64)
_CHUNK_BYTES = 8 << 20  # parse in ~8 MiB pieces so temporaries stay small for huge traces
_TRAILING_SPACE = b" \t\r\n"
_NEGATIVE = re.compile(rb"^\s*-\s*\d+\s*$")


@dataclass(frozen=True)
class Trace:
    """A trace read from disk, with what a run manifest needs to name it exactly."""

    path: Path
    ids: np.ndarray       # int64, in file order, out-of-range ids removed if dropping
    lines: int            # id lines in the file (before dropping)
    dropped: int          # out-of-range ids dropped (0 unless drop_out_of_range)
    sha256: str           # of the file's bytes


def read_bytes(path: Path, what: str = "trace file") -> bytes:
    """The file's bytes, or a one-line UserError saying why it cannot be read."""
    path = Path(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise UserError(f"{what} {path} is a directory, not a file") from None
    except PermissionError:
        raise UserError(f"{what} {path}: cannot read (permission denied)") from None
    except OSError as exc:
        raise UserError(f"{what} {path}: cannot read ({exc.strerror or exc})") from None


def _line_text(data: bytes, line: int) -> bytes:
    """Text of 1-based line `line` (only called on the error path)."""
    return data.split(b"\n", line)[line - 1] if line > 0 else b""


def _bad_line_error(label: str, data: bytes, line: int) -> UserError:
    """Say what is wrong with one line, in one line."""
    text = _line_text(data, line)
    if not text.strip():
        return UserError(f"{label}:{line}: empty line (expected one integer id per line)")
    if _NEGATIVE.match(text):
        return UserError(f"{label}:{line}: negative id {text.strip().decode('ascii')}")
    shown = text.strip().decode("utf-8", errors="replace")
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return UserError(f"{label}:{line}: not an integer: {shown!r}")


def _first_bad_line(buf: np.ndarray, is_nl: np.ndarray, is_digit: np.ndarray,
                    run_start: np.ndarray) -> int | None:
    """0-based line (within buf) of the first malformed line, or None if all lines are good.

    A good chunk reads, event by event, digit-run start, newline, run start, ..., run start:
    a line with no digits shows up as two newlines in a row, one with two numbers as two
    run starts in a row. Bytes other than digits and blanks are malformed wherever they are.
    """
    candidates = []
    allowed = is_digit | is_nl | (buf == 32) | (buf == 9) | (buf == 13)
    if not allowed.all():
        candidates.append(int(np.count_nonzero(is_nl[:int(np.argmin(allowed))])))
    events = np.flatnonzero(run_start | is_nl)
    ev_nl = is_nl[events]
    expected = (np.arange(events.size) % 2).astype(bool)  # False (run) at even, True (nl) at odd
    wrong = ev_nl != expected
    if wrong.any():
        first = int(np.argmax(wrong))
        candidates.append(int(np.count_nonzero(ev_nl[:first])))
    elif events.size % 2 == 0:  # ends with a newline: the last line has no digits
        candidates.append(int(np.count_nonzero(ev_nl)))
    return min(candidates) if candidates else None


def _parse_chunk(buf: np.ndarray, data: bytes, label: str, first_line: int) -> np.ndarray:
    """Parse whole lines in `buf` (no trailing newline) into int64; raise on the first bad line.

    `data` and `first_line` are only used to build the error message.
    """
    is_nl = buf == 10
    is_digit = (buf >= 48) & (buf <= 57)
    run_start = is_digit.copy()
    run_start[1:] &= ~is_digit[:-1]
    digit_pos = np.flatnonzero(is_digit)
    starts = np.flatnonzero(run_start[digit_pos])          # run starts, as ordinals into digit_pos
    lengths = np.diff(np.append(starts, digit_pos.size))
    too_long = np.flatnonzero(lengths > _MAX_DIGITS)
    long_line = (int(np.count_nonzero(is_nl[:digit_pos[starts[too_long[0]]]]))
                 if too_long.size else None)
    bad = _first_bad_line(buf, is_nl, is_digit, run_start)
    # report whichever comes first: a malformed line, or an id with too many digits
    if bad is not None and (long_line is None or bad <= long_line):
        raise _bad_line_error(label, data, first_line + bad)
    if long_line is not None:
        line = first_line + long_line
        raise UserError(f"{label}:{line}: id {_line_text(data, line).strip().decode()} is too large")

    # exactly one digit run per line: the runs are the lines, in order
    ends = np.repeat(starts + lengths - 1, lengths)        # last digit ordinal of each digit's run
    exponent = ends - np.arange(digit_pos.size)
    digits = (buf[digit_pos] - 48).astype(np.int64)
    return np.add.reduceat(digits * _POW10[exponent], starts)


def _chunk_bounds(buf: np.ndarray) -> list[tuple[int, int]]:
    """Split at newlines into pieces of about _CHUNK_BYTES; each piece holds whole lines."""
    bounds, start = [], 0
    while start < buf.size:
        stop = min(start + _CHUNK_BYTES, buf.size)
        if stop < buf.size:
            nl = np.flatnonzero(buf[stop:stop + 4096] == 10)
            while nl.size == 0 and stop < buf.size:  # very long line: widen the window
                stop = min(stop + 4096, buf.size)
                nl = np.flatnonzero(buf[stop:stop + 4096] == 10)
            stop = stop + int(nl[0]) if nl.size else buf.size
        bounds.append((start, stop))
        start = stop + 1
    return bounds


def parse_ids(data: bytes, label: str) -> np.ndarray:
    """Parse a whole file's bytes into int64 ids (file order); `label` names it in errors."""
    body = data.rstrip(_TRAILING_SPACE)
    if not body:
        raise UserError(f"{label}: file is empty (expected one integer id per line)")
    buf = np.frombuffer(body, dtype=np.uint8)
    parts, line = [], 1
    for start, stop in _chunk_bounds(buf):
        piece = buf[start:stop]
        parts.append(_parse_chunk(piece, body, label, line))
        line += parts[-1].size
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


DROP_HINT = " (pass --drop-out-of-range to drop such ids, as the artifact's loader did)"


def check_range(ids: np.ndarray, rows: int, label: str, hint: str = DROP_HINT) -> None:
    """Raise naming the first line whose id is >= rows."""
    over = ids >= rows
    if over.any():
        line = int(np.argmax(over)) + 1
        raise UserError(f"{label}:{line}: id {int(ids[line - 1])} is out of range for "
                        f"{rows} rows{hint}")


def read_trace(path: Path, rows: int | None = None, drop_out_of_range: bool = False) -> Trace:
    """Read a trace; with `rows`, ids >= rows are an error (or dropped if asked)."""
    path = Path(path)
    return trace_from_bytes(path, read_bytes(path, "trace file"), rows, drop_out_of_range)


def trace_from_bytes(path: Path, data: bytes, rows: int | None = None,
                     drop_out_of_range: bool = False) -> Trace:
    """Like read_trace, for bytes already read (a caller that hashes first parses only once)."""
    ids = parse_ids(data, str(path))
    lines, dropped = int(ids.size), 0
    if rows is not None:
        if drop_out_of_range:
            keep = ids < rows
            dropped = int(ids.size - np.count_nonzero(keep))
            if dropped:
                ids = ids[keep]
            if ids.size == 0:
                raise UserError(f"{path}: all {lines} ids are out of range for {rows} rows")
        else:
            check_range(ids, rows, str(path))
    return Trace(Path(path), ids, lines, dropped, sha256_hex(data))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _format_chunk(ids: np.ndarray) -> bytes:
    """Decimal lines for non-negative ids, built as a digit matrix (no per-id Python work)."""
    width = len(str(int(ids.max())))
    mat = np.empty((ids.size, width + 1), dtype=np.uint8)
    mat[:, width] = 10
    rest = ids.copy()
    for col in range(width - 1, -1, -1):
        mat[:, col] = 48 + rest % 10
        rest //= 10
    n_digits = np.ones(ids.size, dtype=np.int64)
    for k in range(1, width):
        n_digits += ids >= 10 ** k
    keep = np.arange(width + 1) >= (width - n_digits)[:, None]  # drop leading zeros
    return mat[keep].tobytes()


def format_ids(ids: np.ndarray, chunk: int = 1 << 22) -> Iterator[bytes]:
    """The artifact's format, one id per line, as byte chunks (keeps memory flat for big traces)."""
    ids = np.asarray(ids, dtype=np.int64).ravel()
    if ids.size and int(ids.min()) < 0:
        raise UserError("cannot write negative ids to a trace")
    for start in range(0, ids.size, chunk):
        yield _format_chunk(ids[start:start + chunk])


def atomic_write(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Temp file + fsync + rename (l2attr.atomic): readers see the old file or the new one."""
    atomic.write_stream(path, write)


def write_ids(path: Path, ids: np.ndarray) -> None:
    """Write ids in the artifact's format, atomically; OS errors become a UserError."""
    def write(fh: BinaryIO) -> None:
        for piece in format_ids(ids):
            fh.write(piece)
    try:
        atomic_write(Path(path), write)
    except OSError as exc:
        raise UserError(f"cannot write {path} ({exc.strerror or exc})") from None


def circular(ids: np.ndarray, n: int, out: np.ndarray | None = None) -> np.ndarray:
    """The first n ids of `ids` read circularly, as the artifact's loader reads its trace.

    One cursor runs over the file for every table and batch, wrapping at the end, so a trace
    shorter than the workload repeats. `out` (flat, int64, size n) avoids an extra allocation.
    """
    ids = np.asarray(ids, dtype=np.int64)
    if ids.size == 0:
        raise UserError("cannot read an empty trace circularly")
    if out is None:
        out = np.empty(n, dtype=np.int64)
    done = 0
    while done < n:
        take = min(ids.size, n - done)
        out[done:done + take] = ids[:take]
        done += take
    return out
