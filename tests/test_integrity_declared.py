"""Rows a run's own settings declare, all present: the cases the battery of issue 20 still found
silent (a table cut at a row boundary that kept every key the older checks asked for).

- sweep_points.csv: every quantity each summarised arm's protocol times (sweep/check/declared.py);
- sweep_dram.csv: every kernel the DRAM child profiles (the schedule's last pin group);
- timeline.csv: the samples per quantity the PM reader counted (manifest `ranges`);
- exp_cells.csv: every cell its samples give; step_dram.csv: the same kernels and keys under
  each cache control; experiment and step manifests: the fields their writers record.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from helpers_damage import EXAMPLES, RUNS, SWEEP_KINDS, copy_run, cut_rows, edit_manifest, plain

from l2attr.experiment.table import load_experiment
from l2attr.analysis.load import read_run
from l2attr.sweep.load import load_sweep
from l2attr.cli import main
from l2attr.errors import UserError
from l2attr.steps.check.rules import check_step_dram
from l2attr.sweep.check.declared import arm_quantities, dram_keys
from l2attr.sweep.declare import Point
from l2attr.vocab import Arm, Order

EXPERIMENT = EXAMPLES / "experiments" / "20261201T163314Z-my-pair"
STEP = EXAMPLES / "steps" / "runs" / "20261201T170613Z-selfcheck-quarter-l2-marked"


def test_arm_quantities_by_hand():
    k4 = Point("interleaved:k4", 4.0, (Arm.OPTMT, Arm.PIN), Order.INTERLEAVED, k=4)
    assert set(arm_quantities(k4, Arm.PIN, True)) == {
        ("consumer", "kernel"), ("consumer_first", "kernel"), ("charged", "kernel"), ("consumer_rest", "kernel"),
        ("pin", "kernel"), ("call", "wall")}
    polluted = Point("pollute_30MiB", 30.0, (Arm.OPTMT,), pollute_bytes=30 << 20)
    assert set(arm_quantities(polluted, Arm.OPTMT, False)) == {
        ("consumer", "kernel"), ("consumer_first", "kernel"), ("charged", "kernel"), ("pollute", "kernel")}
    assert ("prepare", "wall") in arm_quantities(Point("hr1", 1.0, (Arm.WINDOW,)), Arm.WINDOW, True)


def test_dram_keys_by_hand():
    """k = 2 back to back, 2 groups, 2 tables: the last group (1) of each table is pin, consumer
    at positions 1 and 2; the non-pinning arm has the two consumers only."""
    manifest = {"config": {"tables": 2, "rows": 1000, "dim": 4, "batch_size": 4, "pooling": 2, "batches": 3,
                           "warmup_batches": 1, "hot_rows": 10},
                "sweep": {"axis": "amortisation", "families": ["artifact"], "profiles": ["random"], "repeats": 1,
                          "ks": [2], "orders": ["back_to_back"]}}
    keys = dram_keys(manifest)
    assert keys is not None
    pin = [k for k in keys if k[3] == "l2p_optmt"]
    point = pin[0][2]
    groups = {k[6] for k in keys}
    assert len(groups) == 1
    g = groups.pop()
    assert pin == [("artifact", "random", point, "l2p_optmt", role, t, g, pos)
                   for t in ("0", "1") for role, pos in (("pin", "1"), ("consumer", "1"), ("consumer", "2"))]
    assert len([k for k in keys if k[3] == "optmt"]) == 4


@pytest.mark.parametrize("kind", SWEEP_KINDS)
def test_sweep_points_missing_their_last_row(kind, tmp_path):
    run = copy_run(kind, tmp_path)
    cut_rows(run / "sweep_points.csv", 1)
    with pytest.raises(UserError, match=r"sweep_points.csv: 1 summaries of point arms it holds are missing"):
        load_sweep(run)


@pytest.mark.parametrize("kind", [k for k in SWEEP_KINDS if (EXAMPLES / RUNS[k] / "sweep_dram.csv").exists()])
@pytest.mark.parametrize("edit", ["cut", "middle"])
def test_sweep_dram_missing_kernels(kind, edit, tmp_path):
    run = copy_run(kind, tmp_path)
    path = run / "sweep_dram.csv"
    if edit == "cut":
        cut_rows(path, 10)
    else:
        pd.read_csv(path).drop(index=7).to_csv(path, index=False)
    n = 10 if edit == "cut" else 1
    with pytest.raises(UserError, match=rf"sweep_dram.csv: {n} of the \d+ kernels the DRAM profile of this sweep "
                                        "measures are missing"):
        load_sweep(run)


def test_timeline_cut_at_a_row_boundary(tmp_path):
    run = copy_run("timeline", tmp_path)
    cut_rows(plain(run, "timeline.csv"), 100)
    with pytest.raises(UserError, match=r"timeline.csv: 1018 samples of .* but manifest.json\[ranges\] counts 1118 "
                                        r"\(1119 instances, 1 untimed\): cut or rows deleted"):
        read_run(run)


def test_timeline_of_several_pass_groups_checks_only_the_upper_bound(tmp_path):
    run = copy_run("timeline", tmp_path)
    cut_rows(plain(run, "timeline.csv"), 100)
    edit_manifest(run, lambda m: m["ranges"][0].update(pass_groups=2))
    assert read_run(run) is not None
    edit_manifest(run, lambda m: m["ranges"][0].update(instances=900))
    with pytest.raises(UserError, match="rows added"):
        read_run(run)


def _copy(src: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(src, tmp_path / src.name))


def test_experiment_cells_cut_at_a_row_boundary(tmp_path):
    run = _copy(EXPERIMENT, tmp_path)
    cut_rows(run / "exp_cells.csv", 3)
    with pytest.raises(UserError, match=r"exp_cells.csv: 3 cells that exp_samples.csv gives are missing"):
        load_experiment(run)


@pytest.mark.parametrize("src", [EXPERIMENT, STEP], ids=["experiment", "step"])
def test_engine_manifest_without_its_gpu_is_refused(src, tmp_path, capsys):
    run = _copy(src, tmp_path)
    edit_manifest(run, lambda m: m.pop("gpu"))
    assert main(["report", str(run), "-o", str(tmp_path / "r.md")]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and "manifest.json: gpu.name is missing" in err[0]


@pytest.mark.parametrize("edit, want", [
    (lambda df: df.iloc[:-3], "cache control all lacks 1 of the 2 kernels"),
    (lambda df: pd.concat([df, df.iloc[[2]]]), "a repeated row"),
    (lambda df: df.assign(value=df["value"].where(df.index != 1, -1.0)), ":3: column value must be a finite number"),
    (lambda df: df.drop(index=0), "has 1 of the 2 keys"),
])
def test_step_dram_damage(edit, want, tmp_path):
    whole = pd.read_csv(STEP / "step_dram.csv")
    assert len(check_step_dram(whole, STEP)) == len(whole)
    with pytest.raises(UserError, match=want):
        check_step_dram(edit(whole).reset_index(drop=True), STEP)


def test_step_dram_cut_is_refused_by_the_report(tmp_path, capsys):
    run = _copy(STEP, tmp_path)
    cut_rows(run / "step_dram.csv", 3)
    assert main(["report", str(run), "-o", str(tmp_path / "r.md")]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and "step_dram.csv: cache control" in err[0]
