"""Graph surgery's CPU side on data whose answer is known by hand: the bracketed judgement, the
arm plan, node keying of replays (and its refusals), attribution by name, the refusal of a graph
with host nodes, and the committed H200 surgery runs read back through the same analysis."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from l2attr.steps.analyse.answer import answer, bracket, name_op
from l2attr.errors import UserError
from l2attr.steps.measure.attribute import assign
from l2attr.steps.measure.trace import Slots, occurrence_keys, plan
from l2attr.steps.measure.surgery import Shape, refuse_shape
from l2attr.vocab import Judgement, L2Condition

F, S, W = Judgement.FASTER, Judgement.SLOWER, Judgement.WITHIN_NOISE
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("clean,dirty,want", [
    (F, F, F), (S, S, S), (W, W, W), (S, F, Judgement.WRITE_BACK), (S, W, Judgement.WRITE_BACK),
    (W, F, Judgement.DEPENDS), (F, W, Judgement.DEPENDS), (F, None, F)])
def test_a_word_only_where_both_readings_agree(clean, dirty, want):
    assert bracket(clean, dirty) == want


def test_the_arms_rotate_each_repeat():
    assert plan(["natural", "cold", "cold_dirty"], 3) == [
        (0, "natural"), (0, "cold"), (0, "cold_dirty"), (1, "cold"), (1, "cold_dirty"), (1, "natural"),
        (2, "cold_dirty"), (2, "natural"), (2, "cold")]


def test_same_named_kernels_are_keyed_by_occurrence():
    assert occurrence_keys(["a", "b", "a"]) == [("a", 0), ("b", 0), ("a", 1)]


def _graph_trace(replays: list[tuple[L2Condition, int, list[str], list[float]]]) -> tuple[dict, Slots]:
    """A kineto trace of graph replays, each in its numbered range: one cudaGraphLaunch whose
    kernels share its correlation id, after a kernel the replay launches itself (dropped)."""
    ev, slots, t = [], Slots(), 0.0
    for corr, (cond, step, names, durs) in enumerate(replays, start=1):
        fill = 1000 + corr
        ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": t + 1, "dur": 1,
                "args": {"correlation": fill}},
               {"ph": "X", "cat": "kernel", "name": "fill_rng", "tid": 7, "ts": t + 2, "dur": 1,
                "args": {"correlation": fill, "stream": 7}},
               {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "tid": 1, "ts": t + 3, "dur": 1,
                "args": {"correlation": corr}},
               {"ph": "X", "cat": "user_annotation", "name": slots.name(condition=cond, step=step), "tid": 1,
                "ts": t, "dur": 10}]
        ts = t + 5
        for n, d in zip(names, durs):
            ev.append({"ph": "X", "cat": "kernel", "name": n, "tid": 7, "ts": ts, "dur": d,
                       "args": {"correlation": corr, "stream": 7}})
            ts += d + 1
        t = ts + 50
    return {"traceEvents": ev}, slots


def test_node_kernels_pairs_natural_by_name_and_refuses_a_changed_replay():
    from l2attr.steps.measure import trace as replay

    cold, nat = L2Condition.COLD, L2Condition.NATURAL
    arms = [(cold, 0, ["a", "b"], [2.0, 3.0]), (nat, 1, ["b", "a"], [1.0, 1.5])]
    k = replay.node_kernels(*_graph_trace(arms))
    assert set(k["condition"]) == {"cold", "natural"} and "fill_rng" not in set(k["kernel"])
    got = k[k["condition"] == "natural"].set_index("kernel")["node"].to_dict()
    assert got == {"a": 0, "b": 1}           # natural ran b first (overlap): matched by name, not position
    with pytest.raises(UserError, match="changes between replays"):
        replay.node_kernels(*_graph_trace(arms + [(nat, 2, ["a"], [1.0])]))
    with pytest.raises(UserError, match="another order"):      # a serialised cold copy keeps node order
        replay.node_kernels(*_graph_trace(arms + [(cold, 3, ["b", "a"], [3.0, 2.0])]))


def test_a_range_the_slots_did_not_number_is_not_a_replay():
    """Kernels inside another session's numbered range (or a slot number past the table) are left out."""
    from l2attr.steps.measure import trace as replay

    tr, slots = _graph_trace([(L2Condition.COLD, 0, ["a"], [2.0]), (L2Condition.NATURAL, 0, ["a"], [1.0])])
    other = replay.Slots()
    other.name(condition=L2Condition.COLD, step=0)           # numbers slot 0 only
    assert set(replay.kernels(tr, other)["condition"]) == {"cold"}
    kept = {**tr, replay.SLOTS_KEY: slots.table()}
    assert replay.Slots.kept(kept).table() == [{"condition": "cold", "step": 0}, {"condition": "natural", "step": 0}]
    with pytest.raises(UserError, match="table of traced replays"):
        replay.Slots.kept(tr)


