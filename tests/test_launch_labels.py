"""Naming an ncu report's kernels by launch order (l2attr.profile.ncu_import), on a hand-made
table whose medians are worked out by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from l2attr.errors import UserError
from l2attr.profile.ncu_import import label_medians

METRICS = ("dram__bytes_read.sum", "gpu__time_duration.sum")


def _table(rows: list[tuple[int, float, float]]) -> pd.DataFrame:
    out = []
    for launch, dram, ns in rows:
        out += [{"launch": launch, "metric": METRICS[0], "value": dram},
                {"launch": launch, "metric": METRICS[1], "value": ns},
                {"launch": launch, "metric": "derived:lts__t_sectors_hit_rate.pct", "value": 50.0}]
    return pd.DataFrame(out)


def test_medians_per_label_follow_the_launch_order_not_the_row_order():
    # launches 0-2 are "read", 3-4 "fast"; rows arrive shuffled
    t = _table([(4, 120.0, 40.0), (0, 10.0, 1.0), (3, 100.0, 38.0), (2, 30.0, 3.0), (1, 20.0, 2.0)])
    med = label_medians(t, ["read", "read", "read", "fast", "fast"], METRICS)
    assert list(med.index) == ["read", "fast"]
    assert med.loc["read"].tolist() == [20.0, 2.0]            # median of 10, 20, 30 and of 1, 2, 3
    assert med.loc["fast"].tolist() == [110.0, 39.0]          # median of 100, 120 and of 38, 40


def test_a_count_mismatch_is_refused_not_mislabelled():
    t = _table([(0, 1.0, 1.0), (1, 2.0, 2.0)])
    with pytest.raises(UserError, match="2 kernels in the report, 3 launches labelled"):
        label_medians(t, ["a", "b", "c"], METRICS)


def test_a_missing_metric_is_named():
    t = _table([(0, 1.0, 1.0)])
    t = t[t["metric"] != METRICS[1]]
    with pytest.raises(UserError, match="gpu__time_duration.sum"):
        label_medians(t, ["a"], METRICS)
