"""Every table of a step or experiment run held to its manifest, and text cells read alike on pandas
2 and 3 (issue 38's battery: each case here was accepted, moved the answer or ended in a traceback
on main 2508830).

Each damage is made on a copy of a committed run; the readers (`report --format md`, the kind's
`show`) must refuse it with one line naming the file and the rule, or (--allow-partial, where the
data is only short) read it and say so on the console and the page.
"""

from __future__ import annotations

import pandas as pd
import pytest
from runs_mutate import copy_run, read, read_table, write_table

from l2attr.measure.stats import summarize_pairs


def refused(run, *needles: str) -> str:
    """Every reader of `run` refuses it in one line holding each of `needles`."""
    readers = [["report", str(run), "--format", "md", "-o", str(run.parent / "out.md")]]
    kind = read_table(run / ("exp_samples.csv" if (run / "exp_samples.csv").exists() else "step_kernels.csv"))
    readers.append(["experiment", "show", str(run)] if "experiment" in kind.columns else ["step", "--show", str(run)])
    line = ""
    for argv in readers:
        o = read(argv)
        assert o.code != 0, (argv, o.out[-400:])
        assert "Traceback" not in o.err
        errors = [x for x in o.err.splitlines() if ": error: " in x]
        assert len(errors) == 1, o.err
        line = errors[0]
        for n in needles:
            assert n in line, line
    return line


def edit(run, name, fn):
    path = run / name
    write_table(path, fn(read_table(path)))


# -- graph-surgery step runs ------------------------------------------------------------------------

@pytest.fixture
def surgery(tmp_path):
    return copy_run("step-surgery", tmp_path)


def test_one_kernels_cold_rows_relabelled_is_refused(surgery):
    """Node 1's cold rows become cold_dirty's and cold_dirty's node 1 rows go: the kernel left the
    cold arm (the answer moved 27.6 % -> 14.7 % on the battery's run)."""
    def relabel(df):
        df = df[~((df["condition"] == "cold_dirty") & (df["node"] == "1"))].copy()
        df.loc[(df["condition"] == "cold") & (df["node"] == "1"), "condition"] = "cold_dirty"
        return df
    edit(surgery, "step_kernels.csv", relabel)
    refused(surgery, "step_kernels.csv", "cold")


def test_one_kernels_cold_rows_given_another_node_is_refused(surgery):
    """The cold rows of node 1 relabelled as a node no other arm has: the kernel's pairs vanish."""
    def relabel(df):
        df.loc[(df["condition"] == "cold") & (df["node"] == "1"), "node"] = "7"
        return df
    edit(surgery, "step_kernels.csv", relabel)
    refused(surgery, "step_kernels.csv", "arm cold holds other kernels")


def test_kernels_swapped_between_arms_is_refused(surgery):
    def swap(df):
        cold = df["condition"] == "cold"
        names = df.loc[cold, "kernel"].tolist()
        df.loc[cold, "kernel"] = names[1:] + names[:1]
        return df
    edit(surgery, "step_kernels.csv", swap)
    refused(surgery, "step_kernels.csv")


def test_repeats_missing_from_every_arm_is_refused_or_read_partial(surgery, tmp_path):
    edit(surgery, "step_kernels.csv", lambda df: df[df["step"].astype(int) < 5])
    refused(surgery, "step_kernels.csv", "holds 5 steps", "step.repeats 10")
    out = tmp_path / "p.md"
    o = read(["report", str(surgery), "--format", "md", "-o", str(out), "--allow-partial"])
    assert o.code == 0, o.err
    assert "partial data" in o.err and "holds 5 steps" in o.err
    assert "Partial data (--allow-partial)" in out.read_text()


def test_clean_cold_arm_deleted_is_refused(surgery):
    edit(surgery, "step_kernels.csv", lambda df: df[df["condition"] != "cold"])
    refused(surgery, "step_kernels.csv", "missing cold")


def test_undeclared_arm_is_refused(tmp_path):
    """An eager step measures natural and cold: cold_dirty rows (a word of the vocabulary, an arm
    this run never declared) are refused, not averaged in or dropped."""
    run = copy_run("step", tmp_path)
    edit(run, "step_kernels.csv", lambda df: pd.concat([df, df[df["condition"] == "cold"].assign(condition="cold_dirty")]))
    refused(run, "step_kernels.csv", "undeclared cold_dirty")


