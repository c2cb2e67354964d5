"""Name the kernels of an ncu report by the order they were launched in.

A benchmark that launches many variants of one kernel (same function name, different compile
options or launch shapes) cannot tell them apart in the report by name; it can write down, launch
by launch, which variant it started, and ncu records the profiled kernels in launch order. This
joins the two and gives per-name medians, refusing (rather than mislabelling) when the counts
differ.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from l2attr.errors import UserError


def label_medians(table: pd.DataFrame, labels: Sequence[str], metrics: Sequence[str]) -> pd.DataFrame:
    """One row per label: the median of each metric over that label's launches.

    `table` is `ncu_import.read_report(...).table` (one row per launch and metric, `launch` the
    position among the report's kernels); `labels[i]` names the i-th profiled launch."""
    wide = table[table["metric"].isin(metrics)].pivot_table(
        index="launch", columns="metric", values="value", aggfunc="first").sort_index()
    if len(wide) != len(labels):
        raise UserError(f"{len(wide)} kernels in the report, {len(labels)} launches labelled: "
                        "the report does not match the launch list")
    missing = [m for m in metrics if m not in wide.columns]
    if missing:
        raise UserError(f"the report has no {', '.join(missing)}")
    wide = wide.assign(label=list(labels))
    return wide.groupby("label", sort=False)[list(metrics)].median()
