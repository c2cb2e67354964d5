"""A pair l2attr has never seen, declared here, through the CPU path of the engine: declaration,
protocol order on a fake GPU, run dir, NVTX names and their parse, integrity, analysis.

The fake GPU's kernel times are chosen by hand so the answers are known: a consumer that takes
10 us after its producer and 14 us without it (or after a flush), a producer of 2 us (wall 5 us)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

import l2attr
from l2attr.experiment.result import ExperimentResult
from l2attr.experiment.table import analyse_experiment, load_experiment
from l2attr.errors import UserError
from l2attr.measure.cell import CallOps, device_call, host_call, run_repeat
from l2attr.measure.timer import Sample
from l2attr.vocab import KEPT, L2Condition, Judgement, Role
from l2attr.names import experiment_range_name, parse_experiment_range


class FakeTimer:
    """Runs the launch, returns the time the fake GPU says it took."""

    def __init__(self, gpu: "FakeGpu") -> None:
        self.gpu = gpu

    def time(self, launch) -> Sample:
        self.gpu.log.append("timer")
        us = launch()
        return Sample(float(us), 1.0, KEPT, 1980.0)


class FakeGpu:
    """A GPU whose L2 holds the producer's output until a flush; a host clock that advances by
    what each launch costs (plus 3 us of launch + sync per producer step)."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.warm = False
        self.clock = 0.0
        self.timer = FakeTimer(self)
        self.reset_ok = True

    def flush_l2(self) -> None:
        self.log.append("flush")
        self.warm = False

    def reset_persisting(self) -> None:
        self.log.append("reset")

    def sync(self) -> None:
        self.log.append("sync")

    def host_us(self) -> float:
        return self.clock

    def facts(self) -> dict:
        return {"gpu": {"name": "Fake GPU", "uuid": "GPU-fake-0", "host": "cpu"}, "software": {"l2attr": "test"}}

    def close(self) -> None:
        pass

    # the user's pair
    def producer(self) -> float:
        self.log.append("producer")
        self.warm = True
        self.clock += 5.0
        return 2.0

    def consumer(self) -> float:
        self.log.append("consumer")
        us = 10.0 if self.warm else 14.0
        self.warm = False          # the consumer's own traffic pushes the lines out
        self.clock += us
        return us


def test_protocol_order_per_condition() -> None:
    g = FakeGpu()
    ops = CallOps(consumer=g.consumer, producer=g.producer)
    expected = {
        L2Condition.NATURAL: ["timer", "producer", "timer", "consumer"],
        L2Condition.NO_PRODUCER: ["timer", "consumer"],
        L2Condition.FLUSH_BEFORE_CALL: ["flush", "timer", "producer", "timer", "consumer"],
        L2Condition.FLUSH_AFTER_PRODUCER: ["timer", "producer", "flush", "timer", "consumer"],
        L2Condition.RESET_AFTER_PRODUCER: ["timer", "producer", "reset", "timer", "consumer"],
    }
    for cond, order in expected.items():
        g.log.clear()
        device_call(g, ops, cond, 0)
        assert g.log == order, cond
    g.log.clear()
    row = host_call(g, ops, L2Condition.FLUSH_AFTER_PRODUCER, 0)
    assert g.log == ["producer", "sync", "flush", "consumer", "sync"]
    assert row["producer_wall_us"] == 5.0 and row["consumer_wall_us"] == 14.0
    assert row["call_wall_us"] == 19.0      # the control's flush is not in the call


def test_repeat_drops_warmup_and_cold_call_and_names_ranges() -> None:
    g = FakeGpu()
    seen: list[tuple[str, int]] = []

    def ranges(role: Role, call: int):
        seen.append((role.value, call))
        from contextlib import nullcontext
        return nullcontext()

    rows = run_repeat(g, lambda i: CallOps(g.consumer, g.producer), L2Condition.NATURAL, "device",
                      calls=4, warmup=2, ranges=ranges, ranges_from=1)
    assert g.log[0] == "flush"                          # a clean start
    assert [r["call"] for r in rows] == [1, 2, 3]       # warm-up and the cold first call dropped
    assert seen == [(r, c) for c in (1, 2, 3) for r in ("producer", "consumer")]


