"""Which run's measured bandwidth the analysis uses when several runs recorded one."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from l2attr.analysis.load import Run, Study


def _run(name: str, kind: str, created: str, **measured: float) -> Run:
    manifest = {"kind": kind, "created_utc": created, **measured}
    return Run(name=name, path=Path(name), manifest=manifest, samples=None, cells=None, metrics=None)


def _study(runs: list[Run]) -> Study:
    empty = pd.DataFrame()
    return Study(runs=runs, config={}, samples=empty, cells=empty, metrics=empty)


def test_the_newest_ladder_run_that_measured_it_wins_whatever_the_order_given():
    old = _run("a-bench", "ladder", "2026-11-30T19:31:29Z", hbm_read_GBps=4557.0)
    new = _run("b-bench", "ladder", "2026-11-30T23:13:56Z", hbm_read_GBps=4511.0)
    silent = _run("c-bench", "ladder", "2026-11-30T23:59:00Z")            # newest, measured nothing
    for order in ([old, new, silent], [silent, new, old]):
        value, source = _study(order).measured("hbm_read_GBps")
        assert (value, source.split("/")[0]) == (4511.0, "b-bench")


def test_a_ladder_run_is_preferred_to_a_newer_profile_run():
    ladder = _run("a-bench", "ladder", "2026-11-30T19:00:00Z", l2_read_GBps=21000.0)
    profile = _run("b-profile", "profile", "2026-11-30T20:00:00Z", l2_read_GBps=99999.0)
    assert _study([profile, ladder]).measured("l2_read_GBps")[0] == 21000.0
    assert _study([profile]).measured("l2_read_GBps")[0] == 99999.0
    assert _study([ladder]).measured("hbm_read_GBps") == (None, "no run's manifest records hbm_read_GBps")


def test_near_a_time_the_ladder_run_made_closest_to_it_wins():
    from datetime import datetime, timezone

    before = _run("a-bench", "ladder", "2026-11-30T23:13:56+00:00", hbm_read_GBps=4511.0)
    after = _run("c-element", "ladder", "2026-11-30T23:25:57+00:00", hbm_read_GBps=4506.0)
    undated = _run("d-bench", "ladder", "not a time", hbm_read_GBps=4400.0)
    profile = _run("b-profile", "profile", "2026-11-30T23:15:41+00:00")
    study = _study([undated, after, before, profile])
    near = study.newest_time("profile")
    assert near == datetime(2026, 11, 30, 23, 15, 41, tzinfo=timezone.utc)
    assert study.measured("hbm_read_GBps", near=near)[0] == 4511.0      # 1 min 45 s before it
    assert study.measured("hbm_read_GBps")[0] == 4506.0                  # without: the newest
    assert _study([before]).newest_time("profile") is None
