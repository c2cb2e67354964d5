"""The ladder run's faster plumbing on the CPU (fake GPU, real writers): cells.csv is still the
summary of exactly the samples on disk (rounds appended at once, summarised after the last),
resume included; extra cells (the folded control) are measured and summarised; workloads built
ahead are the ones asked for; the phases are recorded and printed; the folded control's rows get
their conditions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from l2attr.cli import main
from l2attr.errors import UserError
from l2attr.dlrm.declare import RUNG_BY_NAME, variant
from l2attr.ladders.measure import run as runmod
from l2attr.ladders.measure.run import ORDER, process_age_s
from l2attr.ladders.measure.run import describe_phases as describe
from l2attr.dlrm.measure.prefetch import WorkloadPrefetch
from l2attr.ladders.measure.run import LadderOptions, run_ladder
from l2attr.measure.stats import CELL_KEYS, summarize_cell
from l2attr.rundir import RunDir
from l2attr.schema import CELLS, SAMPLES
from l2attr.vocab import Family

import test_measure_run as tm


class NoisyGpu(tm.FakeGpu):
    """Every timed launch and host clock read draws a different number (seeded)."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.rng = np.random.default_rng(7)

    def timed(self, launch):
        self.next = 40.0
        launch()
        return float(self.next + self.rng.normal(0, 2))

    def artifact_timed(self, launch):
        launch()
        return float(45.0 + self.rng.normal(0, 2))

    def host_clock_us(self):
        self.clock += 100.0 + float(self.rng.random())
        return self.clock


@pytest.fixture
def noisy(fake, monkeypatch):
    made = {}

    def gpu(*a, **k):
        made["gpu"] = NoisyGpu(*a, **k)
        tm.FakeKernels.gpu = made["gpu"]
        return made["gpu"]

    monkeypatch.setattr(runmod, "Gpu", gpu)
    return made


fake = tm.fake          # the fake kernels, checks and workload of test_measure_run


def _recomputed(run: RunDir) -> pd.DataFrame:
    """cells.csv as its definition says: summarize_cell over each cell's samples, read from disk."""
    samples = run.read(SAMPLES)
    parts = [summarize_cell(g, runmod.consumer_bytes_per_call(tm.CFG))
             for _, g in samples.groupby(list(CELL_KEYS), sort=False)]
    return pd.concat(parts, ignore_index=True)


def _same_cells(a: pd.DataFrame, b: pd.DataFrame) -> None:
    keys = [*CELL_KEYS, "quantity", "timer"]
    cols = [c for c in CELLS.columns]
    a = a[cols].sort_values(keys).reset_index(drop=True)
    b = b[cols].sort_values(keys).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b, check_dtype=False, rtol=1e-12)


def test_cells_are_the_summaries_of_the_samples_on_disk(tmp_path, noisy):
    run = RunDir.create(tmp_path, "x", {"kind": "ladder"})
    opts = tm._opts(profiles=["random", "reuse_high"], repeats=3)
    run_ladder(tm.CFG, opts, run, log=lambda s: None)
    cells = run.read(CELLS)
    assert len(cells.drop_duplicates(list(CELL_KEYS))) == 5 * 2          # variants x profiles
    _same_cells(cells, _recomputed(run))
    # the first profile's cells come first, in the run's variant order
    first = cells.drop_duplicates(list(CELL_KEYS))
    assert list(first["profile"])[:5] == ["random"] * 5
    assert list(first["rung"])[:3] == ["baseline", "l2p_optmt", "baseline"]