def test_nvtx_names_round_trip_and_stay_apart_from_the_ladder() -> None:
    name = experiment_range_name("consumer", "my-pair", "flush_after_producer", 7)
    assert name == "consumer:my-pair:flush_after_producer:c7"
    got = parse_experiment_range(f"l2attr@{name}")
    assert got == {"role": "consumer", "experiment": "my-pair", "condition": "flush_after_producer", "call": 7}
    assert parse_experiment_range("l2attr@producer:mine") == {
        "role": "producer", "experiment": "mine", "condition": "", "call": None}
    ladder = "l2attr@consumer:tuned:optmt:none:random:natural:t0:b0"
    assert parse_experiment_range(ladder)["experiment"] == ""
    assert parse_experiment_range("other@consumer:x")["experiment"] == ""
    with pytest.raises(UserError):
        experiment_range_name("consumer", "has space")


def test_declaration_is_checked() -> None:
    with pytest.raises(UserError, match="need a producer"):
        l2attr.Experiment("p", consumer=lambda: 0, conditions=["natural", "no_producer"])
    with pytest.raises(UserError, match="valid"):
        l2attr.Experiment("p", consumer=lambda: 0, conditions=["natural", "banana"])
    with pytest.raises(UserError, match="baseline"):
        l2attr.Experiment("p", consumer=lambda: 0, producer=lambda: 0, baseline="natural")
    e = l2attr.Experiment("p", consumer=lambda: 0, producer=lambda: 0)
    assert e.baseline == L2Condition.NO_PRODUCER


def _time(tmp_path: Path, **kw) -> tuple[l2attr.Experiment, ExperimentResult]:
    g = FakeGpu()
    exp = l2attr.Experiment("never-seen", consumer=g.consumer, producer=g.producer,
                            calls=6, warmup=2, repeats=2, out=tmp_path, **kw)
    return exp, exp.time(device=g, log=lambda s: None)


def test_timing_path_writes_a_run_that_loads_and_judges(tmp_path: Path) -> None:
    exp, res = _time(tmp_path)
    assert res.run_dir is not None and (res.run_dir / "exp_samples.csv").is_file()
    c = res.cells.set_index(["condition", "quantity", "timer"])["median_us"]
    assert c[("natural", "consumer", "kernel")] == 10.0
    assert c[("no_producer", "consumer", "kernel")] == 14.0
    assert c[("flush_after_producer", "consumer", "kernel")] == 14.0
    assert c[("natural", "kernels", "kernel")] == 12.0
    assert c[("natural", "call", "wall")] == 15.0        # 5 us producer step + 10 us consumer
    an = analyse_experiment(load_experiment(res.run_dir))
    row = an.verdict.iloc[0]
    assert res.verdict.equals(an.verdict)              # the result is judged as the report judges
    assert row["baseline"] == "no_producer"
    assert row["consumer_speedup"] == pytest.approx(1.4)
    assert row["kernel_charged_speedup"] == pytest.approx(14 / 12)
    assert row["wall_charged_speedup"] == pytest.approx(14 / 15)
    assert row["wall_charged_judgement"] == Judgement.SLOWER.value   # constant samples: zero-width intervals
    assert row["break_even_kernel"] == pytest.approx(2 / 4)
    assert row["break_even_wall"] == pytest.approx(5 / 4)
    assert "does not pay" in row["headline"]


def test_activation_style_baseline_is_the_cold_consumer(tmp_path: Path) -> None:
    exp, res = _time(tmp_path, conditions=["natural", "flush_after_producer"])
    an = analyse_experiment(load_experiment(res.run_dir))
    row = an.verdict.iloc[0]
    assert row["baseline"] == "flush_after_producer"
    assert row["consumer_saving_share"] == pytest.approx(4 / 14)
    assert math.isnan(row["break_even_kernel"])          # the producer is not optional here
    assert "saves the consumer" in row["headline"]


