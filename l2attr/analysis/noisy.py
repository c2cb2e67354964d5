"""Which cells of an adaptive run stopped at the limit: one sentence for every kind of run.

Why one place: the ladder's cells, an experiment's conditions and a sweep's points all carry the
engine's `stopped` column (measure/adaptive.py: target or limit); a cell at the limit has a median
less certain than the run's target, and every report page says so in the same words.
"""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd

from l2attr.vocab import RepeatStop


def limit_names(table: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    """The cells (keys joined by /) whose `stopped` is limit; none in a fixed run."""
    if table.empty or "stopped" not in table.columns:
        return []
    hit = table[table["stopped"].astype(str) == RepeatStop.LIMIT.value]
    return sorted({"/".join(map(str, k)) for k in hit[list(keys)].to_numpy()})


def limit_note(table: pd.DataFrame, keys: Sequence[str], rule: dict[str, Any] | None) -> str:
    """'N cell(s) noisy: stopped at the limit (...): a, b', or '' when none."""
    names = limit_names(table, keys)
    if not names:
        return ""
    target = (f" (its 95 % interval did not close to ±{float(rule['target_rel']):.1%} of the median)"
              if rule and rule.get("target_rel") else "")
    return f"{len(names)} cell(s) noisy: stopped at the limit{target}: {', '.join(names)}"
