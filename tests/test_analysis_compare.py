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
from l2attr.study import analyse, load_runs
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


def test_a_run_of_one_repeat_is_held_to_the_other_runs_spread(tmp_path):
    """An adaptive cell that stopped after one device repeat (no run-to-run spread of its own):
    A's repeats at 100 and 104 (spread 4/102 = 3.92 %), B's single repeat at 103 (+0.98 % from
    B's view: A's 102 against 103 is -0.97 %): within A's spread, and the source says whose."""
    a = one_cell_run(tmp_path, "A-ladder", "2026-11-29T10:00:00Z", {0: 100.0, 2: 104.0})
    b = one_cell_run(tmp_path, "B-ladder", "2026-11-30T10:00:00Z", {0: 103.0})
    row = analyse(load_runs([a, b])).compare.query("quantity == 'consumer' and timer == 'kernel'").iloc[0]
    assert row["diff_pct"] == pytest.approx((102 / 103 - 1) * 100)
    assert row["spread_pct"] == pytest.approx(4 / 102 * 100)
    assert bool(row["exceeds_spread"]) is False
    assert row["source"].endswith("samples.csv of A-ladder")


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


# --- which GPU measured the pair (recorded uuids) --------------------------------------------------

def _pair(tmp_path: Path, b_us: float, uuid_a: str | None, uuid_b: str | None):
    a = one_cell_run(tmp_path, "A-ladder", "2026-11-29T10:00:00Z", {0: 100.0, 2: 100.0},
                     gpu={"uuid": uuid_a} if uuid_a else {})
    b = one_cell_run(tmp_path, "B-ladder", "2026-11-30T10:00:00Z", {0: b_us, 2: b_us},
                     gpu={"uuid": uuid_b} if uuid_b else {})
    return analyse(load_runs([a, b], allow_mixed=True))


def _identity_line(an) -> str:
    from l2attr.report.compare import pairs
    return pairs(an)[0].sentences[0]


def test_one_gpu_within_tolerance(tmp_path):
    """A at 100 µs, B at 100.5 µs on the same uuid: B is used, A is -0.4975 % from it (within 1 %)."""
    an = _pair(tmp_path, 100.5, "GPU-same", "GPU-same")
    rec = an.compare_identity.iloc[0]
    assert bool(rec["same_gpu"]) is True and rec["consumer_cells"] == 1
    assert rec["consumer_max_abs_diff_pct"] == pytest.approx((1 - 100 / 100.5) * 100)
    assert bool(rec["consumer_within_tolerance"]) is True
    line = _identity_line(an)
    assert line.startswith("one GPU (") and "GPU-same" in line and "every consumer (kernel timer) median within 1 %" in line
    assert "at most 0.50 %" in line


def test_one_gpu_beyond_tolerance(tmp_path):
    """104 against 100: 3.85 % apart, not within 1 %."""
    an = _pair(tmp_path, 104.0, "GPU-same", "GPU-same")
    assert bool(an.compare_identity.iloc[0]["consumer_within_tolerance"]) is False
    assert "not every consumer (kernel timer) median within 1 %" in _identity_line(an)


def test_two_gpus_are_two_machines(tmp_path):
    an = _pair(tmp_path, 100.0, "GPU-a", "GPU-b")
    assert bool(an.compare_identity.iloc[0]["same_gpu"]) is False
    assert "a comparison of two machines" in _identity_line(an)


def test_a_missing_uuid_is_never_the_same_gpu(tmp_path):
    an = _pair(tmp_path, 100.0, "GPU-a", None)
    assert an.compare_identity.iloc[0]["same_gpu"] is None
    assert "not recorded by both runs" in _identity_line(an)