def test_resume_skips_complete_units_and_refuses_other_settings(tmp_path: Path) -> None:
    exp, res = _time(tmp_path)
    before = pd.read_csv(res.run_dir / "exp_samples.csv")
    g = FakeGpu()
    again = l2attr.Experiment("never-seen", consumer=g.consumer, producer=g.producer,
                              calls=6, warmup=2, repeats=2, out=tmp_path)
    again.time(device=g, resume=res.run_dir, log=lambda s: None)
    after = pd.read_csv(res.run_dir / "exp_samples.csv")
    assert len(after) == len(before)
    other = l2attr.Experiment("never-seen", consumer=g.consumer, producer=g.producer,
                              calls=8, warmup=2, repeats=2, out=tmp_path)
    with pytest.raises(UserError, match="other settings"):
        other.time(device=g, resume=res.run_dir, log=lambda s: None)


def test_damaged_cells_are_refused(tmp_path: Path) -> None:
    exp, res = _time(tmp_path)
    f = res.run_dir / "exp_cells.csv"
    df = pd.read_csv(f)
    for c in ("median_us", "p10_us", "p90_us", "ci95_lo_us", "ci95_hi_us"):
        df.loc[0, c] = df.loc[0, c] * 2                 # still ordered, no longer its samples'
    df.to_csv(f, index=False)
    with pytest.raises(UserError, match="recomputed"):
        load_experiment(res.run_dir)
    pd.concat([df, df.iloc[:1]]).to_csv(f, index=False)
    with pytest.raises(UserError, match="repeated row|two different rows"):
        load_experiment(res.run_dir)


def test_stopping_rule_stops_once_intervals_are_narrow(tmp_path: Path) -> None:
    g = FakeGpu()
    exp = l2attr.Experiment("stops", consumer=g.consumer, producer=g.producer, calls=6, warmup=2,
                            repeats=2, until_rel_ci=0.01, max_repeats=6, out=tmp_path)
    said: list[str] = []
    res = exp.time(device=g, log=said.append)
    samples = pd.read_csv(res.run_dir / "exp_samples.csv")
    assert samples["repeat"].max() == 3               # 2 device + 2 host repeats: constant times are narrow
    assert any("stopped" in s for s in said)


def test_engine_names_are_declared_in_the_one_grammar():
    """Every range the engine writes parses back through vocab's Grammar declarations."""
    from l2attr.names import EXPERIMENT, EXPERIMENT_BARE, LEGACY_PREFIX, STEP_MARK, STEP_OP, STEP_SLOT

    assert EXPERIMENT.parse(experiment_range_name("producer", "p-1", "natural", 3)) == {
        "role": "producer", "experiment": "p-1", "condition": "natural", "call": 3}
    assert EXPERIMENT_BARE.parse(experiment_range_name("consumer", "p-1")) == {"role": "consumer", "experiment": "p-1"}
    assert STEP_OP.parse(STEP_OP.build(op_index=12)) == {"op_index": 12}
    assert STEP_SLOT.parse(STEP_SLOT.build(slot=4)) == {"slot": 4}
    assert STEP_SLOT.parse("slot:cold") is None               # a number only: the arm is not in the name
    assert STEP_MARK.parse(STEP_MARK.build(name="decode")) == {"name": "decode"}
    assert LEGACY_PREFIX == "l2attr:"


def test_time_returns_a_result_and_leaves_the_declaration_unchanged(tmp_path: Path) -> None:
    """The declaration is frozen; a repeats override times a copy; the repr is the headline."""
    import dataclasses

    g = FakeGpu()
    exp = l2attr.Experiment("frozen-pair", consumer=g.consumer, producer=g.producer,
                            calls=6, warmup=2, repeats=2, out=tmp_path)
    before = exp.declaration()
    res = exp.time(device=g, repeats=1, log=lambda s: None)
    assert exp.declaration() == before and exp.repeats == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        exp.repeats = 5                                  # type: ignore[misc]
    samples = pd.read_csv(res.run_dir / "exp_samples.csv")
    assert samples["repeat"].max() == 1                  # 1 device + 1 host repeat: the override ran
    text = repr(res)
    assert res.verdict.iloc[0]["headline"] in text and str(res.run_dir) in text
    assert "[" in text and "]" in text                   # the headline's interval is printed
    second = exp.time(device=g, out=tmp_path / "again", log=lambda s: None)
    assert second.run_dir != res.run_dir                 # two runs, two results, one declaration
