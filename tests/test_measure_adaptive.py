"""Adaptive repeats (measure/adaptive.py: the rule and its rounds) on the CPU with the fake GPU
of test_measure_run: a quiet cell stops at the minimum, a noisy one at the limit and says so in
cells.csv, the rounds keep the interleaved order, and `--repeats N` stays a fixed run."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_measure_run import CFG, _opts, fake  # noqa: F401  (fake: the fixture)

from l2attr.cli import build_parser
from l2attr.ladders.command import options_from_args
from l2attr.ladders.section import spread_lines
from l2attr.ladders.measure.run import run_ladder
from l2attr.errors import UserError
from l2attr.measure.adaptive import AdaptiveRounds, AdaptiveRule, half_width_rel, measure_rounds
from l2attr.rundir import RunDir
from l2attr.schema import CELLS, SAMPLES
from l2attr.vocab import RepeatStop


def test_half_width_is_the_bootstrap_interval_over_the_median() -> None:
    assert half_width_rel([10.0] * 50) == 0.0
    assert half_width_rel([1.0]) == float("inf") and half_width_rel([]) == float("inf")
    wide = np.r_[np.full(10, 90.0), np.full(10, 110.0)]      # the median's interval spans 90..110
    assert half_width_rel(wide) == pytest.approx(0.1)


def test_rounds_stop_each_cell_on_its_own_rule() -> None:
    rule = AdaptiveRule(target_rel=0.01, min_repeats=2, max_repeats=4, max_seconds=50)
    rounds = AdaptiveRounds(rule, ["quiet", "noisy", "slow"])
    rng = np.random.default_rng(0)
    for r in range(4):
        for c in rounds.unfinished():
            vals = {"quiet": np.full(20, 5.0), "noisy": rng.uniform(50, 150, 20), "slow": rng.uniform(50, 150, 20)}[c]
            rounds.add(c, {"consumer_time_us": vals}, seconds=60 if c == "slow" else 0.1)
        rounds.end_round()
        if r == 0:     # below the minimum nobody stops on the target, the slow one on its seconds
            assert rounds.unfinished() == ["quiet", "noisy"]
    assert [rounds.stop_of(c) for c in ("quiet", "noisy", "slow")] == [RepeatStop.TARGET, RepeatStop.LIMIT,
                                                                       RepeatStop.LIMIT]
    assert rounds.cells["quiet"].repeats == 2 and rounds.cells["noisy"].repeats == 4


def test_rounds_interleave_every_unfinished_cell_device_then_host() -> None:
    rule = AdaptiveRule(target_rel=0.01, min_repeats=1, max_repeats=3, max_seconds=100)
    order = []
    noisy = itertools.cycle([1.0, 9.0])

    def run_one(cell, repeat, device_timed):
        import pandas as pd
        order.append((repeat, cell))
        v = [next(noisy) for _ in range(10)] if cell == "b" else [3.0] * 10
        return pd.DataFrame({"consumer_time_us": v, "pin_time_us": [float("nan")] * 10})

    plan = [(i, i % 2 == 0) for i in range(6)]
    stops = measure_rounds(["a", "b", "c"], plan, run_one, lambda frames: None, rule)
    assert order == [(0, "a"), (0, "b"), (0, "c"), (1, "a"), (1, "b"), (1, "c"),
                     (2, "b"), (3, "b"), (4, "b"), (5, "b")]
    assert stops == {"a": RepeatStop.TARGET, "b": RepeatStop.LIMIT, "c": RepeatStop.TARGET}


def _one_noisy_cell(tmp_path, fake, drift: float = 0.0, **rule) -> RunDir:  # noqa: F811
    """An adaptive ladder run on the fake GPU where the tuned baseline's consumer is noisy (and
    moves by `drift` µs from one repeat to the next): every other cell reads a constant 40 / 10 µs."""
    run = RunDir.create(tmp_path, "x", {"kind": "ladder"})
    jitter = itertools.cycle([30.0, 50.0, 41.0, 37.0])
    real_timed = None

    def timed(launch, gpu=None):
        out = real_timed(launch)
        kernels = fake["gpu"]
        noisy = out == 40.0 and kernels.current == ("tuned", "baseline")
        return next(jitter) + drift * kernels.repeat if noisy else out

    import l2attr.ladders.measure.protocol as protocol
    orig = protocol.CellRunner.run_repeat

    def run_repeat(self, repeat, device_timed):
        g = self.gpu
        nonlocal real_timed
        if real_timed is None:
            real_timed = type(g).timed.__get__(g)
            g.timed = timed
        g.current, g.repeat = (self.variant.family.value, self.variant.rung.name), repeat
        return orig(self, repeat, device_timed)

    protocol.CellRunner.run_repeat = run_repeat
    try:
        run_ladder(CFG, _opts(**rule), run, log=lambda s: None)
    finally:
        protocol.CellRunner.run_repeat = orig
    return run


def test_a_ladder_run_stops_quiet_cells_at_the_minimum_and_marks_a_noisy_one(tmp_path, fake):  # noqa: F811
    run = _one_noisy_cell(tmp_path, fake, target_rel=0.005, min_repeats=2, max_repeats=5, max_seconds=60)
    samples, cells = run.read(SAMPLES), run.read(CELLS)
    device = samples[samples["consumer_time_us"].notna()]
    repeats = device.groupby(["family", "rung"])["repeat"].nunique().to_dict()
    assert repeats.pop(("tuned", "baseline")) == 5 and set(repeats.values()) == {2}
    stopped = cells.drop_duplicates(["family", "rung"]).set_index(["family", "rung"])["stopped"].to_dict()
    assert stopped.pop(("tuned", "baseline")) == RepeatStop.LIMIT and set(stopped.values()) == {RepeatStop.TARGET}
    assert run.manifest()["adaptive"]["max_repeats"] == 5


def test_the_spread_line_says_the_repeats_the_cells_took(tmp_path, fake):  # noqa: F811
    """The console's spread line of an adaptive run whose quiet cells stopped after one repeat:
    the range of repeats taken, the one-repeat cells named and left out of the median (they have
    no spread of their own), not "between 4 repeats ... median 0.00 %"."""
    run = _one_noisy_cell(tmp_path, fake, drift=1.0, target_rel=0.005, min_repeats=1, max_repeats=4,
                          max_seconds=60)
    samples = run.read(SAMPLES)
    consumer, pin = spread_lines(samples)
    cells = samples[samples["consumer_time_us"].notna()].groupby(["family", "rung"])["repeat"].nunique()
    assert sorted(cells) == [1] * (len(cells) - 1) + [4]           # the noisy cell alone went on
    assert consumer.startswith("spread of consumer medians between 1–4 repeats per cell (this process; "
                               f"{len(cells) - 1} of {len(cells)} cells took one repeat: no spread of their own): ")
    noisy = samples[(samples["family"] == "tuned") & (samples["rung"] == "baseline")]
    medians = noisy.groupby("repeat")["consumer_time_us"].median().dropna()
    spread = (medians.max() - medians.min()) / medians.mean() * 100
    assert spread > 1      # the repeats drift: a median over every cell would read 0.00 %
    assert consumer.endswith(f"median {spread:.2f} %, worst {spread:.2f} % (tuned/baseline/none/random/natural, 4 repeats)")
    assert pin == "spread of pin medians between repeats (this process): none, every cell took one repeat"


def test_a_fixed_run_has_no_stopped_column(tmp_path, fake):  # noqa: F811
    run = RunDir.create(tmp_path, "x", {"kind": "ladder"})
    run_ladder(CFG, _opts(repeats=3), run, log=lambda s: None)
    assert "stopped" not in run.read(CELLS).columns
    assert run.read(SAMPLES)["repeat"].nunique() == 6                 # 3 device + 3 host


def test_repeats_n_is_fixed_and_the_default_is_adaptive() -> None:
    parser = build_parser()
    assert options_from_args(parser.parse_args(["ladder", "--repeats", "4"])).rule is None
    rule = options_from_args(parser.parse_args(["ladder"])).rule
    assert rule is not None and rule.target_rel == 0.005
    for bad in (["--target-rel", "0"], ["--target-rel", "nan"], ["--min-repeats", "3", "--max-repeats", "2"],
                ["--max-seconds", "-1"], ["--repeats", "0"]):
        with pytest.raises(UserError):
            options_from_args(parser.parse_args(["ladder", *bad]))


def test_the_report_says_which_cells_stopped_at_the_limit(tmp_path) -> None:
    """A cells.csv `stopped` = limit cell is named on the report page; target cells are not."""
    from helpers_rundirs import write_ladder_run

    from l2attr.analysis import load_runs
    from l2attr.analysis.caveats import noisy_cell_caveats

    path = write_ladder_run(tmp_path, adaptive=AdaptiveRule(0.005).manifest())
    run = RunDir(path)
    cells = run.read(CELLS)
    assert noisy_cell_caveats(load_runs([path])) == []            # no stopped column: a fixed run
    noisy = (cells["rung"] == "optmt") & (cells["profile"] == "random")
    run.write(CELLS, cells.assign(stopped=np.where(noisy, RepeatStop.LIMIT.value, RepeatStop.TARGET.value)))
    (caveat,) = noisy_cell_caveats(load_runs([path]))
    assert "noisy: stopped at the limit" in caveat.text and "±0.5%" in caveat.text
    assert caveat.text.endswith("artifact/optmt/random/natural") and caveat.level == "warn"


def test_the_report_states_the_stopping_rule() -> None:
    from l2attr.report.provenance import adaptive_text

    text = adaptive_text(AdaptiveRule(0.005, 2, 12, 3.0).manifest())
    assert "≤ 0.5% of its median" in text and "2–12 repeats" in text and "3.0 s" in text


def test_an_adaptive_ladders_late_repeats_are_read_and_a_fixed_runs_are_refused(tmp_path) -> None:
    """An adaptive ladder (measure.target_rel set) may run up to measure.max_repeats rounds, so its
    repeat indices pass measure.repeats; the integrity check bounds them by max_repeats there, by
    repeats in a fixed run (by hand: repeats 2 -> indices 0..3, max_repeats 10 -> indices 0..19)."""
    import json

    from helpers_rundirs import ladder_samples, write_ladder_run

    from l2attr.analysis.load import read_run
    from l2attr.errors import UserError

    def run(name: str, host_repeat: int, **measure) -> object:
        samples = ladder_samples()
        samples.loc[samples["repeat"] == 1, "repeat"] = host_repeat       # a late round's host repeat
        path = write_ladder_run(tmp_path, name, samples=samples)
        manifest = json.loads((path / "manifest.json").read_text())
        manifest["measure"].update(repeats=2, **measure)
        (path / "manifest.json").write_text(json.dumps(manifest))
        return path

    assert read_run(run("20261129T200000Z-adaptive", 9, target_rel=0.005, max_repeats=10)) is not None
    with pytest.raises(UserError, match=r"measure\.repeats 2"):
        read_run(run("20261129T200100Z-fixed", 9))
    with pytest.raises(UserError, match=r"measure\.max_repeats 10"):
        read_run(run("20261129T200200Z-beyond", 20, target_rel=0.005, max_repeats=10))


def _host_run(host_values, wide_host: set[str], on_disk_rows=None):
    """Rounds over cells whose kernel interval closes ('a') or never does ('b', 'c'); a host
    repeat's wall values are constant, or wide for the cells in `wide_host`. Returns the repeats
    each cell ran, in order."""
    import pandas as pd

    rule = AdaptiveRule(target_rel=0.01, min_repeats=1, max_repeats=4, max_seconds=100)
    order: list[tuple[int, str]] = []
    noisy = itertools.cycle([1.0, 9.0])

    def run_one(cell, repeat, device_timed):
        if on_disk_rows is not None and (cell, repeat) in on_disk_rows:
            return None
        order.append((repeat, cell))
        return frame(cell, repeat, device_timed)

    def frame(cell, repeat, device_timed):
        if device_timed:
            v = [3.0] * 10 if cell == "a" else [next(noisy) for _ in range(10)]
            return pd.DataFrame({"consumer_time_us": v, "pin_time_us": [float("nan")] * 10})
        wall = [next(noisy) * 10 for _ in range(10)] if cell in wide_host else [50.0] * 10
        return pd.DataFrame({"call_wall_time_us": wall, "consumer_artifact_time_us": [float("nan")] * 10})

    plan = [(i, i % 2 == 0) for i in range(8)]
    stops = measure_rounds(["a", "b", "c"], plan, run_one, lambda frames: None, rule,
                           on_disk=lambda c, r: frame(c, r, r % 2 == 0), host_values=host_values)
    return order, stops


def test_a_cell_running_on_for_its_kernel_interval_takes_host_repeats_only_while_they_are_wide() -> None:
    """'b' and 'c' run four device repeats (their kernel interval never closes); 'b''s wall
    figures are tight after its first host repeat, so it takes no other, 'c''s stay wide, so it
    takes one every round; 'a' stops after its first round as before."""
    from l2attr.measure.adaptive import HOST_COLUMNS, column_values

    order, stops = _host_run(column_values(HOST_COLUMNS), wide_host={"c"})
    assert order == [(0, "a"), (0, "b"), (0, "c"), (1, "a"), (1, "b"), (1, "c"),
                     (2, "b"), (2, "c"), (3, "c"), (4, "b"), (4, "c"), (5, "c"), (6, "b"), (6, "c"), (7, "c")]
    assert stops == {"a": RepeatStop.TARGET, "b": RepeatStop.LIMIT, "c": RepeatStop.LIMIT}


def test_without_host_values_every_round_takes_its_host_repeat() -> None:
    order, _ = _host_run(None, wide_host=set())
    assert [r for r, c in order if c == "b"] == list(range(8))


def test_a_resumed_run_reads_its_host_repeats_from_disk_for_the_rule() -> None:
    """The first round on disk (a resume): 'b''s host values come from its on-disk repeat, so the
    later rounds skip its host repeats as the first process did."""
    from l2attr.measure.adaptive import HOST_COLUMNS, column_values

    on_disk = {(c, r) for c in "abc" for r in (0, 1)}
    order, _ = _host_run(column_values(HOST_COLUMNS), wide_host={"c"}, on_disk_rows=on_disk)
    assert [r for r, c in order if c == "b"] == [2, 4, 6] and [r for r, c in order if c == "c"] == [2, 3, 4, 5, 6, 7]
