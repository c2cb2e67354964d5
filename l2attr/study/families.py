"""The three kernel families side by side, per profile: does pinning still pay as the consumer
gets faster?

One row per (profile, series): the family's unpinned consumer (its OptMT slot: the artifact's and
tuned OptMT, the fast family's `fast`) and its ratio to the tuned OptMT consumer of the same
profile, the DRAM bandwidth that consumer drew (ncu bytes / duration) as a fraction of the
measured read-only HBM bandwidth, the pin rung's consumer and pin-charged speedup over the
unpinned consumer (the verdict's `pin_speedup_charged`, with the significance rule's word
`pin_judgement_charged`), and one sentence whose "pays" / "does not pay" is that word ("within
noise" otherwise). Computed from the frames `study.analyse` already made, so every
printer says the same numbers.
"""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from l2attr.analysis.common import NA, is_missing, ordered_profiles, rows_where, rung_label
from l2attr.analysis.gpus import cross_gpu_reason, two_gpus
from l2attr.ladders.analyse.verdict import HONEST_COMPARAND, PIN_RUNG
from l2attr.dlrm.declare import HEADLINE_FAMILY
from l2attr.vocab import Family, Judgement

REFERENCE_FAMILY = Family.TUNED.value   # the ratio column is taken against its OptMT consumer


def _value(df: pd.DataFrame, field: str, **match: Any) -> float:
    if df is None or df.empty or field not in df or any(k not in df for k in match):
        return NA
    hit = df[field][rows_where(df, **match)].dropna()
    return float(hit.iloc[0]) if len(hit) else NA


def _word(df: pd.DataFrame, field: str, **match: Any) -> str:
    """A judgement word of the verdict row ('within noise' when the row or the word is absent)."""
    if df is None or df.empty or field not in df or any(k not in df for k in match):
        return Judgement.WITHIN_NOISE.value
    hit = df[field][rows_where(df, **match)].dropna()
    return str(hit.iloc[0]) if len(hit) else Judgement.WITHIN_NOISE.value


VERDICT_WORDS = {Judgement.FASTER.value: "the pin pays", Judgement.SLOWER.value: "the pin does not pay"}


def rung_name(family: str, rung: str) -> str:
    """How the family names a rung (the fast family's OptMT slot is `fast`)."""
    return rung_label(rung, family)


def family_table(ladder: pd.DataFrame, verdict: pd.DataFrame, measured: pd.DataFrame,
                 state: str, gpu: Callable[[str, str, str, str], str] | None = None,
                 allow_mixed: bool = False) -> pd.DataFrame:
    """One row per (profile, series) for `state`; empty when no ladder was measured.

    `gpu(family, rung, profile, state)`: the GPU that measured that consumer cell (analysis.gpus);
    the ratio to the tuned OptMT consumer is left out where the two were measured on two GPUs,
    unless `allow_mixed`."""
    if ladder is None or ladder.empty:
        return pd.DataFrame()
    lad = ladder[ladder["l2_state"] == state]
    rows: list[dict[str, Any]] = []
    for profile in ordered_profiles(list(lad["profile"])):
        ref_us = _value(lad, "consumer_us", profile=profile, rung=HONEST_COMPARAND, family=REFERENCE_FAMILY)
        for series in dict.fromkeys(lad["series"]):
            mine = lad[lad["series"] == series]
            family, pin = mine["family"].iloc[0], mine["pin"].iloc[0]
            consumer = _value(mine, "consumer_us", profile=profile, rung=HONEST_COMPARAND)
            if is_missing(consumer):
                continue
            missing: dict[str, str] = {}
            vs_tuned = consumer / ref_us if not is_missing(ref_us) and ref_us > 0 else NA
            if gpu is not None and not allow_mixed and not is_missing(vs_tuned):
                here = gpu(family, HONEST_COMPARAND, profile, state)
                there = gpu(REFERENCE_FAMILY, HONEST_COMPARAND, profile, state)
                if two_gpus(here, there):
                    vs_tuned, missing["vs_tuned"] = NA, cross_gpu_reason(here, there)
            row: dict[str, Any] = {
                "profile": profile, "series": series, "family": family, "pin": pin,
                "unpinned": rung_name(family, HONEST_COMPARAND), "pinned": rung_name(family, PIN_RUNG),
                "consumer_us": consumer, "missing": missing,
                "vs_tuned": vs_tuned,
                "dram_fraction": _value(measured, "dram_fraction", series=series, profile=profile,
                                        rung=HONEST_COMPARAND),
                "dram_GBps": _value(measured, "dram_GBps", series=series, profile=profile, rung=HONEST_COMPARAND),
                "pinned_consumer_us": _value(mine, "consumer_us", profile=profile, rung=PIN_RUNG),
                "pin_us": _value(mine, "pin_us", profile=profile, rung=PIN_RUNG),
                "pin_speedup_consumer": _value(verdict, "pin_speedup_consumer", series=series, profile=profile),
                "pin_speedup_charged": _value(verdict, "pin_speedup_charged", series=series, profile=profile),
                "pin_judgement_charged": _word(verdict, "pin_judgement_charged", series=series, profile=profile),
                "headline_family": family == HEADLINE_FAMILY.value,
            }
            row["sentence"] = sentence(row)
            rows.append(row)
    return pd.DataFrame(rows)


def sentence(row: dict[str, Any]) -> str:
    """Whether the pin pays for this family on this profile, in one line of measured figures."""
    who = f"{row['profile']}, {row['family']} ({row['pin']} pin)"
    parts = [f"{row['unpinned']} consumer {row['consumer_us']:.1f} µs"]
    if not is_missing(row["vs_tuned"]) and row["family"] != REFERENCE_FAMILY:
        parts[0] += f" ({row['vs_tuned']:.2f}× the tuned OptMT consumer)"
    if not is_missing(row["dram_fraction"]):
        parts.append(f"drawing {100 * row['dram_fraction']:.0f} % of the measured read-only HBM bandwidth")
    charged = row["pin_speedup_charged"]
    if is_missing(charged):
        return f"{who}: " + ", ".join(parts) + "; the pin rung was not measured."
    verdict = VERDICT_WORDS.get(row.get("pin_judgement_charged"), "the difference is within noise")
    free = row["pin_speedup_consumer"]
    free_text = f" ({free:.2f}× if the pin were free)" if not is_missing(free) else ""
    return (f"{who}: " + ", ".join(parts) + f"; {row['pinned']} with the pin kernel charged: "
            f"{charged:.2f}×{free_text}: {verdict}.")
