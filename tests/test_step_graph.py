"""A step that replays a CUDA graph, on a CPU: the replay's kernels (no op ranges: a graph runs
without the dispatcher) get the eager step's ops by name and order, a kernel the eager step lacks
is paired with nothing, and the answer pairs graph-natural with eager-cold kernels."""

from __future__ import annotations

import pytest

from l2attr.steps.analyse.answer import answer
from l2attr.steps.analyse.answer import analyse_step
from l2attr.steps.table import load_step
from l2attr.errors import UserError
from test_step_synthetic import OPS, align, kernels, make_run, trace

NAT, COLD = {"produce": 10.0, "consume": 20.0}, {"produce": 12.0, "consume": 30.0}


def test_replayed_kernels_take_the_eager_ops_by_order():
    k, counts = align(kernels(trace(4, NAT, COLD, graph=True), graph=True))
    nat = k[k["condition"] == "natural"]
    assert set(zip(nat["op_index"], nat["kernel"])) == {(0, "produce"), (1, "consume")}
    assert counts == {"eager_kernels": 2, "replay_kernels": 2, "matched_kernels": 2}
    ans = answer(k, OPS)
    per = ans.kernels.set_index("op")
    assert per.loc["mul", "saving_us"] == pytest.approx(2.0) and per.loc["sum", "saving_us"] == pytest.approx(10.0)
    assert ans.saving_us == pytest.approx(12.0) and ans.share == pytest.approx(12.0 / 30.0)


def test_a_kernel_only_the_replay_has_is_paired_with_nothing():
    k, counts = align(kernels(trace(4, {**NAT, "memset_node": 5.0}, COLD, graph=True, extra="memset_node"), graph=True))
    nat = k[k["condition"] == "natural"]
    assert nat.loc[nat["kernel"] == "memset_node", "op_index"].eq(-2).all() and not nat["op_index"].eq(-1).any()
    assert counts["replay_kernels"] == 3 and counts["matched_kernels"] == 2
    ans = answer(k, OPS)
    assert ans.saving_us == pytest.approx(12.0)               # only paired kernels are in the saving
    assert ans.kernel_time_us == pytest.approx(35.0)          # every replayed kernel is in the step's kernel time


def test_a_replay_that_matches_nothing_is_refused():
    k = kernels(trace(2, {"a": 1.0, "b": 1.0}, COLD, graph=True), graph=True)
    k.loc[k["condition"] == "natural", "kernel"] = "other"
    with pytest.raises(UserError, match="matches"):
        align(k)
    with pytest.raises(UserError, match="no kernels traced"):
        align(k[k["condition"] == "cold"])


def test_graph_run_loads_with_different_counts_an_eager_one_does_not(tmp_path):
    g = make_run(tmp_path, "g", {**NAT, "memset_node": 5.0}, COLD, graph=True, extra="memset_node")
    m, k, _, _ = load_step(g)
    assert m["step"]["mode"] == "graph"
    ans = analyse_step(g)
    assert ans.saving_us == pytest.approx(12.0)
    e = make_run(tmp_path, "e", NAT, COLD)
    from l2attr.rundir import RunDir
    from l2attr.schema import STEP_KERNELS

    run = RunDir.open(e)
    k = run.read(STEP_KERNELS)
    run.write(STEP_KERNELS, k[~((k["condition"] == "natural") & (k["op_index"] == 1))])
    with pytest.raises(UserError, match="different numbers of kernels"):
        load_step(e)


def test_a_run_that_did_not_finish_is_refused(tmp_path):
    from l2attr.rundir import RunDir

    run = RunDir.open(make_run(tmp_path, "cut", NAT, COLD))
    run.update_manifest(status="running")
    with pytest.raises(UserError, match="did not finish"):
        load_step(run.path)
