"""Step attribution on recorded H200 output: the kineto trace of the self-check step (in
tests/fixtures/steps/) parses to the kernels its run holds, ops are matched by launch time, the
edge mul -> sum is found from tensor identity, and the self-check's recorded answer holds."""

from __future__ import annotations

import gzip
import json

from l2attr.steps.analyse.answer import analyse_step
from l2attr.steps.table import load_step
from l2attr.cli import main
from l2attr.steps.measure.trace import Slots, kernels

from conftest import EXAMPLES, FIXTURES

RUNS = sorted(p for p in (EXAMPLES / "steps" / "runs").iterdir() if (p / "manifest.json").is_file())
QUARTER = next(p for p in RUNS if p.name.endswith("-selfcheck-quarter-l2"))
FOUR = next(p for p in RUNS if p.name.endswith("-selfcheck-4x-l2"))
TRACE = FIXTURES / "steps" / "selfcheck_quarter_trace.json.gz"


def _numbered(trace: dict) -> tuple[dict, Slots]:
    """The fixture predates numbered ranges: its steps are named `l2attr:step:<condition>:<i>`.
    Each is renamed to the slot a `Slots` gives it, its condition and step kept there, so the
    recorded kineto events (launches, correlations, kernels) are read by today's reader."""
    slots, events = Slots(), []
    for e in trace["traceEvents"]:
        parts = str(e.get("name", "")).split(":")
        if e.get("ph") == "X" and len(parts) == 4 and parts[:2] == ["l2attr", "step"]:
            e = {**e, "name": slots.name(condition=parts[2], step=int(parts[3]))}
        events.append(e)
    assert len(slots.fields) >= 2
    return {**trace, "traceEvents": events}, slots


def test_recorded_trace_parses_to_the_committed_kernels():
    got = kernels(*_numbered(json.loads(gzip.decompress(TRACE.read_bytes()))))
    _, committed, ops, _ = load_step(QUARTER)
    key = ["condition", "step", "op_index", "kernel_index"]
    a, b = got.sort_values(key).reset_index(drop=True), committed.sort_values(key).reset_index(drop=True)
    assert list(a[key].itertuples(index=False)) == list(b[key].itertuples(index=False))
    assert (a["kernel"] == b["kernel"]).all() and ((a["duration_us"] - b["duration_us"]).abs() < 1e-6).all()
    # two ops per step (mul, sum), one kernel each, none outside an op, no flush kernel kept
    assert list(ops["op"]) == ["mul", "sum"] and set(a["op_index"]) == {0, 1}
    assert not a["kernel"].str.contains("flush_l2").any()


def test_recorded_self_check_and_its_edge():
    q, f = analyse_step(QUARTER), analyse_step(FOUR)
    sum_q = q.kernels[q.kernels["op"] == "sum"].iloc[0]
    sum_f = f.kernels[f.kernels["op"] == "sum"].iloc[0]
    assert sum_q["judgement"] == "faster" and sum_f["judgement"] != "faster"
    e = q.edges[(q.edges["producer"] == 0) & (q.edges["consumer"] == 1)].iloc[0]
    l2 = int(q.manifest["gpu"]["l2_bytes"])
    assert e["bytes"] == l2 // 4                        # sum read exactly what mul wrote


def test_every_committed_step_run_loads_and_reports(tmp_path, capsys):
    for run in RUNS:
        load_step(run)
    assert main(["step", "--show", str(QUARTER)]) == 0
    assert "selfcheck-quarter-l2" in capsys.readouterr().out
    out = tmp_path / "steps.html"
    assert main(["report", *map(str, RUNS), "-o", str(out)]) == 0
    assert "waterfall" in out.read_text().lower() or "Waterfall" in out.read_text()


def test_every_committed_step_run_answers_by_itself_and_prints_as_show_does(capsys):
    """Issue 37: StepAnswer.from_run on every committed step run, named and placed; headline() with no
    argument; repr is exactly what `l2attr step --show` prints."""
    from l2attr.steps.analyse.answer import StepAnswer

    found = sorted({p.parent for p in (EXAMPLES / "steps").rglob("manifest.json")})
    assert len(found) >= 30
    for run in found:
        ans = StepAnswer.from_run(run)
        assert ans.name and ans.run_dir == run, run
        assert f"{ans.name}: " in ans.headline(), run
        assert main(["step", "--show", str(run)]) == 0
        assert capsys.readouterr().out.rstrip("\n") == repr(ans), run


def test_every_committed_step_run_was_timed_on_a_32_ns_clock():
    """docs/facts.md#clock-tick says the committed step runs' kernel durations step by 32 ns, and
    step-method.md that intervals are widened by that tick: held here to every committed run."""
    import pandas as pd

    from l2attr.analysis.significance import clock_tick_us

    runs = sorted({p.parent for p in EXAMPLES.rglob("step_kernels.csv*")})
    assert len(runs) > 20
    ticks = {r.name: clock_tick_us(pd.read_csv(next(r.glob("step_kernels.csv*")))["duration_us"]) for r in runs}
    assert {t for t in ticks.values()} == {0.032}, {n: t for n, t in ticks.items() if t != 0.032}
    assert "whole multiples of 32 ns" in (EXAMPLES.parent / "docs" / "facts.md").read_text()
