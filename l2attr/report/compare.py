"""The compare section's wording: one sentence per pair of runs and timer (analysis.compare)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from l2attr.analysis.compare import QUANTITY_LABELS, SAME_GPU_TOLERANCE_PCT


def quantity_label(quantity: str, timer: str) -> str:
    return QUANTITY_LABELS.get((quantity, timer), f"{quantity} ({timer})")


def summary_sentence(rec: dict[str, Any]) -> str:
    """'consumer (kernel timer): 44 cells, |difference| median 0.13 %, at most 0.51 % (cell); 9 of
    44 exceed the larger of the two runs' repeat spreads (within each process)'."""
    text = (f"{quantity_label(rec['quantity'], rec['timer'])}: {rec['cells']} cells, |difference| median "
            f"{rec['median_abs_diff_pct']:.2f} %, at most {rec['max_abs_diff_pct']:.2f} % ({rec['worst_cell']})")
    if rec["with_spread"]:
        text += (f"; {rec['exceeding']} of {rec['with_spread']} exceed the larger of the two runs' "
                 "repeat spreads (within each process): the difference between processes is the cross-process "
                 "spread")
    else:
        text += "; no repeat spread for this quantity"
    return text


def identity_sentence(rec: dict[str, Any] | None) -> str:
    """Which GPU measured the two runs, from their recorded uuids, and (on one GPU) whether every
    consumer median agrees within the tolerance."""
    if not rec:
        return "GPU identity: not recorded for this pair"
    if rec["same_gpu"] is None:
        return ("GPU identity: not recorded by both runs (no uuid), so this may be a comparison of two "
                "machines")
    if not rec["same_gpu"]:
        return (f"two GPUs ({rec['used_uuid']} and {rec['uuid']}): a comparison of two machines, whose "
                "differences include the machine's")
    text = f"one GPU ({rec['gpu_name']} {rec['uuid']}), two processes"
    if rec["consumer_within_tolerance"] is None:
        return text + "; no consumer kernel-timer cells in common"
    if rec["consumer_within_tolerance"]:
        head = f"every consumer (kernel timer) median within {SAME_GPU_TOLERANCE_PCT:g} % of the other run's"
    else:
        head = f"not every consumer (kernel timer) median within {SAME_GPU_TOLERANCE_PCT:g} % of the other run's"
    return f"{text}: {head} ({rec['consumer_cells']} cells, at most {rec['consumer_max_abs_diff_pct']:.2f} %)"


def pair_title(used_run: str, run: str) -> str:
    return f"{run} against {used_run} (the run the analysis uses)"


@dataclass(frozen=True)
class Pair:
    """One pair of runs that share cells, as both renderers show it."""

    title: str
    sentences: list[str]
    settings: pd.DataFrame      # setting, used_value, value
    cells: pd.DataFrame         # analysis.compare's rows of this pair
    one_sided: int = 0          # settings only one of the two runs records (not listed)


def pairs(an: Any) -> list[Pair]:
    """Per pair of runs (analysis order): the title, one sentence per timer, the settings that
    differ and the cells."""
    out = []
    one_sided = an.compare_one_sided
    ident = an.compare_identity
    ids = {} if ident is None or ident.empty else {(r["used_run"], r["run"]): r for r in ident.to_dict("records")}
    for (used, run), summary in an.compare_summary.groupby(["used_run", "run"], sort=False):
        def of(df: pd.DataFrame) -> pd.DataFrame:
            return df[(df["used_run"] == used) & (df["run"] == run)]
        out.append(Pair(pair_title(used, run), [identity_sentence(ids.get((used, run)))]
                        + [summary_sentence(r) for r in summary.to_dict("records")],
                        of(an.compare_settings), of(an.compare), one_sided.get((used, run), 0)))
    return out
