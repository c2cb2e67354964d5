"""examples/reproduction/README.md is what l2attr.analysis.reproduce makes of the runs it names,
and the comparison's mechanism holds on hand-made cells."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

from l2attr.analysis.reproduce import ladder_diff, layer_b_definition

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("reproduction", ROOT / "tools" / "docgen" / "reproduction.py")
reproduction = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reproduction)


def test_reproduction_page_is_current():
    assert (ROOT / "examples" / "reproduction" / "README.md").read_text() == reproduction.text()


def _cells(median: float) -> pd.DataFrame:
    return pd.DataFrame([{"family": "f", "rung": "r", "pin": "none", "profile": "p", "l2_state": "natural",
                          "quantity": "consumer", "timer": "kernel", "median_us": median}])


def _samples(values: list[float]) -> pd.DataFrame:
    return pd.DataFrame([{"family": "f", "rung": "r", "pin": "none", "profile": "p", "l2_state": "natural",
                          "repeat": i, "consumer_time_us": v} for i, v in enumerate(values)])


def test_ladder_diff_by_hand():
    d = ladder_diff(_cells(100.0), _samples([99.0, 101.0]), _cells(101.0), _samples([100.0, 100.0]))
    row = d.iloc[0]
    assert row["diff_pct"] == pytest.approx(1.0) and row["spread_pct"] == pytest.approx(2.0)


def test_layer_b_definition_by_hand():
    a = pd.DataFrame({"condition": ["ladder"], "role": ["consumer"], "metric": ["m"], "table": [0]})
    assert layer_b_definition(a, a.copy()).identical
    assert not layer_b_definition(a, a.assign(metric=["other"])).identical
