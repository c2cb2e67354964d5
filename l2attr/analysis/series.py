"""Series: the unit every ladder judgement is made in — one kernel family with one pin granularity.

Speedups, deltas and break-evens compare rungs *of the same family*: the artifact's L2P+OptMT is
judged against the artifact's OptMT, never against the tuned one. A family measured with two pin
granularities (the tuned family's line and element pins) gives two series that share their
non-pinning rungs. The torch reference row joins every series as a yardstick.

The analysis modules below this one work on one series at a time, keyed by (state, profile,
rung) as before; `series_frames` cuts a table into the rows of one series.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from l2attr.dlrm.declare import FAMILIES, FAMILY_ORDER
from l2attr.vocab import Family, Pin


@dataclass(frozen=True)
class Series:
    family: str
    pin: str

    @property
    def name(self) -> str:
        return f"{self.family}/{self.pin}"

    @property
    def title(self) -> str:
        fam = FAMILIES.get(Family(self.family)) if self.family in Family.values() else None
        what = {Family.ARTIFACT: "artifact kernels", Family.TUNED: "tuned kernels",
                Family.FAST: "fast kernels"}.get(self.family, self.family)
        default = fam is not None and fam.default_pin.value == self.pin
        return f"{what}, {self.pin} pin" + ("" if default else " (not the family's default)")

    @property
    def is_headline_family(self) -> bool:
        return self.family == Family.ARTIFACT.value


def _family_rank(family: str) -> int:
    order = [f.value for f in FAMILY_ORDER]
    return order.index(family) if family in order else len(order)


def _pin_rank(family: str, pin: str) -> int:
    try:
        pins = [p.value for p in FAMILIES[Family(family)].pins]
    except (ValueError, KeyError):
        return 9
    return pins.index(pin) if pin in pins else len(pins)


def find_series(*tables: pd.DataFrame) -> list[Series]:
    """The series present in cells/metrics tables, headline family first, default pin first.

    A family whose pinning rungs were not measured still forms one series (its default pin)."""
    found: dict[str, set[str]] = {}
    for df in tables:
        if df is None or df.empty or "family" not in df:
            continue
        for family, pin in zip(df["family"].astype(str), df["pin"].astype(str)):
            if family in ("", "nan", "None", Family.REFERENCE.value):
                continue
            pins = found.setdefault(family, set())
            if pin not in ("", "nan", "None", Pin.NONE.value):
                pins.add(pin)
    out = []
    for family in sorted(found, key=_family_rank):
        pins = found[family]
        if not pins:
            try:
                pins = {FAMILIES[Family(family)].default_pin.value}
            except (ValueError, KeyError):
                pins = {Pin.NONE.value}
        out.extend(Series(family, p) for p in sorted(pins, key=lambda p: _pin_rank(family, p)))
    return out


def series_frame(df: pd.DataFrame, s: Series) -> pd.DataFrame:
    """The rows of one series: the family's rows with this pin or none, plus the reference rows.

    Rows whose pin is unknown ('': a range name that did not say) count for every pin."""
    if df is None or df.empty or "family" not in df:
        return df
    fam = df["family"].astype(str)
    pin = df["pin"].astype(str)
    mine = (fam == s.family) & pin.isin([s.pin, Pin.NONE.value, "", "nan", "None"])
    return df[mine | (fam == Family.REFERENCE.value)].reset_index(drop=True)


def tag(df: pd.DataFrame, s: Series) -> pd.DataFrame:
    """Prefix an analysis frame of one series with its series columns."""
    if df is None:
        return df
    out = df.copy()
    for col in ("pin", "family", "series"):
        if col in out.columns:
            out = out.drop(columns=col)
    out.insert(0, "pin", s.pin)
    out.insert(0, "family", s.family)
    out.insert(0, "series", s.name)
    return out
