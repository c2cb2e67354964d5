"""Typed columns: labels read as text, numbers parsed and checked for presence, finiteness, sign.

Why shared: the ladder's loader parsed its numbers this way from the start; the engine's kinds
(experiment, step) compared raw strings with floats and met a non-numeric cell as a pandas
TypeError (a traceback) or, worse, as NaN that was then summed. Every kind now states which of
its columns are numbers (may the cell be empty? must it be >= 0?) and which are words, and its
loader calls `typed_columns` before any rule of tables.py.
"""

from __future__ import annotations

import math

import pandas as pd

from l2attr.errors import STRICT, Damage

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


def typed_columns(df: pd.DataFrame, numeric: Numeric, text: tuple[str, ...], source: str,
                  damage: Damage = STRICT) -> pd.DataFrame:
    """`df` with `text` columns as str (None where empty) and `numeric` columns as float, rows
    whose numbers are not numbers (or empty, infinite, negative where the column forbids it) left
    out after `damage` has said so."""
    df = df.copy()
    for column in text:
        if column in df.columns:
            df[column] = df[column].astype(object).where(df[column].notna(), None)
            df[column] = df[column].map(lambda v: None if v is None else str(v))
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
