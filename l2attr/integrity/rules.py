"""Row rules over one table: each names the file, the first bad row and the rule broken; and the
typed columns every kind's loader reads before any rule (labels as text, numbers parsed and
checked for presence, finiteness, sign).

Why typed columns are here: they are the first rule of every table. The ladder's loader parsed its
numbers this way from the start; the engine's kinds (experiment, step) compared raw strings with
floats and met a non-numeric cell as a pandas TypeError (a traceback) or, worse, as NaN that was
then summed. Every kind now states which of its columns are numbers (may the cell be empty? must it
be >= 0?) and which are words, and its loader calls `typed_columns` before any rule below.

Why masks: in the strict mode `damage.found` raises at the first broken rule (one line, exit 2);
with `--allow-partial` it records the line and the caller drops the rows the mask marks, so the
rest of the table is still analysed. Line numbers count the header as line 1 (the row at
position i is line i + 2), as an editor shows them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd

from l2attr.errors import STRICT, Damage

# -- typed columns -------------------------------------------------------------------------------

Numeric = dict[str, tuple[bool, bool]]      # column -> (may be empty, must be >= 0)


def check_range(values: pd.Series, source: str, may_be_empty: bool, non_negative: bool,
                damage: Damage = STRICT) -> pd.Series | None:
    """Report (through `damage`) the file, column and line of the first empty (if not allowed),
    infinite or negative (if not allowed) value; lines count the header as line 1. Returns the
    mask of bad rows (partial mode) or None when all are good."""
    problems = (("an empty value", values.isna()) if not may_be_empty else None,
                ("a value that is not finite", values.isin([math.inf, -math.inf])),
                ("a negative value", values < 0) if non_negative else None)
    bad = pd.Series(False, index=values.index)
    for what, mask in (p for p in problems if p is not None):
        if mask.any():
            row = int(mask.to_numpy().argmax())
            shown = "" if what == "an empty value" else f" ({values.iloc[row]:g})"
            more = f" (and {int(mask.sum()) - 1} more rows)" if mask.sum() > 1 else ""
            damage.found(f"{source}:{row + 2}: column {values.name} has {what}{shown}{more}")
            bad |= mask
    return bad if bad.any() else None


def text_values(values: pd.Series, empty: str | None = None) -> pd.Series:
    """A text column as Python strings, `empty` where the CSV cell was empty, in an object column.

    Why built whole: pandas 3 reads text as its `str` dtype and infers it again from what `map`
    returns, so a None put back became NaN and then the word 'nan' (an empty discard read as
    'nan' refused a valid run); pandas 2 kept None. An object Series stays as built on both."""
    cells = values.to_numpy(dtype=object)
    missing = pd.isna(cells)
    # the usual column (strings, and None or NaN where empty) without a Python step per cell: the
    # loop below took most of a read of 44,000 samples; anything else takes the loop
    if pd.api.types.infer_dtype(cells[~missing], skipna=False) in ("string", "empty") and all(
            v is None or isinstance(v, float) for v in cells[missing]):
        return pd.Series(np.where(missing, empty, cells), index=values.index, dtype=object)
    return pd.Series([empty if v is None or (isinstance(v, float) and v != v) else str(v) for v in values],
                     index=values.index, dtype=object)


def typed_columns(df: pd.DataFrame, numeric: Numeric, text: tuple[str, ...], source: str,
                  damage: Damage = STRICT) -> pd.DataFrame:
    """`df` with `text` columns as str (None where empty) and `numeric` columns as float, rows
    whose numbers are not numbers (or empty, infinite, negative where the column forbids it) left
    out after `damage` has said so."""
    df = df.copy()
    for column in text:
        if column in df.columns:
            df[column] = text_values(df[column])
    for column, (may_be_empty, non_negative) in numeric.items():
        if column not in df.columns:
            continue
        numeric_values = pd.to_numeric(df[column], errors="coerce")
        bad = numeric_values.isna() & df[column].notna()
        if bad.any():
            damage.found(f"{source}:{int(bad.to_numpy().argmax()) + 2}: column {column} must be numeric "
                         f"(found {str(df[column][bad].iloc[0])!r})")
            df = df[~bad].copy()
            numeric_values = numeric_values[~bad]
        df[column] = numeric_values.astype(float)
        out_of_range = check_range(df[column], source, may_be_empty, non_negative, damage)
        if out_of_range is not None:
            df = df[~out_of_range].copy()
    return df



# -- row rules -----------------------------------------------------------------------------------

Shown = Callable[[int], object]


def flag(damage: Damage, source: str, mask: pd.Series, rule: str, shown: pd.Series | Shown | None = None) -> pd.Series:
    """Report the first row `mask` marks (and how many more) through `damage`; returns the mask.
    `shown`: the values to quote, or a function of the row position giving the one to quote."""
    mask = mask.fillna(False).astype(bool)
    if mask.any():
        row = int(mask.to_numpy().argmax())
        value = shown(row) if callable(shown) else shown.iloc[row] if shown is not None else None
        what = f" ({value})" if value is not None else ""
        more = f" (and {int(mask.sum()) - 1} more rows)" if mask.sum() > 1 else ""
        damage.found(f"{source}:{row + 2}: {rule}{what}{more}")
    return mask


def unique_keys(df: pd.DataFrame, key: Iterable[str], source: str, damage: Damage) -> pd.Series:
    """A key names one row. A repeated row is damage (a writer never repeats one): the copies are
    dropped; a key with two different rows is worse, as either could be the measurement (taking
    the first would be a guess): all its rows are dropped."""
    key = [k for k in key if k in df.columns]
    none = pd.Series(False, index=df.index)
    if not key or df.empty:
        return none
    if len(df) <= 10_000 and len(set(zip(*(map(str, df[k].to_numpy(dtype=object)) for k in key)))) == len(df):
        return none        # no key text twice: a set of a small table's keys, 8x faster than hashing them
    ident = df[key].astype(str)
    kh = pd.util.hash_pandas_object(ident, index=False)
    if not kh.duplicated().any():
        return none
    rh = pd.util.hash_pandas_object(df.astype(str), index=False)
    pair = pd.DataFrame({"k": kh.to_numpy(), "r": rh.to_numpy()}, index=df.index)
    variants = pair.groupby("k")["r"].transform("nunique")
    conflicting = pair["k"].duplicated(keep=False) & (variants > 1)
    repeated = pair.duplicated(keep="first") & (variants == 1)
    label = lambda row: "/".join(map(str, ident.iloc[row]))  # noqa: E731
    bad = flag(damage, source, conflicting, f"two different rows for one key ({', '.join(key)})", label)
    return bad | flag(damage, source, repeated, f"a repeated row (key {', '.join(key)})", label)


def whole_numbers(df: pd.DataFrame, columns: Iterable[str], source: str, damage: Damage) -> pd.Series:
    """Counts and indices are whole: a repeat index of 1.5 is not a repeat."""
    bad = pd.Series(False, index=df.index)
    for c in columns:
        if c not in df.columns:
            continue
        v = pd.to_numeric(df[c], errors="coerce")
        mask = v.notna() & np.isfinite(v) & (v != np.floor(v.where(np.isfinite(v), 0)))
        bad |= flag(damage, source, mask, f"column {c} must be a whole number", df[c])
    return bad


def ordered(df: pd.DataFrame, columns: tuple[str, ...], source: str, damage: Damage,
            rel: float = 1e-9) -> pd.Series:
    """Each row's values of `columns` do not decrease (p10 <= median <= p90, lo <= hi, start <= end);
    an empty value is skipped. `rel`: the rounding a CSV round trip may add."""
    bad = pd.Series(False, index=df.index)
    present = [c for c in columns if c in df.columns]
    for a, b in zip(present, present[1:]):
        va, vb = pd.to_numeric(df[a], errors="coerce"), pd.to_numeric(df[b], errors="coerce")
        mask = va.notna() & vb.notna() & (va > vb + rel * np.maximum(va.abs(), vb.abs()))
        bad |= flag(damage, source, mask, f"{a} must not exceed {b}",
                    lambda row, va=va, vb=vb: f"{va.iloc[row]:g} > {vb.iloc[row]:g}")
    return bad


def known_words(df: pd.DataFrame, column: str, allowed: Iterable[str], source: str, damage: Damage,
                may_be_empty: bool = False) -> pd.Series:
    """A label column holds one of the words the writer uses: an unknown rung would vanish from
    every table that lists rungs, silently."""
    if column not in df.columns:
        return pd.Series(False, index=df.index)
    allowed = set(allowed)
    values = df[column]
    text = values.astype(str)                  # once: a column of 44,000 samples took 5 ms a copy
    mask = ~text.isin(allowed)
    if may_be_empty:
        mask &= ~(values.isna() | (text == "") | (text == "None"))
    return flag(damage, source, mask, f"column {column} must be one of {', '.join(sorted(allowed))}",
                lambda row: repr(values.iloc[row]))


def at_most(df: pd.DataFrame, column: str, limit: float, why: str, source: str, damage: Damage) -> pd.Series:
    """A value beyond what can be measured (a time of 1e300 us is finite but not a time)."""
    if column not in df.columns:
        return pd.Series(False, index=df.index)
    v = pd.to_numeric(df[column], errors="coerce")
    return flag(damage, source, v > limit, f"column {column} is above {limit:g} ({why})",
                lambda row: f"{v.iloc[row]:g}")


def at_least(df: pd.DataFrame, column: str, limit: float, source: str, damage: Damage) -> pd.Series:
    if column not in df.columns:
        return pd.Series(False, index=df.index)
    v = pd.to_numeric(df[column], errors="coerce")
    return flag(damage, source, v < limit, f"column {column} must be >= {limit:g}", lambda row: f"{v.iloc[row]:g}")


def together(df: pd.DataFrame, columns: tuple[str, ...], source: str, damage: Damage) -> pd.Series:
    """Columns a writer fills or leaves empty as one (a CI's two ends; a kernel's family, rung and
    pin): one of them empty alone was erased, and the row would be read as another kind of row."""
    present = [c for c in columns if c in df.columns]
    if len(present) < 2:
        return pd.Series(False, index=df.index)
    empty = pd.DataFrame({c: _blank(df[c]) for c in present})
    mixed = empty.any(axis=1) & ~empty.all(axis=1)
    return flag(damage, source, mixed, f"columns {', '.join(present)} are empty only together",
                lambda row: ", ".join(f"{c}={df[c].iloc[row]!r}" for c in present))


def _numeric(values: pd.Series) -> bool:
    """A column pandas read as numbers: its text is never empty, 'None' or 'nan' but where the cell
    is missing, so the text need not be built (the costly part of a rule over 44,000 samples)."""
    return values.dtype.kind in "biuf"


def _blank(values: pd.Series) -> pd.Series:
    """Per row: empty, missing, or the words 'None' / 'nan' (what an erased cell reads as)."""
    if _numeric(values):
        return values.isna()
    return values.isna() | values.astype(str).str.strip().isin(("", "None", "nan"))


def numbers(df: pd.DataFrame, columns: Iterable[str], source: str, damage: Damage) -> pd.Series:
    """Columns kept as the writer wrote them (an index other tables match as written) that must
    still read as numbers where filled."""
    bad = pd.Series(False, index=df.index)
    for c in columns:
        if c not in df.columns:
            continue
        filled = df[c].notna() if _numeric(df[c]) else df[c].notna() & (df[c].astype(str) != "")  # " " is no number
        v = pd.to_numeric(df[c], errors="coerce")
        bad |= flag(damage, source, filled & (v.isna() | ~np.isfinite(v.fillna(0)) | (v < 0)),
                    f"column {c} must be a number >= 0", lambda row: repr(df[c].iloc[row]))
    return bad


def filled(df: pd.DataFrame, columns: Iterable[str], source: str, damage: Damage) -> pd.Series:
    """A word every row names (a metric's name): an empty one cannot be matched to anything."""
    bad = pd.Series(False, index=df.index)
    for c in columns:
        if c in df.columns:
            bad |= flag(damage, source, _blank(df[c]), f"column {c} must not be empty")
    return bad


def one_pattern(df: pd.DataFrame, group: Iterable[str], columns: Iterable[str], source: str,
                damage: Damage, why: str) -> pd.Series:
    """Rows of one group fill the same of `columns` (a repeat is timed by one timer, so its
    samples leave the other timer's columns empty): a row that fills others was edited."""
    group = [c for c in group if c in df.columns]
    columns = [c for c in columns if c in df.columns]
    none = pd.Series(False, index=df.index)
    if not group or not columns or df.empty:
        return none
    filled = df[columns].notna().to_numpy()
    pattern = pd.Series((filled * (1 << np.arange(len(columns)))).sum(axis=1), index=df.index)
    gid = df.groupby([df[c].astype(str) for c in group], sort=False).ngroup()
    pairs = pd.DataFrame({"g": gid.to_numpy(), "p": pattern.to_numpy()})
    counts = pairs.value_counts().reset_index(name="n").sort_values(["g", "n"], ascending=[True, False])
    mode = counts.drop_duplicates("g").set_index("g")["p"]
    usual = pd.Series(gid.map(mode).to_numpy(), index=df.index)
    odd = pattern != usual
    return flag(damage, source, odd, f"{why}: this row fills other columns of "
                f"{', '.join(columns)} than the rest of its {', '.join(group)}",
                lambda row: ", ".join(f"{c}={df[c].iloc[row]!r}" for c in columns))
