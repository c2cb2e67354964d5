"""Small shared pieces of the analysis: ordering, missing values with reasons, and row sources.

Two rules run through every table the analysis returns:
- a number that could not be computed is NaN, and the row's `missing` dict says why
  (field -> reason), so a report shows "n/a: baseline not measured", never a zero;
- a row's `source` names the input rows it came from (run dir / table [key]), so any figure
  can be traced back to the CSV lines behind it.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np
import pandas as pd

from l2attr.dlrm.declare import FAMILIES, LADDER_ORDER, PROFILES, RUNG_BY_NAME
from l2attr.vocab import Family, L2Condition, Quantity, RungId, Timer

NA = float("nan")


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def rows_where(df: pd.DataFrame, **match: Any) -> np.ndarray:
    """Per row of `df`: do its columns equal `match`, as `df[column] == value` says (a missing value
    matches nothing)? Compared on the columns' arrays: the Series comparisons and the filtered
    frame of each lookup were much of an analysis and its page, which look rows up thousands of
    times."""
    hit = np.ones(len(df), dtype=bool)
    for column, value in match.items():
        values = df[column].to_numpy(dtype=object)
        hit &= False if is_missing(value) else values == value
    return hit


def first_row(df: pd.DataFrame, **match: Any) -> pd.Series | None:
    """The first row of `df` whose columns equal `match` (rows_where), or None when none does."""
    hit = rows_where(df, **match)
    return df.iloc[int(hit.argmax())] if hit.any() else None


def number(value: Any) -> float:
    """A float, or NaN for anything that is not a finite number."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        return NA
    return out if math.isfinite(out) else NA


def ratio(numerator: float, denominator: float) -> float:
    if is_missing(numerator) or is_missing(denominator) or denominator == 0:
        return NA
    return numerator / denominator


def rung_rank(name: str) -> int:
    return LADDER_ORDER.index(name) if name in LADDER_ORDER else len(LADDER_ORDER)


def profile_rank(name: str) -> tuple[int, str]:
    return (PROFILES.index(name) if name in PROFILES else len(PROFILES), str(name))


def rung_label(name: str, family: str = "") -> str:
    """How a rung is printed; with `family`, in that family's own words where it declares them
    (dlrm.declare's rung_labels: the fast family's OptMT slot is `fast`)."""
    rung = RUNG_BY_NAME.get(name)
    if rung is None:
        return name
    if rung.name == RungId.TORCH:
        return RungId.TORCH.value
    fam = FAMILIES.get(Family(family)) if family in Family.values() else None
    return fam.label(rung) if fam else rung.label


def ordered_profiles(names: Iterable[str]) -> list[str]:
    return sorted({str(n) for n in names if not is_missing(n)}, key=profile_rank)


def ordered_rungs(names: Iterable[str]) -> list[str]:
    return sorted({str(n) for n in names if not is_missing(n)}, key=lambda n: (rung_rank(n), n))


def sort_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Sort by l2_state (natural first), profile (hot to cold) and rung (ladder order)."""
    if df.empty:
        return df.reset_index(drop=True)
    keys = []
    if "l2_state" in df:
        keys.append(df["l2_state"].map(lambda s: (0 if s == L2Condition.NATURAL else 1, str(s))))
    if "profile" in df:
        keys.append(df["profile"].map(profile_rank))
    if "rung" in df:
        keys.append(df["rung"].map(lambda r: (rung_rank(r), str(r))))
    order = sorted(range(len(df)), key=lambda i: tuple(k.iloc[i] for k in keys))
    return df.iloc[order].reset_index(drop=True)


def why(row: pd.Series | dict[str, Any], field: str) -> str:
    """The reason a field of an analysis row is missing ('' when it is present)."""
    missing = row.get("missing") if hasattr(row, "get") else None
    if isinstance(missing, dict):
        return missing.get(field, "")
    return ""


# Reasons that mean "this field does not apply to this row" rather than "it was not measured".
NOT_APPLICABLE = ("first rung (nothing below it)", "reference row, not a rung", "rung has no pin kernel")


def not_applicable(reason: str) -> bool:
    return reason in NOT_APPLICABLE


def join_sources(parts: Iterable[str]) -> str:
    seen: list[str] = []
    for p in parts:
        for piece in str(p).split(" + "):
            if piece and piece not in seen:
                seen.append(piece)
    return " + ".join(seen)


# The timer a quantity is read with unless a caller asks for another.
DEFAULT_TIMER = {Quantity.PIN: Timer.KERNEL.value, Quantity.CONSUMER: Timer.KERNEL.value,
                 Quantity.KERNELS: Timer.KERNEL.value, Quantity.CALL: Timer.WALL.value}


class CellIndex:
    """cells.csv rows of one series keyed by (l2_state, profile, rung, quantity, timer).

    A series is one family and one pin granularity (analysis/series.py), so a rung name is
    unique within it; each row keeps its `run` for the sources."""

    def __init__(self, cells: pd.DataFrame) -> None:
        self._rows: dict[tuple[str, str, str, str, str], dict[str, Any]] = {}
        for rec in cells.to_dict("records"):
            timer = rec.get("timer") or DEFAULT_TIMER.get(rec["quantity"], Timer.KERNEL.value)
            key = (rec["l2_state"], rec["profile"], rec["rung"], rec["quantity"], timer)
            self._rows.setdefault(key, rec)

    def get(self, state: str, profile: str, rung: str, quantity: str,
            timer: str | None = None) -> dict[str, Any] | None:
        return self._rows.get((state, profile, rung, quantity, timer or DEFAULT_TIMER[quantity]))

    def median(self, state: str, profile: str, rung: str, quantity: str, timer: str | None = None) -> float:
        rec = self.get(state, profile, rung, quantity, timer)
        return NA if rec is None else number(rec.get("median_us"))

    def source(self, state: str, profile: str, rung: str, quantities: Iterable[str]) -> str:
        """'run/cells.csv[state|profile|rung|q1,q2]' for the quantities that exist, per run.

        A quantity is `name` (default timer) or `name@timer`."""
        by_run: dict[str, list[str]] = {}
        for q in quantities:
            name, _, timer = q.partition("@")
            rec = self.get(state, profile, rung, name, timer or None)
            if rec is not None:
                by_run.setdefault(str(rec.get("run", "?")), []).append(q)
        return " + ".join(f"{run}/cells.csv[{state}|{profile}|{rung}|{','.join(qs)}]"
                          for run, qs in by_run.items())

    def keys(self) -> list[tuple[str, str, str, str, str]]:
        return list(self._rows)
