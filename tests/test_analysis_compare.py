"""Runs that measured the same cell: the newest ladder run's row is used, the other is set beside it.

One cell (artifact OptMT, random, natural) in two ladder runs built by the real writers. Run A
(older): device repeats with every call at 100 µs and then 102 µs -> median 101, repeat medians
100 and 102, spread 2/101 = 1.98 %. Run B (newer): 104 µs in both repeats -> median 104, spread 0.
So A against B: (101/104 - 1) = -2.88 %, beyond the larger spread (1.98 %).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from helpers_rundirs import one_cell_run
from l2attr.analysis import analyse, load_runs
from l2attr.report.markdown import render_markdown


@pytest.fixture
def two_runs(tmp_path: Path) -> list[Path]:
    a = one_cell_run(tmp_path, "A-ladder", "2026-11-29T10:00:00Z", {0: 100.0, 2: 102.0},
             measure={"spin_us": 50.0}, versions={"git_sha": "aaa"})
    b = one_cell_run(tmp_path, "B-ladder", "2026-11-30T10:00:00Z", {0: 104.0, 2: 104.0},
             measure={"spin_us": 30.0}, versions={"git_sha": "bbb"})
    return [a, b]


@pytest.mark.parametrize("order", [0, 1])
def test_newest_run_is_used_and_the_other_compared(two_runs, order):
    an = analyse(load_runs(two_runs if order == 0 else two_runs[::-1]))
    used = an.study.cells[(an.study.cells["quantity"] == "consumer") & (an.study.cells["timer"] == "kernel")]
    assert list(used["run"]) == ["B-ladder"] and used["median_us"].iloc[0] == pytest.approx(104.0)
    row = an.compare[(an.compare["quantity"] == "consumer") & (an.compare["timer"] == "kernel")].iloc[0]
    assert (row["used_run"], row["run"]) == ("B-ladder", "A-ladder")
    assert row["median_us"] == pytest.approx(101.0)
    assert row["diff_pct"] == pytest.approx((101 / 104 - 1) * 100)
    assert row["spread_pct"] == pytest.approx(2 / 101 * 100)
    assert bool(row["exceeds_spread"]) is True


def test_spread_decides_exceeds(tmp_path):
    """Same medians 1 % apart, but run A's repeats move 4 %: not beyond the spread."""
    a = one_cell_run(tmp_path, "A-ladder", "2026-11-29T10:00:00Z", {0: 99.0, 2: 103.0})
    b = one_cell_run(tmp_path, "B-ladder", "2026-11-30T10:00:00Z", {0: 100.0, 2: 100.0})
    row = analyse(load_runs([a, b])).compare.query("quantity == 'consumer' and timer == 'kernel'").iloc[0]
    assert row["diff_pct"] == pytest.approx(1.0)
    assert row["spread_pct"] == pytest.approx(4 / 101 * 100)
    assert bool(row["exceeds_spread"]) is False


def test_settings_that_differ_are_listed(two_runs):
    an = analyse(load_runs(two_runs))
    got = {r["setting"]: (r["used_value"], r["value"]) for r in an.compare_settings.to_dict("records")}
    assert got == {"measure.spin_us": ("30.0", "50.0"), "versions.git_sha": ("bbb", "aaa")}


def test_summary_and_markdown(two_runs):
    an = analyse(load_runs(two_runs))
    s = an.compare_summary.query("quantity == 'consumer' and timer == 'kernel'").iloc[0]
    assert (s["cells"], s["with_spread"], s["exceeding"]) == (1, 1, 1)
    md = render_markdown(an)
    assert "**Compare runs**" in md
    assert "consumer (kernel timer): 1 cells, |difference| median 2.88 %, at most 2.88 %" in md
    assert "| measure.spin_us | 30.0 | 50.0 |" in md
    assert any("A-ladder measured" in c.text and c.level == "info" for c in an.caveats)


def test_no_overlap_no_compare(two_runs):
    an = analyse(load_runs(two_runs[:1]))
    assert an.compare.empty and an.compare_summary.empty
    assert "Compare runs" not in render_markdown(an)
