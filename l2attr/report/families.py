"""The three kernel families side by side, as both reports show them (HTML and Markdown).

The figures are `Analysis.families` (study.families), one row per (profile, series); this
module only groups them per profile, names the series, finds why a figure is missing (from the
verdict and measured-roofline rows the figure came from) and words the one-line summary the
answer at the top gives when the runs hold more than one family.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from l2attr.analysis.common import first_row, is_missing, ordered_profiles
from l2attr.analysis.series import Series
from l2attr.ladders.analyse.verdict import HONEST_COMPARAND
from l2attr.dlrm.declare import FAMILY_ORDER
from l2attr.report.reads import AnalysisLike
from l2attr.vocab import Judgement

TITLE = "The three kernel families"
FAMILY_NAMES = tuple(f.value for f in FAMILY_ORDER)

LEAD = ("Per reuse profile, each kernel family's consumer without a pin (its OptMT slot; the fast family "
        "calls it fast) against the tuned family's OptMT consumer on the same profile, the DRAM bandwidth "
        "it drew (Nsight Compute DRAM read bytes over the kernel's duration) as a share of the measured "
        "read-only HBM bandwidth, and what the pin rung (L2P+OptMT; fast+pin) gives over that consumer: "
        "pin-charged = T_consumer / (T_pin + T_pinned consumer), pin-free = T_consumer / T_pinned consumer, "
        "kernel timer.")


def shown(an: AnalysisLike) -> bool:
    """The section is drawn only where the analysis has family rows (a ladder was measured)."""
    return an.families is not None and not an.families.empty


def families(an: AnalysisLike) -> list[str]:
    """The families with rows, in ladder order."""
    if not shown(an):
        return []
    present = set(an.families["family"])
    return [f for f in FAMILY_NAMES if f in present] + sorted(present - set(FAMILY_NAMES))


def not_measured(an: AnalysisLike) -> list[str]:
    """The families of the ladder that no run measured."""
    have = families(an)
    return [f for f in FAMILY_NAMES if f not in have]


def not_measured_text(an: AnalysisLike) -> str:
    """'No run measured the fast family.' ('' when every family was measured)."""
    gone = not_measured(an)
    if not gone:
        return ""
    return f"No run measured the {' or the '.join(gone)} famil{'ies' if len(gone) > 1 else 'y'}."


def many_families(an: AnalysisLike) -> bool:
    return len(families(an)) > 1


def profiles(an: AnalysisLike) -> list[str]:
    return ordered_profiles(an.families["profile"]) if shown(an) else []


def series_title(rec: dict[str, Any]) -> str:
    return Series(str(rec["family"]), str(rec["pin"])).title


def _match(df: pd.DataFrame, **keys: Any) -> dict[str, Any] | None:
    if df is None or df.empty or any(k not in df for k in keys):
        return None
    row = first_row(df, **keys)
    return None if row is None else row.to_dict()


def _reason(row: dict[str, Any] | None, field: str) -> str:
    missing = row.get("missing") if row else None
    return missing.get(field, "") if isinstance(missing, dict) else ""


def why_missing(an: AnalysisLike, rec: dict[str, Any], field: str) -> str:
    """Why a family row has no `field`: the reason the analysis row it comes from gives, or one in
    the same words."""
    profile, state = rec["profile"], an.state
    if field == "vs_tuned":
        return _reason(rec, field) or f"the tuned family's OptMT consumer was not measured for {profile}/{state}"
    if field in ("dram_fraction", "dram_GBps"):
        roof = _match(an.measured_roofline, series=rec["series"], profile=profile, rung=HONEST_COMPARAND)
        if roof is None:
            return f"the {rec['family']} family's {rec['unpinned']} consumer was not profiled for {profile} (l2attr profile)"
        return _reason(roof, field) or _reason(roof, "dram_GBps") or "not measured"
    if field in ("pin_speedup_charged", "pin_speedup_consumer") and not is_missing(rec.get("pinned_consumer_us")):
        v = _match(an.verdict, series=rec["series"], profile=profile)
        reason = _reason(v, field)
        if reason:
            return reason
    return f"{rec['pinned']} not measured for {profile}/{state}"


def source_of(an: AnalysisLike, rec: dict[str, Any]) -> str:
    """The files behind a family row (the verdict row's sources)."""
    v = _match(an.verdict, series=rec["series"], profile=rec["profile"])
    return str(v.get("source") or "") if v else ""


def rows(an: AnalysisLike, profile: str) -> list[dict[str, Any]]:
    """The family rows of one profile, each with its series title and source."""
    if not shown(an):
        return []
    fam = an.families[an.families["profile"] == profile]
    return [{**r, "title": series_title(r), "source": source_of(an, r)} for r in fam.to_dict("records")]


def sentences(an: AnalysisLike) -> list[str]:
    return list(an.families["sentence"]) if shown(an) else []


def summary(an: AnalysisLike) -> str:
    """One line for the answer at the top: the families measured, and in how many (profile,
    series) cases the pin pays with its kernel charged."""
    fam = an.families
    charged = fam["pin_speedup_charged"].dropna() if shown(an) else pd.Series(dtype=float)
    names = ", ".join(families(an))
    if charged.empty:
        return f"Across the kernel families ({names}): no pin rung was measured."
    words = fam.loc[charged.index, "pin_judgement_charged"] if "pin_judgement_charged" in fam else \
        pd.Series(Judgement.WITHIN_NOISE.value, index=charged.index)
    pays = int((words == Judgement.FASTER.value).sum())
    noise = int((~words.isin([Judgement.FASTER.value, Judgement.SLOWER.value])).sum())
    best = fam.loc[charged.idxmax()]
    text = (f"Across the kernel families ({names}), with the pin kernel charged the pin pays (faster beyond "
            f"noise) in {pays} of {len(charged)} (profile, family and pin) cases"
            + (f", within noise in {noise}" if noise else "") + f"; the best is {charged.max():.2f}× "
            f"({best['profile']}, {best['family']}, {best['pin']} pin).")
    return text


def dram_percent(x: Any) -> str:
    """A fraction as whole percent, the way the sentences say it."""
    return "" if is_missing(x) else f"{100 * float(x):.0f}"
