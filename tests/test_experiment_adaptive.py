"""Adaptive repeats in an experiment (the engine's one rule, measure/adaptive.py + rounds.py) on
the fake GPU of test_experiment_engine: a quiet condition stops at the minimum, a noisy one at the
limit and exp_cells.csv says which; without until_rel_ci the repeats stay fixed."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from test_experiment_engine import FakeGpu

import l2attr
from l2attr.errors import UserError
from l2attr.vocab import RepeatStop


class NoisyWhenCold(FakeGpu):
    """The consumer after a flush (no producer's lines in L2) jitters by +-40 %; warm it is exact."""

    def __init__(self) -> None:
        super().__init__()
        self.jitter = itertools.cycle([14.0, 8.4, 19.6, 11.0, 17.0])

    def consumer(self) -> float:
        us = super().consumer()
        return us if us == 10.0 else next(self.jitter)


def _exp(g, tmp_path, **kw):
    return l2attr.Experiment("adaptive-pair", consumer=g.consumer, producer=g.producer, calls=8, warmup=2,
                             conditions=["natural", "flush_after_producer"], out=tmp_path, **kw)


def test_a_quiet_condition_stops_early_and_a_noisy_one_at_the_limit(tmp_path):
    g = NoisyWhenCold()
    said: list[str] = []
    res = _exp(g, tmp_path, repeats=2, until_rel_ci=0.005, max_repeats=5).time(device=g, log=said.append)
    samples = pd.read_csv(res.run_dir / "exp_samples.csv")
    device = samples[samples["mode"] == "device"]
    reps = device.groupby("condition")["repeat"].nunique().to_dict()
    assert reps == {"natural": 2, "flush_after_producer": 5}          # minimum 2; limit 5
    cells = pd.read_csv(res.run_dir / "exp_cells.csv")
    stopped = cells.drop_duplicates("condition").set_index("condition")["stopped"].to_dict()
    assert stopped == {"natural": RepeatStop.TARGET.value, "flush_after_producer": RepeatStop.LIMIT.value}
    assert any("noisy: stopped at the limit: flush_after_producer" in s for s in said)
    m = res.run_dir / "manifest.json"
    assert '"adaptive"' in m.read_text()
    from l2attr.experiment.table import analyse_experiment, load_experiment
    from l2attr.experiment.section import card

    an = analyse_experiment(load_experiment(res.run_dir))
    assert an.noisy.startswith("1 cell(s) noisy: stopped at the limit (its 95 % interval did not close to ±0.5%")
    assert an.noisy.endswith(": flush_after_producer")
    assert dict(card(an, 0)["identity"])["repeats"] == an.noisy     # the report page says it


def test_seconds_are_a_limit_too(tmp_path):
    g = NoisyWhenCold()
    res = _exp(g, tmp_path, repeats=1, until_rel_ci=0.005, max_repeats=50, max_seconds=1e-9).time(
        device=g, log=lambda s: None)
    cells = pd.read_csv(res.run_dir / "exp_cells.csv")
    stopped = cells.drop_duplicates("condition").set_index("condition")["stopped"].to_dict()
    # one repeat each: the quiet one has its interval, the noisy one is out of time
    assert stopped == {"natural": RepeatStop.TARGET.value, "flush_after_producer": RepeatStop.LIMIT.value}
    assert pd.read_csv(res.run_dir / "exp_samples.csv")["repeat"].max() == 1


def test_without_the_rule_the_repeats_are_fixed(tmp_path):
    g = NoisyWhenCold()
    res = _exp(g, tmp_path, repeats=3).time(device=g, log=lambda s: None)
    assert "stopped" not in pd.read_csv(res.run_dir / "exp_cells.csv").columns
    from l2attr.experiment.table import analyse_experiment, load_experiment

    assert analyse_experiment(load_experiment(res.run_dir)).noisy == ""
    assert pd.read_csv(res.run_dir / "exp_samples.csv")["repeat"].nunique() == 6      # 3 device + 3 host


@pytest.mark.parametrize("kw", [dict(until_rel_ci=0.0), dict(until_rel_ci=0.01, repeats=5, max_repeats=4),
                                dict(until_rel_ci=0.01, max_seconds=0)])
def test_a_bad_rule_is_one_line_at_declaration(tmp_path, kw):
    with pytest.raises(UserError, match="adaptive repeats"):
        _exp(FakeGpu(), tmp_path, **kw)