def test_declared_arms_come_from_the_manifest(surgery):
    """`surgery.arms` (a writer with more cold arms) is what the table must hold: a declared arm
    absent is refused, and the three arms pass only when the manifest lists those three."""
    import json
    m = json.loads((surgery / "manifest.json").read_text())
    m["surgery"]["arms"] = ["natural", "cold", "cold_dirty", "cold_start"]
    (surgery / "manifest.json").write_text(json.dumps(m))
    refused(surgery, "missing cold_start")
    m["surgery"]["arms"] = ["natural", "cold", "cold_dirty"]
    m["surgery"]["write_back"] = {"any": "extra key a later writer adds"}
    (surgery / "manifest.json").write_text(json.dumps(m))
    assert read(["step", "--show", str(surgery)]).code == 0


def test_zero_natural_durations_are_refused(surgery):
    def zero(df):
        df.loc[df["condition"] == "natural", "duration_us"] = "0"
        return df
    edit(surgery, "step_kernels.csv", zero)
    refused(surgery, "step_kernels.csv", "duration_us")


def test_step_times_cut_to_its_header_is_refused(surgery):
    edit(surgery, "step_times.csv", lambda df: df.iloc[:0])
    refused(surgery, "step_times.csv")


def test_step_dram_with_one_cache_control_is_refused(tmp_path):
    run = copy_run("step", tmp_path)
    edit(run, "step_dram.csv", lambda df: df[df["cache_control"] == "all"])
    refused(run, "step_dram.csv", "cache control none")


# -- experiment runs --------------------------------------------------------------------------------

@pytest.fixture
def experiment(tmp_path):
    return copy_run("experiment", tmp_path)


def recompute_cells(run) -> None:
    """exp_cells.csv made again from the (edited) samples, as the writer makes it."""
    from l2attr.experiment.check import read_table as typed
    from l2attr.rundir import RunDir
    from l2attr.schema import EXP_SAMPLES
    cells = summarize_pairs(typed(RunDir(run), EXP_SAMPLES))
    write_table(run / "exp_cells.csv", cells)


def test_a_repeat_pair_removed_is_refused(experiment):
    edit(experiment, "exp_samples.csv", lambda df: df[~df["repeat"].isin(["4", "5"])])
    recompute_cells(experiment)
    refused(experiment, "exp_samples.csv", "experiment.repeats 3")


def test_a_repeat_pair_removed_is_read_with_allow_partial_and_said(experiment, tmp_path):
    edit(experiment, "exp_samples.csv", lambda df: df[~df["repeat"].isin(["4", "5"])])
    recompute_cells(experiment)
    for out in (tmp_path / "p.md", tmp_path / "p.html"):
        o = read(["report", str(experiment), "-o", str(out), "--allow-partial"])
        assert o.code == 0, o.err
        assert "warning: partial data" in o.err and "holds 4 repeats" in o.err
        assert "holds 4 repeats" in out.read_text()


def test_samples_of_an_undeclared_condition_are_refused(experiment):
    def add(df):
        return pd.concat([df, df[df["condition"] == "natural"].assign(condition="no_producer")])
    edit(experiment, "exp_samples.csv", add)
    recompute_cells(experiment)
    refused(experiment, "exp_samples.csv", "no_producer")


def test_a_header_only_metrics_table_is_refused(experiment):
    edit(experiment, "exp_metrics.csv", lambda df: df.iloc[:0])
    refused(experiment, "exp_metrics.csv")


def test_one_discarded_sample_is_read_on_every_pandas(experiment):
    """An empty discard cell is '' on pandas 2 and 3 (pandas 3 read it 'nan' and refused the run:
    `column discard must be one of late, throttled, timeout ('nan')`)."""
    def one(df):
        df.loc[df.index[0], "discard"] = "late"
        return df
    edit(experiment, "exp_samples.csv", one)
    recompute_cells(experiment)
    o = read(["experiment", "show", str(experiment)])
    assert o.code == 0, o.err
    from l2attr.experiment.table import analyse_experiment, load_experiment
    an = analyse_experiment(load_experiment(experiment))
    assert an.discarded.get("late") == 1 and "nan" not in an.discarded


def test_text_cells_are_python_strings_or_empty():
    import io

    from l2attr.csvfile import read_complete_csv
    from l2attr.integrity.rules import text_values
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "t.csv"
        f.write_text("a,d\n1,\n2,late\n")
        df = read_complete_csv(f)
    assert df["d"].dtype == object
    assert list(text_values(df["d"], empty="")) == ["", "late"]
    assert list(text_values(df["d"])) == [None, "late"]
    del io
