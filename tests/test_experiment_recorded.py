"""The experiment path on real recorded H200 output: the committed experiment runs load, their
cells are their samples' summaries, the recorded Nsight Compute report of the KV-pin experiment
imports into the same exp_metrics rows that run holds, and a pair declared here goes through
profile (with a stand-in for ncu that hands back that recorded report), analysis and report."""

from __future__ import annotations

import lzma
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import l2attr
from l2attr.experiment.analyse.dram import control
from l2attr.experiment.table import analyse_experiment, load_experiment
from l2attr.cli import main
from l2attr.experiment.profile import metrics_frame, ncu_argv, profile_command
from l2attr.rundir import RunDir
from l2attr.vocab import Verdict
from l2attr.names import EXPERIMENT_INCLUDE

from conftest import EXAMPLES, FIXTURES

RUNS = sorted(p for p in (EXAMPLES / "experiments").iterdir() if (p / "manifest.json").is_file())
KV_RUN = next(p for p in RUNS if p.name.endswith("-kv-pin-sdpa"))
KV_REPORT = FIXTURES / "ncu" / "kv_pin_sdpa_h200.ncu-rep.xz"


def _report(tmp: Path) -> Path:
    out = tmp / "kv-pin-sdpa.ncu-rep"
    with lzma.open(KV_REPORT, "rb") as src, out.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_committed_runs_load_and_cells_are_their_samples(run: Path) -> None:
    r = load_experiment(run)          # integrity: keys, order, cells recomputed from samples
    s = r.samples[(r.samples["mode"] == "device") & (r.samples["discard"] == "")]
    for cond, g in s.groupby("condition"):
        cell = r.cells[(r.cells["condition"] == cond) & (r.cells["quantity"] == "consumer")
                       & (r.cells["timer"] == "kernel")].iloc[0]
        assert cell["median_us"] == pytest.approx(float(np.median(g["consumer_time_us"])))
        assert cell["n_samples"] == len(g)
    assert r.manifest["gpu"]["uuid"].startswith("GPU-")


def test_recorded_report_imports_to_the_committed_metrics(tmp_path: Path) -> None:
    from l2attr.profile.ncu_import import read_report

    imported = metrics_frame(read_report(_report(tmp_path), condition="").table, "kv-pin-sdpa")
    committed = load_experiment(KV_RUN).metrics
    key = ["condition", "role", "call", "launch", "metric"]
    a = imported.sort_values(key).reset_index(drop=True)
    b = committed.sort_values(key).reset_index(drop=True)
    assert len(a) == len(b) and set(a["condition"]) == {"natural", "no_producer", "flush_after_producer"}
    assert np.allclose(a["value"].astype(float), b["value"].astype(float), equal_nan=True)
    # every condition profiled its calls 1..4, one pin launch pair per producer call
    calls = a.groupby(["condition", "role"])["call"].agg(lambda c: sorted(set(c)))
    assert all(v == [1, 2, 3, 4] for v in calls)


def test_control_rule_on_hand_made_rows() -> None:
    def rows(cond: str, dram: list[float]) -> list[dict]:
        return [{"experiment": "e", "condition": cond, "role": "consumer", "call": i, "launch": 10 * i + k,
                 "kernel": "k", "nvtx_range": "", "metric": "dram__bytes_read.sum", "value": v, "unit": "byte"}
                for k, (i, v) in enumerate(enumerate(dram))]
    clear = pd.DataFrame(rows("natural", [10, 11, 12]) + rows("flush_after_producer", [20, 21, 22]))
    assert control(clear)["verdict"] == Verdict.CLEAR.value
    overlap = pd.DataFrame(rows("natural", [10, 11, 25]) + rows("flush_after_producer", [20, 21, 22]))
    assert control(overlap)["verdict"] == Verdict.NOT_CLEAR.value
    assert control(pd.DataFrame(rows("natural", [1, 2])))["verdict"] == Verdict.INCONCLUSIVE.value


def test_a_pair_declared_here_is_profiled_analysed_and_reported(tmp_path: Path) -> None:
    """The never-seen pair of test_experiment_engine, named like the recorded experiment so the
    recorded report (what ncu wrote for ranges of that name) stands in for ncu's output."""
    from test_experiment_engine import FakeGpu

    g = FakeGpu()
    exp = l2attr.Experiment("kv-pin-sdpa", consumer=g.consumer, producer=g.producer, calls=6, warmup=2,
                            repeats=2, out=tmp_path)
    res = exp.time(device=g, log=lambda s: None)
    recorded = _report(tmp_path)
    seen: list[list[str]] = []

    def fake_ncu(argv, echo) -> int:
        seen.append(list(argv))
        out = Path(argv[argv.index("-o") + 1] + ".ncu-rep")
        shutil.copy(recorded, out)
        return 0

    frame = profile_command(["python", "my_pair.py"], RunDir.open(res.run_dir), "l2",
                            {"L2ATTR_EXPERIMENT_CHILD": "{}"}, "kv-pin-sdpa", chip="gh100",
                            runner=fake_ncu, log=lambda s: None)
    argv = seen[0]
    assert argv[argv.index("--replay-mode") + 1] == "application"
    assert argv[argv.index("--cache-control") + 1] == "none"
    assert EXPERIMENT_INCLUDE in argv and argv[-2:] == ["python", "my_pair.py"]
    assert not frame.empty
    an = analyse_experiment(load_experiment(res.run_dir))
    assert an.control["verdict"] == Verdict.CLEAR.value
    assert {"natural", "flush_after_producer"} <= set(an.dram["condition"])
    out = tmp_path / "report.html"
    assert main(["report", str(res.run_dir), "-o", str(out)]) == 0
    html = out.read_text()
    assert "kv-pin-sdpa" in html and "validity control" in html and an.verdict.iloc[0]["headline"][:40] in html


def test_ncu_argv_keeps_the_l2_state() -> None:
    argv = ncu_argv(["python", "x.py"], ["dram__bytes_read.sum"], Path("/tmp/r"))
    assert argv[argv.index("--cache-control") + 1] == "none"
    assert argv[argv.index("--replay-mode") + 1] == "application"


def test_show_and_markdown_report_print_the_headlines(tmp_path: Path, capsys) -> None:
    assert main(["experiment", "show", str(KV_RUN)]) == 0
    out = capsys.readouterr().out
    headline = analyse_experiment(load_experiment(KV_RUN)).verdict.iloc[0]["headline"]
    assert headline in out and "validity control" in out
    assert main(["report", str(KV_RUN), "--format", "md"]) == 0
    assert headline in capsys.readouterr().out
