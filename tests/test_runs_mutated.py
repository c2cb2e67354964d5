"""Damage that passed silently or ended in a traceback before the contracts of every run kind
(found by the damage battery and by tests/test_properties_runs.py), kept as cases: each is now
one line naming the file and the rule, and a non-zero exit, in every reader of its kind."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from pathlib import Path

import pandas as pd
import pytest

import runs_mutate as rm
from l2attr.cli import main


def cell(table: str, row: int, column: str, value: str) -> Callable[[Path], None]:
    def change(run: Path) -> None:
        df = rm.read_table(run / table)
        df.at[row, column] = value
        rm.write_table(run / table, df)
    return change


def rows(table: str, keep: Callable[[pd.DataFrame], pd.DataFrame]) -> Callable[[Path], None]:
    def change(run: Path) -> None:
        rm.write_table(run / table, keep(rm.read_table(run / table)))
    return change


def field(path: tuple, value: object) -> Callable[[Path], None]:
    def change(run: Path) -> None:
        m = json.loads((run / "manifest.json").read_text())
        rm.set_field(m, path, value)
        (run / "manifest.json").write_text(json.dumps(m))
    return change


def removed(path: tuple) -> Callable[[Path], None]:
    def change(run: Path) -> None:
        m = json.loads((run / "manifest.json").read_text())
        rm.set_field(m, path, None, delete=True)
        (run / "manifest.json").write_text(json.dumps(m))
    return change


def raw(data: bytes) -> Callable[[Path], None]:
    return lambda run: (run / "manifest.json").write_bytes(data)


def first_where(column: str, value: str, then: str, new: str, table: str) -> Callable[[Path], None]:
    def change(run: Path) -> None:
        df = rm.read_table(run / table)
        row = int((df[column] == value).to_numpy().argmax())
        df.at[row, then] = new
        rm.write_table(run / table, df)
    return change


def metric(name: str, value: str, column: str = "value") -> Callable[[Path], None]:
    return first_where("metric", name, column, value, "exp_metrics.csv")


E, L, P, S, T, D = "experiment", "ladder", "profile", "sweep", "timeline", "distributed"
MANIFEST_CASES = [
    ("not an object", raw(b"[1, 2]"), "expected a JSON object"),
    ("not UTF-8", raw(b'{"name": "\xe9"}'), "must be UTF-8"),
    ("nested deep", raw(b"[" * 100000 + b"]" * 100000), "nested more than"),
    ("huge integer", raw(b'{"schema_version": ' + b"9" * 5000 + b"}"), "number too long"),
    ("not JSON", raw(b'{"name": '), "not valid JSON"),
]
CASES = [
    # experiment: samples recomputed into cells, value ranges, exp_metrics words and metrics
    (E, cell("exp_samples.csv", 3, "consumer_time_us", "-5"), "negative value"),
    (E, cell("exp_samples.csv", 3, "consumer_time_us", "inf"), "not finite"),
    (E, cell("exp_samples.csv", 3, "consumer_time_us", "1e300"), "above 1e+07"),
    (E, cell("exp_samples.csv", 130, "call_wall_us", "zzz"), "must be numeric"),
    (E, cell("exp_cells.csv", 4, "median_us", "abc"), "must be numeric"),
    (E, cell("exp_cells.csv", 4, "n_samples", "3"), "disagrees"),
    (E, cell("exp_metrics.csv", 180, "value", "[1, 2]"), "must be numeric"),
    (E, cell("exp_metrics.csv", 75, "experiment", "[1, 2]"), "exp_metrics.csv"),
    (E, metric("dram__bytes_read.sum", "-5"), "must not be negative"),
    (E, metric("dram__bytes_read.sum", "nan"), "empty value"),
    (E, metric("dram__bytes_read.sum", "referee", "role"), "column role must be one of"),
    (E, metric("dram__bytes_read.sum", "lukewarm", "condition"), "column condition must be one of"),
    (E, rows("exp_metrics.csv", lambda df: df.drop(index=int((df["metric"] == "dram__bytes_read.sum").to_numpy()
                                                             .argmax()))), "lacks 1 of the"),
    (E, field(("experiment", "baseline"), None), "experiment.baseline"),
    (E, field(("experiment", "baseline"), "no_producer"), "one of the declared conditions"),
    (E, field(("experiment", "repeats"), "3"), "experiment.repeats"),
    (E, removed(("experiment", "name")), "experiment.name is missing"),
    (E, field(("kind",), []), "kind must be a string"),
    # ladder and its distributed form
    (L, field(("measure", "profiles", 2), []), "measure.profiles"),
    (L, cell("cells.csv", 13, "n_samples", "9" * 400), "number of 400 characters"),
    (D, field(("measure", "variants", 7), 1.5), "measure.variants"),
    (D, cell("cells.csv", 123, "profile", " "), "column profile must not be empty"),
    (L, cell("cells.csv", 1, "profile", "zzz"), "column profile must be one the manifest lists"),
    (P, cell("metrics.csv.gz", 0, "launch", " "), "column launch must be a number"),
    (D, rows("units.csv", lambda df: pd.concat([df, df.iloc[[0]]], ignore_index=True)), "repeated row"),
    (D, cell("units.csv", 0, "gpu_uuid", "GPU-0000"), "a GPU the manifest lists"),
    (D, cell("units.csv", 0, "unit", "ladder:tuned:nowhere"), "resolves to nothing"),
    (D, cell("units.csv", 1, "started_utc", "yesterday"), "ISO 8601"),
    (L, cell("samples.csv.gz", 0, "repeat", "999"), "a repeat index beyond the"),
    (L, removed(("config", "hot_rows")), "config.hot_rows must be present"),
    (L, removed(("measure", "spin_us")), "measure.spin_us must be present (the head start"),   # was a silent 0 µs
    (P, removed(("config", "seed")), "config.seed must be present"),
    (P, field(("derived_metrics", 0), []), "derived_metrics must be a list of strings"),   # was a TypeError
    (T, field(("ranges", 0, "range"), []), "ranges[0].range must be a non-empty string"),   # was a TypeError
    (D, first_where("consumer_artifact_time_us", "", "consumer_artifact_time_us", "1.5", "samples.csv.gz"),
     "a repeat is timed by one timer"),
    # a blocking-timer run without its timer was read as a spin run of before the blocking timer (the
    # report named a 50 µs spin head start; found by the distributed damage property in CI)
    (D, removed(("measure", "timer")), "measure.timer must be present in a ladder run whose samples"),
    (D, field(("measure", "timer"), None), "measure.timer must be present in a ladder run whose samples"),
    # profile: identity columns held to the NVTX range, profiles to the manifest
    (P, cell("metrics.csv.gz", 3316, "pin", "NaN"), "what its nvtx_range names"),
    (P, cell("metrics.csv.gz", 189, "family", "nan"), "metrics.csv"),
    (P, cell("metrics.csv.gz", 1100, "launch", "zzz"), "column launch must be a number"),
    (P, cell("metrics.csv.gz", 2674, "metric", "NaN"), "column metric must not be empty"),
    (P, cell("metrics.csv.gz", 3204, "profile", "0x10"), "metrics.csv"),
    ("hotset", cell("sweep_points.csv", 0, "hot_rows", "600000"), "a hot-set size the manifest declares"),
    # sweep: values in range, keys filled, the CI's ends together
    (S, cell("sweep_points.csv", 204, "hit_ratio", "1.5"), "hit_ratio must lie in [0, 1]"),
    (S, cell("sweep_points.csv", 204, "hit_ratio", "1e18"), "hit_ratio"),
    (S, cell("sweep_points.csv", 0, "hit_ratio", "-0.5"), "column hit_ratio has a value that is missing, not finite or negative"),
    (S, cell("sweep_points.csv", 186, "ci95_hi_us", ""), "empty only together"),
    (S, cell("sweep_points.csv", 0, "profile", ""), "sweep_points.csv"),
    (S, field(("sweep", "repeats"), "3"), "sweep.repeats"),
    # step: typed tables, keys resolving across them (the graph-surgery schema may extend these)
    ("step", rows("step_ops.csv", lambda df: df.drop(index=0)), "must name an op of step_ops.csv"),
    ("step", rows("step_ops.csv", lambda df: pd.concat([df, df.iloc[[0]]], ignore_index=True)), "repeated row"),
    ("step", rows("step_times.csv", lambda df: pd.concat([df, df.iloc[[1]]], ignore_index=True)), "repeated row"),
    ("step", cell("step_ops.csv", 0, "inputs", '{"a": 1}'), "column inputs must be a JSON list"),
    ("step", cell("step_ops.csv", 0, "outputs", "[[1, -4]]"), "column outputs must be a JSON list"),
    ("step", cell("step_ops.csv", 0, "inputs", ""), "column inputs must be a JSON list"),
    ("step", cell("step_kernels.csv", 0, "op_index", "-7"), "op_index must be >= -2"),
    ("step", cell("step_kernels.csv", 0, "step", "x"), "must be numeric"),
    ("step", cell("step_kernels.csv", 0, "duration_us", "1e300"), "above 1e+07"),
    ("step", cell("step_times.csv", 0, "step_us", "abc"), "must be numeric"),
    ("step", cell("step_dram.csv", 0, "cache_control", "some"), "column cache_control must be one of"),
    ("step", cell("step_dram.csv", 0, "launch", "zzz"), "must be numeric"),
    ("step", rows("step_kernels.csv", lambda df: df[df["condition"] != "natural"]), "no natural rows"),
    ("step", cell("step_kernels.csv", 0, "kernel", "inf"), "holds other kernels than its other steps"),
    ("step", cell("step_kernels.csv", 0, "kernel", ""), "column kernel must not be empty"),
    ("step", cell("step_dram.csv", 0, "key", ""), "column key must not be empty"),
    ("step", field(("step", "repeats"), "10"), "step.repeats"),
    ("step", field(("step", "mode"), "warp"), "step.mode"),
    ("step-graph", removed(("step", "mode")), "step.mode must be graph exactly when"),
    ("step-surgery", cell("step_kernels.csv", 0, "condition", "lukewarm"), "column condition must be one of"),
    ("step-surgery", removed(("surgery",)), "step.mode must be surgery exactly when"),
    ("step-surgery", cell("step_edges.csv", 0, "consumer", "0"), "the producer must come before its consumer"),
    ("step-surgery", cell("step_edges.csv", 0, "consumer", "9"), "must name a kernel node of step_kernels.csv"),
    ("step-surgery", removed(("edges_method",)), "edges_method must be a non-empty string"),
    ("step-surgery", field(("edges_kernel_level",), "yes"), "must be true or false"),
    ("step-surgery", removed(("edges_kernel_level",)), "must be true or false"),
    ("ladder", cell("cells.csv", 1, "rung", "l2p_optmt"), "has no samples in samples.csv"),
    ("ladder", cell("samples.csv.gz", 0, "launch_lag_us", "abc"), "column launch_lag_us must be a number"),
    ("distributed", cell("cells.csv", 24, "quantity", "pin"), "a pair the ladder summarises"),
    (P, cell("metrics.csv.gz", 110, "report", "inf"), "column report must name a report"),
    (P, cell("metrics.csv.gz", 110, "report", ""), "column report must not be empty"),
    ("step-surgery", cell("step_kernels.csv", 0, "node", "inf"), "step_kernels.csv"),
    ("step-surgery", cell("step_kernels.csv", 0, "node", ""), "step_kernels.csv"),
    # CI's 200-example property run (2026-12-02): a manifest count of true read as 1; an edge row moved to a new edge
    ("step-surgery", field(("surgery", "matched_kernels"), True), "surgery.matched_kernels must be a whole number >= 0"),
    ("sweep", cell("sweep_points.csv", 0, "x", "1e300"), "holds more than one x"),
    ("profile", field(("control",), None), "control is None, but metrics.csv holds the validity control's arms"),
    ("profile", first_where("metric", "lts__t_sectors_op_read_lookup_hit.sum", "metric", "inf", "metrics.csv.gz"),
     "column metric must be an Nsight Compute metric name"),
    ("step-surgery", field(("surgery", "graph_kernels"), 0), "surgery.graph_kernels is 0"),
    ("step-surgery", field(("surgery", "call_us"), {}), "surgery.call_us must be a list"),
    ("step-surgery", cell("step_edges.csv", 0, "edge", "999"), "its arms hold different repeats"),
    ("step-surgery", cell("step_edges.csv", 0, "bytes", "5"), "holds more than one bytes"),
    ("step-graph", field(("graph", "matched_kernels"), -1), "graph.matched_kernels must be a whole number >= 0"),
    ("step-edges", cell("step_edges.csv", 0, "producer", "99"), "column producer must name an op"),
    ("step-edges", rows("step_edges.csv", lambda df: df.assign(producer=df["consumer"], consumer=df["producer"])),
     "the producer must come before its consumer"),
    ("step-edges", cell("step_edges.csv", 0, "bytes", "-5"), "negative value"),
    # timeline: a phase outside its timeline
    (T, cell("phases.csv", 2, "end_us", "99999999"), "outside its timeline"),
    (T, cell("phases.csv", 2, "range", "l2attr@call:elsewhere"), "phases.csv"),
]


def _refused(kind: str, change: Callable[[Path], None], rule: str, tmp: Path) -> None:
    run = rm.copy_run(kind, tmp)
    change(run)
    before = rm.digest(run)
    for argv in rm.readers(kind, run, tmp / "out.md"):
        assert main(argv) != 0, argv
    assert rm.digest(run) == before and not (tmp / "out.md").exists()


def _one_per_kind_fast(cases: list[tuple]) -> list[Any]:
    """Each run kind's first case stays in the README's command; the others are `slow` (.ci/run runs
    them right after it): the mechanism is checked fast, every counterexample in CI."""
    seen: set[str] = set()
    out = []
    for c in cases:
        out.append(pytest.param(*c, id=f"{c[0]}-{c[2][:30]}", marks=() if c[0] not in seen else pytest.mark.slow))
        seen.add(c[0])
    return out


@pytest.mark.parametrize("kind,change,rule", _one_per_kind_fast(CASES))
def test_damage_is_one_line_naming_file_and_rule(kind: str, change: Callable[[Path], None], rule: str,
                                                 tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _refused(kind, change, rule, tmp_path)
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert err and all(": error: " in x for x in err) and "Traceback" not in "\n".join(err)
    assert all(rule in x and (str(tmp_path) in x) for x in err), err


@pytest.mark.parametrize("kind", [E, L, S, T, "step"])
@pytest.mark.parametrize("name,change,rule", MANIFEST_CASES, ids=[c[0] for c in MANIFEST_CASES])
def test_a_manifest_that_cannot_be_read_is_one_line(kind: str, name: str, change: Callable[[Path], None], rule: str,
                                                     tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _refused(kind, change, rule, tmp_path)
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert err and all(rule in x and "manifest.json" in x for x in err), err


@pytest.mark.parametrize("kind", [L, S])
def test_resume_reads_the_manifest_the_same_way(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = rm.copy_run(kind, tmp_path)
    (run / "manifest.json").write_bytes(b"[" * 5000 + b"]" * 5000)
    argv = ["ladder", "--resume", str(run)] if kind == L else ["sweep", "--resume", str(run)]
    assert main(argv) == 2
    assert "nested more than" in capsys.readouterr().err


@pytest.mark.parametrize("value", [None, "x", 5.0, [1]])
def test_a_damaged_retention_check_is_said_in_the_report(value: object, tmp_path: Path) -> None:
    """occupy_ncu.json beside an occupy sweep: a retained share that is not a share is printed
    as an unreadable check (the report's caveat), never a traceback."""
    import shutil

    run = tmp_path / "occupy"
    shutil.copytree(rm.EX / "20261201T210348Z-bench-occupy", run)
    check = json.loads((run / "occupy_ncu.json").read_text())
    check["results"][0]["retained_share"] = value
    (run / "occupy_ncu.json").write_text(json.dumps(check))
    assert main(["report", str(run), "--format", "md", "-o", str(tmp_path / "o.md")]) == 0
    assert "unreadable (result 0: retained_share must be a finite share" in (tmp_path / "o.md").read_text()


@pytest.mark.parametrize("kind", [L, S])
def test_a_resume_of_a_manifest_without_its_kind_names_the_manifest(kind: str, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:
    """The CI-profile property's counterexample (manifest ('kind',) removed): one line naming manifest.json."""
    import json

    run = rm.copy_run(kind, tmp_path)
    m = json.loads((run / "manifest.json").read_text())
    del m["kind"]
    (run / "manifest.json").write_text(json.dumps(m))
    argv = ["ladder", "--resume", str(run)] if kind == L else ["sweep", "--resume", str(run)]
    assert main(argv) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and "manifest.json" in err[0] and "Traceback" not in err[0], err


def test_a_sweep_whose_repeats_are_null_is_read_without_a_traceback(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    """The CI-sweep property's counterexample (manifest ('sweep', 'repeats') 3 -> None): the units
    check took int(None). Each reader now exits 0 or says one line; none raises."""
    run = rm.copy_run(S, tmp_path)
    m = json.loads((run / "manifest.json").read_text())
    m["sweep"]["repeats"] = None
    (run / "manifest.json").write_text(json.dumps(m))
    for argv in rm.readers(S, run, tmp_path / "out.md"):
        code = main(argv)
        err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
        assert code == 0 or (len(err) == 1 and ": error: " in err[0]), err