def test_resume_after_a_cut_round_gives_the_summaries_of_all_samples(tmp_path, noisy):
    run = RunDir.create(tmp_path, "x", {"kind": "ladder"})
    opts = tm._opts(profiles=["random", "reuse_high"], repeats=2)
    run_ladder(tm.CFG, opts, run, log=lambda s: None)
    full = run.read(SAMPLES)
    run.write(SAMPLES, full.iloc[: len(full) // 2 + 3])      # a crash in the middle of a round
    (run.path / CELLS.filename).unlink()
    run_ladder(tm.CFG, opts, run, log=lambda s: None)
    again = run.read(SAMPLES)
    assert len(again) == len(full)
    assert not again.duplicated([*CELL_KEYS, "repeat", "batch", "table"]).any()
    _same_cells(run.read(CELLS), _recomputed(run))


def test_phases_are_recorded_and_printed(tmp_path, noisy):
    run = RunDir.create(tmp_path, "x", {"kind": "ladder"})
    logs: list[str] = []
    run_ladder(tm.CFG, tm._opts(), run, log=logs.append)
    timings = run.manifest()["timings"]
    for k in ("compile_s", "check_s", "repeats_s", "journal_s", "summaries_s", "workload_wait_s", "total_s"):
        assert timings[k] >= 0, k
    assert timings["repeats_s"] <= timings["total_s"]
    line = [ln for ln in logs if ln.startswith("ladder phases, seconds:")]
    assert len(line) == 1 and "timed repeats" in line[0] and "[" not in line[0]
    assert run.manifest()["workloads_built_ahead"] is True


def test_describe_orders_phases_and_skips_what_is_not_a_number():
    text = describe({"total_s": 30.0, "compile_s": 1.0, "startup_s": 8.0, "zzz_s": 2.0, "bad_s": float("nan")})
    assert text.index("process start") < text.index("compile") < text.index("in all") < text.index("zzz")
    assert "bad" not in text and ORDER[0] == "startup_s"
    assert 0 < process_age_s() < 1e7           # this process started a moment ago (Linux)


def test_extra_cells_are_measured_compiled_and_summarised(tmp_path, noisy):
    run = RunDir.create(tmp_path, "x", {"kind": "ladder"})
    opts = LadderOptions(rungs=[RUNG_BY_NAME["optmt"]], profiles=["random"], families=[Family.TUNED], repeats=1,
                         host_repeat=False, bandwidth=False,
                         extra_cells=["artifact:l2p_optmt:reuse_high:natural",
                                      "artifact:l2p_optmt:reuse_high:flush_after_pin",
                                      "tuned:optmt:random:natural"])      # the last is a main cell: once
    cells = run_ladder(tm.CFG, opts, run, log=lambda s: None)
    got = set(map(tuple, cells[list(CELL_KEYS)].drop_duplicates().values))
    assert got == {("tuned", "optmt", "none", "random", "natural"),
                   ("artifact", "l2p_optmt", "element", "reuse_high", "natural"),
                   ("artifact", "l2p_optmt", "element", "reuse_high", "flush_after_pin")}
    samples = run.read(SAMPLES)
    assert samples.groupby(list(CELL_KEYS)).size().tolist() == [tm.CFG.batches * tm.CFG.tables - 1] * 3
    assert "artifact/l2p_optmt/element" in run.manifest()["variants"]
    assert opts.manifest()["extra_cells"] == opts.extra_cells      # what the manifest records of the run


@pytest.mark.parametrize("cell, needle", [
    ("artifact:l2p_optmt:reuse_high", "write FAMILY:RUNG:PROFILE:L2_STATE"),
    ("fast:baseline:random:natural", "the fast family has no baseline rung"),
    ("artifact:optmt:random:cold", "'cold' is not a valid"),
    ("artifact:nope:random:natural", "unknown rung 'nope'"),
    ("artifact:optmt:lukewarm:natural", "unknown profile 'lukewarm'"),
])
def test_bad_extra_cell_is_one_line(cell, needle, tmp_path, capsys):
    assert main(["ladder", "--extra-cell", cell, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]
    assert not any(tmp_path.iterdir())


def test_prefetch_builds_ahead_hands_over_and_reraises():
    built: list[str] = []

    def build(name: str) -> str:
        built.append(name)
        if name == "bad":
            raise UserError("bad workload")
        return name.upper()

    p = WorkloadPrefetch(build, ["a", "b", "a"], bytes_each=10, budget=100)
    assert p.ahead
    p.wait_all()
    assert sorted(built) == ["a", "b"]                          # each once, before anyone asked
    assert p.get("b") == "B" and p.get("a") == "A"
    assert p.get("a") == "A" and sorted(built) == ["a", "a", "b"]   # handed over once; asked again, built again
    q = WorkloadPrefetch(build, ["bad", "c"], bytes_each=10, budget=100)
    with pytest.raises(UserError, match="bad workload"):       # raised in the caller's thread
        q.get("bad")
    assert q.get("c") == "C"
    r = WorkloadPrefetch(build, ["x", "y"], bytes_each=60, budget=100)   # both would not fit
    assert not r.ahead and r.get("y") == "Y" and "x" not in built
    assert p.build_s >= 0 and r.build_s >= 0


def test_specs_of_lists_every_kernel_a_variant_compiles():
    from l2attr.dlrm.compile import specs_of

    assert len(specs_of(variant("artifact", "baseline"), "fp32")) == 1
    assert len(specs_of(variant("artifact", "l2p_optmt"), "fp32")) == 2
    fast = specs_of(variant("fast", "l2p_optmt"), "fp32")
    assert len(fast) == 3 and fast[0].options != fast[2].options      # the weighted build has no register cap


def test_folded_control_rows_get_their_arms():
    from l2attr.dlrm.profile.plan import ControlCell, label_rows

    def rows(family, rung, profile, state, launch):
        return {"family": family, "rung": rung, "profile": profile, "l2_state": state, "condition": "ladder",
                "launch": launch, "metric": "m", "value": 1.0}

    table = pd.DataFrame([rows("artifact", "l2p_optmt", "reuse_high", "natural", 0),
                          rows("artifact", "optmt", "reuse_high", "natural", 1),
                          rows("artifact", "l2p_optmt", "reuse_high", "flush_after_pin", 2),
                          rows("artifact", "l2p_optmt", "reuse_high", "reset_after_pin", 3)])
    twice = label_rows(table, ControlCell("artifact", "reuse_high", natural_in_sweep=True))
    by_launch = twice.groupby("launch")["condition"].apply(sorted).to_dict()
    assert by_launch == {0: ["control_after_pin", "ladder"], 1: ["ladder"], 2: ["control_after_flush"],
                         3: ["control_after_reset"]}
    once = label_rows(table, ControlCell("artifact", "reuse_high", natural_in_sweep=False))
    assert list(once["condition"]) == ["control_after_pin", "ladder", "control_after_flush", "control_after_reset"]
    assert label_rows(table, None) is table
