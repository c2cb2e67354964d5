"""Read the CSV tables l2attr writes, refusing a file that was cut short.

Why: pandas fills a short last row with NaN and reads a row cut mid-number as a smaller number,
so a copy that stopped early would be analysed as if it were complete. l2attr writes every
table whole (atomically, with pandas, which ends each row with a newline), so a file whose last
byte is not a newline, or a row with another number of fields than the header, was cut or
damaged after it was written.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd

from l2attr.errors import UserError


def check_complete(data: bytes, label: str) -> None:
    """Raise naming `label`:LINE when the table's bytes are not whole rows of the header's width."""
    if not data.strip():
        raise UserError(f"{label}: file is empty (was the run interrupted?)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{label}: unreadable CSV (not UTF-8 at byte {exc.start})") from None
    if not text.endswith("\n"):
        raise UserError(f"{label}:{text.count(chr(10)) + 1}: the last row is cut off "
                        "(no newline at the end; was the file truncated?)")
    rows = csv.reader(io.StringIO(text, newline=""))
    try:
        width = len(next(rows))
        for row in rows:
            if len(row) != width:
                raise UserError(f"{label}:{rows.line_num}: the row has {len(row)} field(s), the header "
                                f"{width} (cut short or damaged)")
    except csv.Error as exc:
        raise UserError(f"{label}:{rows.line_num}: unreadable CSV ({exc})") from None


def read_complete_csv(path: Path) -> pd.DataFrame:
    """The table at `path`, read only if it is complete (see check_complete)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    check_complete(data, str(path))
    try:
        return pd.read_csv(io.BytesIO(data))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: unreadable CSV ({str(exc).splitlines()[0]})") from None