def test_graph_kernels_take_their_eager_op_or_a_name():
    k = pd.DataFrame({"node": [0, 1, 2], "kernel": ["gemm", "triton_poi_fused_gelu_0", "gemm"]})
    eager = pd.DataFrame({"op_index": [0, 1, 2], "kernel_index": [0, 0, 0], "kernel": ["gemm", "gelu_ew", "gemm"],
                          "start_us": [0, 1, 2]})
    out, counts = assign(k, list(k["kernel"]), eager)
    assert list(out["op_index"]) == [0, -2, 2] and counts["matched_kernels"] == 2
    assert name_op("triton_poi_fused_gelu_0") == "triton:fused_gelu"


def test_host_and_conditional_nodes_and_changing_steps_are_one_line():
    with pytest.raises(UserError, match="Host"):
        refuse_shape(Shape(["Kernel", "Host"], [object()], 0, ["Host"]), None)
    with pytest.raises(UserError, match="no GPU kernel"):
        refuse_shape(Shape([], [], 0, []), None)
    with pytest.raises(UserError, match="changes between calls"):
        refuse_shape(Shape(["Kernel"], [object()]), Shape(["Kernel", "Kernel"], [object(), object()]))


def _kern(cond: str, step: int, times: list[float]) -> list[dict]:
    return [{"condition": cond, "step": step, "op_index": i, "kernel_index": 0, "kernel": f"k{i}", "duration_us": t,
             "start_us": 100.0 * i, "stream": 7, "node": i} for i, t in enumerate(times)]


def test_write_back_is_not_called_a_cost():
    """A kernel slower in natural than after a clean flush, faster than after a dirty one: write-back."""
    rows = []
    for s in range(8):
        j = 0.01 * (s % 3)
        rows += _kern("natural", s, [10.0 + j, 5.0 + j]) + _kern("cold", s, [9.0 + j, 6.0 + j])
        rows += _kern("cold_dirty", s, [11.0 + j, 7.0 + j])
    ops = pd.DataFrame({"op_index": [0, 1], "op": ["mm", "gelu"], "module": ["", ""], "flushed_in_cold": [True, True],
                        "inputs": ["[]", "[]"], "outputs": ["[]", "[]"]})
    ans = answer(pd.DataFrame(rows), ops, every_kernel=True)
    got = ans.kernels.set_index("op")["judgement"].to_dict()
    assert got == {"mm": Judgement.WRITE_BACK.value, "gelu": Judgement.FASTER.value}
    assert ans.kernels.set_index("op")["write_back_bound_us"].round(6).to_dict() == {"mm": 2.0, "gelu": 1.0}


def test_committed_surgery_runs_have_every_kernel_cold():
    from l2attr.steps.analyse.answer import analyse_step

    runs = sorted((ROOT / "examples" / "steps" / "surgery").glob("*-bert-layer-fastpath"))
    assert runs, "the BERT fast-path surgery run is committed"
    ans = analyse_step(runs[-1])
    assert len(ans.kernels) == (ans.manifest["surgery"]["graph_kernels"]) and bool(ans.kernels["met_flush"].all())
    assert ans.kernels["cold_us"].notna().all() and ans.kernels["dirty_us"].notna().all()


def test_the_step_page_folds_every_kernel_with_its_write_back_bound():
    """A surgery step with more kernels than the visible table: the page's folded table has one row
    per kernel node, each with its write-back bound (the issue: each kernel's share, not the top 15)."""
    from l2attr.steps.analyse.answer import analyse_step
    from l2attr.steps.section.html import card, render
    from l2attr.steps.section.text import SURGERY_HEADERS

    run = sorted((ROOT / "examples" / "steps" / "surgery").glob("*-dlrm-step-no-pin"))[-1]
    ans = analyse_step(run)
    c = card(ans, 0)
    n = ans.manifest["surgery"]["graph_kernels"]
    assert n > len(c["kernels"]) and len(c["every"]) == n
    wb = SURGERY_HEADERS.index("write-back ≤ µs (% of natural)")
    assert all("%" in row[wb] for row in c["every"])
    assert [int(row[0]) for row in c["every"]] == sorted(int(row[0]) for row in c["every"])
    assert f"Every kernel ({n}, in node order)" in render([ans], [run])
