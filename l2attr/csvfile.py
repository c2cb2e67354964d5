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
import re
from pathlib import Path

import pandas as pd

from l2attr.errors import STRICT, Damage, UserError


def check_complete(data: bytes, label: str, damage: Damage = STRICT) -> bytes:
    """The table's bytes, if they are whole rows of the header's width; else `damage.found`
    naming `label`:LINE (strict: raises) and, in the partial mode, the bytes without the cut
    last row and without rows of another width."""
    if not data.strip():
        raise UserError(f"{label}: file is empty (was the run interrupted?)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{label}: unreadable CSV (not UTF-8 at byte {exc.start})") from None
    if not text.endswith("\n"):
        damage.found(f"{label}:{text.count(chr(10)) + 1}: the last row is cut off "
                     "(no newline at the end; was the file truncated?)")
        text = text[:text.rfind("\n") + 1]
    if _plain_and_whole(text):
        return text.encode()
    rows = csv.reader(io.StringIO(text, newline=""))
    kept, dropped = [], 0
    try:
        header = next(rows)
        for row in rows:
            if len(row) != len(header):
                damage.found(f"{label}:{rows.line_num}: the row has {len(row)} field(s), the header "
                             f"{len(header)} (cut short or damaged)")
                dropped += 1
            else:
                kept.append(row)
    except csv.Error as exc:
        raise UserError(f"{label}:{rows.line_num}: unreadable CSV ({exc})") from None
    if not dropped:
        return text.encode()
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *kept])
    return out.getvalue().encode()


def _plain_and_whole(text: str) -> bool:
    """True when `text` (ending in a newline) has no quoting and every line is a row of the
    header's width: the csv module's answer without its per-row Python loop (the fast path of
    every table read; anything else goes through csv.reader, which says what is wrong)."""
    if '"' in text or "\r" in text or "\0" in text:
        return False
    lines = text.split("\n")[:-1]
    if not lines or "" in lines:
        return False
    commas = lines[0].count(",")
    return text.count(",") == commas * len(lines) and all(line.count(",") == commas for line in lines)


# Floats read back exactly as written: pandas 2 parses with its fast "high" precision by default, one
# unit in the last place off (0.2 read as 0.20000000000000004 on 2.0); pandas 3 reads them exactly
# and deprecates the argument.
ROUND_TRIP = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


def read_complete_csv(path: Path, damage: Damage = STRICT) -> pd.DataFrame:
    """The table at `path`, read only if it is complete (see check_complete)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if path.suffix in (".gz", ".xz"):    # a committed table kept small (examples/): whole or refused
        import gzip
        import lzma
        import zlib

        try:
            data = gzip.decompress(data) if path.suffix == ".gz" else lzma.decompress(data)
        except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
            raise UserError(f"{path}: not a whole {'gzip' if path.suffix == '.gz' else 'xz'} file ({exc})") from None
    data = check_complete(data, str(path), damage)
    try:
        df = pd.read_csv(io.BytesIO(data), low_memory=False, **ROUND_TRIP)   # one dtype per column, however long
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: unreadable CSV ({str(exc).splitlines()[0]})") from None
    df = as_object_text(df)
    if len(data) > SEARCH_BYTES or _LONG_RUN.search(data):
        df = _without_long_numbers(df, str(path), damage)
    return df


def as_object_text(df: pd.DataFrame) -> pd.DataFrame:
    """Text columns as object columns, an empty cell NaN, as pandas 2 reads them: pandas 3 reads
    text as its `str` dtype, whose later `map`/`where` results differ (None becomes NaN, then
    'nan'); every reader downstream sees one form on either."""
    for column in df.columns:
        if df[column].dtype != object and pd.api.types.is_string_dtype(df[column].dtype):
            df[column] = df[column].astype(object)
    return df


# No writer writes a number of more digits than a float's repr (about 25 characters); pandas
# keeps a longer one as text, and its own number parser then fails with OverflowError.
MAX_NUMBER_CHARS = 64
# Such a number is a run of more bytes than that without a comma in the file (digits, signs, points,
# exponents, spaces; quoting only adds bytes): a small table without one needs no look at its cells
# (1.5 ms a small table, now 0.1; a large file is looked at cell by cell, faster than the search)
_LONG_RUN = re.compile(rb"[^,]{%d,}" % (MAX_NUMBER_CHARS + 1))
SEARCH_BYTES = 1 << 18           # above this a file's cells are looked at directly


def _without_long_numbers(df: pd.DataFrame, source: str, damage: Damage) -> pd.DataFrame:
    """Refuse (or, partial, drop the rows of) a number too long to be one any writer wrote."""
    for column in df.columns:
        if df[column].dtype.kind in "biufc":
            continue
        text = df[column].astype(str)
        long = text.str.len() > MAX_NUMBER_CHARS
        if long.any():        # the pattern only where it can matter (it ran over every cell)
            long &= text.str.fullmatch(r"\s*[-+]?[0-9][0-9.eE+-]*\s*").fillna(False).astype(bool)
        if long.any():
            row = int(long.to_numpy().argmax())
            damage.found(f"{source}:{row + 2}: column {column} holds a number of {len(text.iloc[row].strip())} "
                         f"characters (no l2attr writer writes one longer than {MAX_NUMBER_CHARS})")
            df = df[~long].reset_index(drop=True)
    return df
