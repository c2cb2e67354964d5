"""tools/compare/profiles.py on hand-made call tables: same keys, medians within the committed
spread, judged against the committed runs' own disagreement."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("compare_profile", ROOT / "tools" / "compare" / "profiles.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def _calls(cells: dict[str, list[float]]) -> pd.DataFrame:
    rows = []
    for rung, values in cells.items():
        for t, v in enumerate(values):
            rows.append({"condition": "ladder", "role": "consumer", "family": "artifact", "rung": rung,
                         "pin": "none", "profile": "random", "l2_state": "natural", "table": t, "dram_read": v})
    return pd.DataFrame(rows)


A = _calls({"optmt": [10.0, 11.0, 12.0, 13.0], "baseline": [20.0, 21.0, 22.0, 23.0]})
B = _calls({"optmt": [10.5, 11.5, 12.5, 13.5], "baseline": [20.5, 21.5, 22.5, 23.5]})


def test_medians_inside_the_committed_spread_hold():
    tool = _tool()
    new = _calls({"optmt": [12.0, 13.0], "baseline": [21.0, 23.0]})     # medians 12.5, 22 in [10, 13.5], [20, 23.5]
    res = tool.against_committed(new, [A, B])
    assert res["same_keys"] and res["pairs"] == 2 and res["within_spread"] == 2 and res["holds"]
    assert res["committed_outside_shares"] == [0.0, 0.0]
    assert res["calls_per_cell_new"] == 2 and res["calls_per_cell_committed"] == 4


def test_a_median_outside_fails_when_the_committed_runs_agree():
    tool = _tool()
    new = _calls({"optmt": [14.0, 15.0], "baseline": [21.0, 22.0]})     # 14.5 > 13.5
    res = tool.against_committed(new, [A, B])
    assert res["within_spread"] == 1 and not res["holds"]
    assert res["outside"][0]["quantity"] == "dram_read" and res["outside"][0]["new"] == 14.5


def test_a_missing_cell_is_a_key_difference():
    tool = _tool()
    res = tool.against_committed(_calls({"optmt": [12.0, 13.0]}), [A, B])
    assert not res["same_keys"] and not res["holds"]
