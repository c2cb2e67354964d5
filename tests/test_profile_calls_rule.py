"""Calls per cell (l2attr/profile/calls_rule.py): the rule on hand-made call tables, and the
profile's default held to the rule's answer on the committed fixed runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

from l2attr.dlrm.config import build_config
from l2attr.dlrm.profile.plan import DEFAULT_CALLS_PER_CELL, default_calls, plan_jobs
from l2attr.profile.calls_rule import calls_needed

ROOT = Path(__file__).resolve().parents[1]
KEYS = ("cell",)


def _run(cells: dict[str, list[float]]) -> pd.DataFrame:
    """A call table: one row per (cell, table) with quantity q."""
    return pd.DataFrame([{"cell": c, "table": t, "q": v} for c, vals in cells.items() for t, v in enumerate(vals)])


STEADY = [5.0] * 12
LAST_ODD = [5.0] * 11 + [9.0]       # median 5, interval [5, 5]; last 1: 9, last 2: 7, last 3: 5


def test_steady_cells_need_one_call():
    assert calls_needed([_run({"a": STEADY, "b": [2.0] * 12})], KEYS, ["q"]).calls == 1


def test_an_odd_last_call_needs_three_the_last_calls_counting_not_the_first():
    assert calls_needed([_run({"a": LAST_ODD})], KEYS, ["q"]).calls == 3
    assert calls_needed([_run({"a": LAST_ODD[::-1]})], KEYS, ["q"]).calls == 1   # the odd call first


def test_one_pair_in_twenty_outside_is_the_interval_own_rate_one_in_nineteen_is_not():
    twenty = {"odd": LAST_ODD, **{f"s{i}": STEADY for i in range(19)}}
    nineteen = {"odd": LAST_ODD, **{f"s{i}": STEADY for i in range(18)}}
    assert calls_needed([_run(twenty)], KEYS, ["q"]).calls == 1          # 1/20 = 5 %
    assert calls_needed([_run(nineteen)], KEYS, ["q"]).calls == 3        # 1/19 > 5 %


def test_every_run_must_allow_the_count():
    v = calls_needed([_run({"a": STEADY}), _run({"a": LAST_ODD})], KEYS, ["q"])
    assert v.calls == 3 and v.outside[1] == [0.0, 1.0] and v.pairs == [1, 1]


def test_two_odd_last_calls_need_five():
    # median 5, interval [5, 5]; the last 1, 2, 3 calls: 9; last 4: (5 + 9) / 2 = 7; last 5: 5
    v = calls_needed([_run({"a": [5.0] * 10 + [9.0, 9.0]})], KEYS, ["q"])
    assert v.calls == 5 and [v.outside[c] for c in (4, 5)] == [[1.0], [0.0]]


def test_the_default_profiles_the_rules_count_of_last_calls():
    cfg = build_config("artifact")
    job = plan_jobs(Path("/r"), cfg, ["optmt"], ["random"], None)[0]
    argv = list(job.child)
    assert argv[argv.index("--nvtx-last") + 1] == str(DEFAULT_CALLS_PER_CELL)
    assert default_calls(build_config("small")) == min(DEFAULT_CALLS_PER_CELL, build_config("small").tables)


def test_the_default_is_the_rules_answer_on_the_committed_fixed_runs():
    spec = importlib.util.spec_from_file_location("calls_per_cell", ROOT / "tools" / "compare" / "calls_per_cell.py")
    tool = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(tool)
    runs = [ROOT / r for r in tool.FIXED_RUNS]
    if not all(r.is_dir() for r in runs):
        pytest.skip("the committed fixed profile runs are not in this checkout")
    assert tool.verdict(runs).calls == DEFAULT_CALLS_PER_CELL
