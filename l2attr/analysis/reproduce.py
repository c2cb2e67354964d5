"""Does a fresh run reproduce a committed one? Ladder cells by medians, layer B by definition.

Ladder: every consumer kernel-timer cell of both runs, the relative difference, and whether it is
inside the noise a second process shows: the larger of the two runs' repeat spreads, or, when a
second process on one GPU was measured (`same_gpu`), the largest difference between those two.
Layer B: the same metric names, the same (condition, role, cell, table, batch) keys, the same row
count (identical in definition), then the consumer's headline hit rate and DRAM read per cell.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from l2attr.analysis.calls import call_table, headline_rate
from l2attr.analysis.spread import repeat_spread
from l2attr.vocab import Quantity, Role, Timer

LADDER_KEYS = ["family", "rung", "pin", "profile", "l2_state"]
LAYER_B_KEYS = ["condition", "role", "family", "rung", "pin", "profile", "table", "batch", "metric"]


def _consumer(cells: pd.DataFrame) -> pd.DataFrame:
    return cells[(cells["quantity"] == Quantity.CONSUMER.value) & (cells["timer"] == Timer.KERNEL.value)]


def ladder_diff(old_cells: pd.DataFrame, old_samples: pd.DataFrame, new_cells: pd.DataFrame,
                new_samples: pd.DataFrame) -> pd.DataFrame:
    """One row per shared consumer cell: medians, difference %, the larger repeat spread %."""
    m = _consumer(new_cells).merge(_consumer(old_cells), on=LADDER_KEYS, suffixes=("_new", "_old"))
    m["diff_pct"] = (m["median_us_new"] / m["median_us_old"] - 1.0) * 100.0
    spreads = [repeat_spread(s).set_index(LADDER_KEYS)["spread_pct"] for s in (old_samples, new_samples)]
    both = pd.concat(spreads, axis=1).max(axis=1).rename("spread_pct").reset_index()
    return m.merge(both, on=LADDER_KEYS, how="left")[[*LADDER_KEYS, "median_us_old", "median_us_new",
                                                      "diff_pct", "spread_pct"]]


@dataclass(frozen=True)
class LayerBDefinition:
    same_metrics: bool
    same_keys: bool
    rows_old: int
    rows_new: int

    @property
    def identical(self) -> bool:
        return self.same_metrics and self.same_keys and self.rows_old == self.rows_new


def layer_b_definition(old: pd.DataFrame, new: pd.DataFrame) -> LayerBDefinition:
    keys = [k for k in LAYER_B_KEYS if k in old.columns and k in new.columns]
    ko = set(old[keys].astype(str).itertuples(index=False, name=None))
    kn = set(new[keys].astype(str).itertuples(index=False, name=None))
    return LayerBDefinition(set(old["metric"]) == set(new["metric"]), ko == kn, len(old), len(new))


def layer_b_values(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """Per consumer cell: the median over its calls of the headline hit rate and of DRAM read."""
    rate = headline_rate()
    out = []
    for tag, m in (("old", old), ("new", new)):
        c = call_table(m)
        c = c[c["role"] == Role.CONSUMER.value]
        g = c.groupby(["condition", "family", "rung", "pin", "profile"])[[rate, "dram_read"]].median()
        out.append(g.add_suffix(f"_{tag}"))
    both = out[0].join(out[1], how="inner").reset_index()
    both["hit_rate_diff_points"] = both[f"{rate}_new"] - both[f"{rate}_old"]
    both["dram_read_diff_pct"] = (both["dram_read_new"] / both["dram_read_old"] - 1.0) * 100.0
    return both
