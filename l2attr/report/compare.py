"""The compare section's wording: one sentence per pair of runs and timer (analysis.compare)."""

from __future__ import annotations

from typing import Any

from l2attr.analysis.compare import QUANTITY_LABELS


def quantity_label(quantity: str, timer: str) -> str:
    return QUANTITY_LABELS.get((quantity, timer), f"{quantity} ({timer})")


def summary_sentence(rec: dict[str, Any]) -> str:
    """'consumer (kernel timer): 44 cells, |difference| median 0.13 %, at most 0.51 % (cell); 9 of
    44 exceed the larger of the two runs' run-to-run spreads'."""
    text = (f"{quantity_label(rec['quantity'], rec['timer'])}: {rec['cells']} cells, |difference| median "
            f"{rec['median_abs_diff_pct']:.2f} %, at most {rec['max_abs_diff_pct']:.2f} % ({rec['worst_cell']})")
    if rec["with_spread"]:
        text += (f"; {rec['exceeding']} of {rec['with_spread']} exceed the larger of the two runs' "
                 "run-to-run spreads")
    else:
        text += "; no repeat spread for this quantity"
    return text


def pair_title(used_run: str, run: str) -> str:
    return f"{run} against {used_run} (the run the analysis uses)"
