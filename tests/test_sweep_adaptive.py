"""Adaptive repeats in a sweep (the engine's one rule, measure/adaptive.py + rounds.py, per point
with its arms) on the fake sweep GPU: quiet points stop at the minimum, a noisy one at the limit
and sweep_points.csv says which; the CLI keeps --repeats a fixed run."""

from __future__ import annotations

import itertools

import pytest
from helpers_sweep import LIMITS, FakeSweepDevice, sweep_manifest

from l2attr.sweep.analyse.judge import analyse_sweep
from l2attr.sweep.load import load_sweep
from l2attr.sweep.section.html import section
from l2attr.sweep.section.text import markdown_chapter
from l2attr.cli import build_parser
from l2attr.sweep.command import adaptive_rule
from l2attr.errors import UserError
from l2attr.dlrm.config import WorkloadConfig
from l2attr.sweep.measure.run import run_sweep
from l2attr.sweep.declare import SweepOptions
from l2attr.sweep.table import SWEEP_POINTS, SWEEP_SAMPLES
from l2attr.measure.adaptive import AdaptiveRule
from l2attr.rundir import RunDir
from l2attr.vocab import Family, Order, RepeatStop, SweepAxis

CFG = WorkloadConfig(tables=2, rows=1000, batch_size=4, pooling=2, batches=3, warmup_batches=1, hot_rows=10)
NOISY = "interleaved:k2"


class NoisyPointDevice(FakeSweepDevice):
    """The fake sweep GPU, with the consumer of one point jittering by +-40 %."""

    jitter = itertools.cycle([50.0, 30.0, 70.0, 41.0, 62.0])

    def arm(self, family, p, arm):
        cm = super().arm(family, p, arm)
        if p.point != NOISY:
            return cm

        class Noisy:
            def __enter__(inner):
                ops = cm.__enter__()
                base = ops.consumer
                ops.consumer = lambda t, b: (lambda: (base(t, b)(), next(NoisyPointDevice.jitter))[1])
                return ops

            def __exit__(inner, *exc):
                return cm.__exit__(*exc)
        return Noisy()


def _run(tmp_path, rule):
    opts = SweepOptions(axis=SweepAxis.AMORTISATION, families=[Family.ARTIFACT], profiles=["random"],
                        repeats=3, ks=[1, 2, 4], orders=[Order.BACK_TO_BACK, Order.INTERLEAVED], adaptive=rule)
    run = RunDir.create(tmp_path, opts.axis.value, sweep_manifest(CFG, opts))
    run_sweep(CFG, opts, run, LIMITS, device_factory=NoisyPointDevice, log=lambda s: None)
    return run


def test_quiet_points_stop_at_the_minimum_and_a_noisy_one_at_the_limit(tmp_path):
    run = _run(tmp_path, AdaptiveRule(target_rel=0.005, min_repeats=2, max_repeats=5, max_seconds=60))
    samples = run.read(SWEEP_SAMPLES)
    reps = samples.groupby("point")["repeat"].nunique().to_dict()
    assert reps.pop(NOISY) == 5 and set(reps.values()) == {2}
    both = samples.groupby(["point", "arm"])["repeat"].nunique().unstack()
    assert (both["optmt"] == both["l2p_optmt"]).all()              # a point's arms keep the same repeats
    pts = run.read(SWEEP_POINTS)
    stopped = pts.drop_duplicates("point").set_index("point")["stopped"].to_dict()
    assert stopped.pop(NOISY) == RepeatStop.LIMIT.value and set(stopped.values()) == {RepeatStop.TARGET.value}
    assert run.manifest()["sweep"]["adaptive"]["max_repeats"] == 5
    an = analyse_sweep(load_sweep(run.path))                       # the integrity contract takes it
    assert an.noisy.startswith("1 cell(s) noisy: stopped at the limit") and an.noisy.endswith(f"random/{NOISY}")
    assert an.noisy in markdown_chapter(an)                       # the report page says it
    assert an.noisy in section(an, 0)[0]["lag"]


def test_a_fixed_sweep_has_no_stopped_column(tmp_path):
    run = _run(tmp_path, None)
    assert "stopped" not in run.read(SWEEP_POINTS).columns
    assert analyse_sweep(load_sweep(run.path)).noisy == ""
    assert set(run.read(SWEEP_SAMPLES).groupby("point")["repeat"].nunique()) == {3}


def test_the_cli_keeps_repeats_fixed_and_adaptive_a_flag():
    parser = build_parser()
    assert adaptive_rule(parser.parse_args(["sweep", "amortisation", "--repeats", "4"])) is None
    rule = adaptive_rule(parser.parse_args(["sweep", "amortisation", "--adaptive", "--max-repeats", "7"]))
    assert rule is not None and rule.max_repeats == 7 and rule.target_rel == 0.005
    for bad in (["--adaptive", "--repeats", "3"], ["--max-repeats", "7"], ["--adaptive", "--target-rel", "0"],
                ["--adaptive", "--min-repeats", "5", "--max-repeats", "4"], ["--adaptive", "--max-seconds", "nan"]):
        with pytest.raises(UserError):
            adaptive_rule(parser.parse_args(["sweep", "amortisation", *bad]))
