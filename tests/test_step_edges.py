"""Selective eviction per edge on a CPU: which bytes are read back (and in which order), how the
arms' kernels are summed from a hand-made kineto trace, what the analysis judges (saving, control)
on tables whose answer is known by hand, and which edges get measured."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from l2attr.steps.analyse.answer import edges
from l2attr.steps.analyse.edges import candidates, describe, edge_results, views
from l2attr.errors import UserError
from l2attr.steps.measure.edges import EdgePlan, consumer_rows, rotate, sectors, warm_ranges
from l2attr.steps.measure.record import OpRecord
from l2attr.steps.measure.trace import Slots, edge_kernels
from l2attr.vocab import L2Condition


def _op(i, ins=(), outs=(), view=False, name="op"):
    return OpRecord(i, name, "", list(ins), list(outs), view=view)


def test_warm_ranges_touched_bytes_oldest_access_first_each_once_producer_left_out():
    ops = [_op(0, outs=[(1000, 100)]),                                # writes A
           _op(1, ins=[(1000, 100)], outs=[(1000, 100)], view=True),  # a view of A: touches nothing
           _op(2, outs=[(5000, 200)]),                                # writes C (the producer)
           _op(3, ins=[(1000, 50)], outs=[(8000, 10)])]               # reads A's first half
    consumer = _op(4, ins=[(5000, 200), (9000, 50), (1000, 100), (1000, 100)])   # C, B (from before), A twice
    # A's second half last touched by op 0, C by op 2, A's first half by op 3; B by no op: left cold
    assert warm_ranges(consumer, ops) == [(1050, 50), (5000, 200), (1000, 50)]
    assert warm_ranges(consumer, ops, producer=2) == [(1050, 50), (1000, 50)]
    assert warm_ranges(_op(1, ins=[(9000, 50)]), [_op(0, ins=[(9000, 50)], outs=[(9000, 50)], view=True)]) == []


def test_warm_ranges_keep_the_part_of_an_input_the_producer_did_not_write():
    ops = [_op(0, outs=[(1000, 64)]), _op(1, ins=[(1000, 256)])]   # the producer wrote 64 bytes; op 1 read all
    consumer = _op(2, ins=[(1000, 256)])
    assert warm_ranges(consumer, ops, producer=0) == [(1064, 192)]
    assert warm_ranges(consumer, ops) == [(1000, 256)]


def test_sectors_cover_every_byte_from_an_aligned_start():
    assert sectors(64, 32) == (64, 1)
    assert sectors(70, 32) == (64, 2)           # 70..101 touches sectors 64 and 96
    assert sectors(100, 1) == (96, 1)
    first, n = sectors(12345, 1000)
    assert first % 32 == 0 and first <= 12345 and first + 32 * n >= 12345 + 1000 > first + 32 * (n - 1)


def test_rotate_gives_every_arm_every_position():
    arms = ("a", "b", "c", "d")
    assert {rotate(arms, k)[0] for k in range(4)} == set(arms) and rotate(arms, 5) == ("b", "c", "d", "a")


def _edge_trace(times: dict[tuple[int, str, int], list[float]]) -> dict:
    """One edge-range step per (edge, arm, repeat) on thread 1: the consumer op 3 launches the
    given kernels; op 2 one kernel of 100 µs; a warm_l2 kernel before the consumer (dropped)."""
    ev, corr, t, slots = [], 0, 0.0, Slots()
    for (e, arm, r), ks in times.items():
        start = t
        for op, durs in ((2, [100.0]), (3, ks)):
            corr += 1
            ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": t + 0.5, "dur": 1,
                    "args": {"correlation": corr}},
                   {"ph": "X", "cat": "kernel", "name": "warm_l2", "tid": 7, "ts": t + 1, "dur": 5,
                    "args": {"correlation": corr, "stream": 7}}]
            t += 10
            ev.append({"ph": "X", "cat": "user_annotation", "name": f"l2attr:op:{op}", "tid": 1, "ts": t, "dur": 9})
            for d in durs:
                corr += 1
                ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": t + 1, "dur": 1,
                        "args": {"correlation": corr}},
                       {"ph": "X", "cat": "kernel", "name": f"k{op}", "tid": 7, "ts": t + 2, "dur": d,
                        "args": {"correlation": corr, "stream": 7}}]
                t += 2
            t += 300
        ev.append({"ph": "X", "cat": "user_annotation", "name": slots.name(edge=e, arm=L2Condition(arm), repeat=r),
                   "tid": 1, "ts": start - 1, "dur": t - start + 2})
        t += 50
    return {"traceEvents": ev}, slots


def test_consumer_rows_sum_the_consumer_ops_kernels_per_arm():
    times = {(0, "natural", 0): [10.0, 2.0], (0, "edge_cold", 0): [14.0, 2.0], (0, "rewarmed", 0): [10.5, 2.0],
             (0, "cold", 0): [16.0, 2.5]}
    k = edge_kernels(*_edge_trace(times))
    assert "warm_l2" not in set(k["kernel"]) and set(k["op_index"]) == {2, 3}
    plans = [EdgePlan(2, 3, 4096)]
    rows = consumer_rows(k, plans, {key: 0 for key in times}).set_index("arm")
    assert rows.loc["natural", "consumer_us"] == pytest.approx(12.0)
    assert rows.loc["edge_cold", "consumer_us"] == pytest.approx(16.0)
    assert rows.loc["cold", "consumer_us"] == pytest.approx(18.5) and (rows["n_kernels"] == 2).all()
    assert (rows["producer"] == 2).all() and (rows["bytes"] == 4096).all()


def test_a_consumer_that_launched_nothing_in_an_arm_is_refused():
    k = edge_kernels(*_edge_trace({(0, "natural", 0): [10.0]}))
    with pytest.raises(UserError, match="launched no kernel"):
        consumer_rows(k, [EdgePlan(2, 3, 1)], {(0, "natural", 0): 0, (0, "cold", 0): 0})


def _raw(edge: int, arms: dict[str, float], n: int = 12, jitter: float = 0.05) -> pd.DataFrame:
    rng = np.random.default_rng(edge)
    return pd.DataFrame([{"edge": edge, "producer": 2 * edge, "consumer": 2 * edge + 1, "bytes": 1 << 20, "arm": a,
                          "repeat": r, "consumer_us": v + jitter * rng.standard_normal(), "n_kernels": 1,
                          "warmed_bytes": 0} for a, v in arms.items() for r in range(n)])


OPS = pd.DataFrame({"op_index": [0, 1, 2, 3], "op": ["mul", "sum", "add", "mm"]})


def test_edge_saving_control_holds_and_judged():
    r = edge_results(_raw(0, {"natural": 10.0, "rewarmed": 10.0, "edge_cold": 14.0, "cold": 16.0}), OPS).iloc[0]
    assert r["saving_us"] == pytest.approx(4.0, abs=0.1) and r["saving_lo"] > 0
    assert r["control"] == "holds" and r["judgement"] == "faster"
    assert r["all_cold_us"] == pytest.approx(6.0, abs=0.1)
    assert (r["producer_op"], r["consumer_op"]) == ("mul", "sum")
    assert "the edge saves" in describe(r) and "control holds" in describe(r)


def test_edge_not_judged_when_the_rewarm_does_not_reproduce_natural():
    r = edge_results(_raw(1, {"natural": 10.0, "rewarmed": 8.0, "edge_cold": 14.0, "cold": 16.0}), OPS).iloc[0]
    assert r["control"] == "fails" and r["judgement"] == "not_measured"
    assert r["rule_judgement"] == "faster" and r["vs_rewarmed_us"] == pytest.approx(6.0, abs=0.1)
    assert "not judged" in describe(r)


def test_edge_within_noise_when_the_arms_overlap():
    r = edge_results(_raw(0, {"natural": 10.0, "rewarmed": 10.0, "edge_cold": 10.0, "cold": 10.0}, jitter=0.5),
                     OPS).iloc[0]
    assert r["control"] == "holds" and r["judgement"] == "within noise"
    assert r["saving_lo"] <= 0 <= r["saving_hi"]


STEP_OPS = pd.DataFrame([
    {"op_index": 0, "op": "mm", "flushed_in_cold": True, "inputs": json.dumps([[100, 64]]), "outputs": json.dumps([[1000, 400]])},
    {"op_index": 1, "op": "view", "flushed_in_cold": False, "inputs": json.dumps([[1000, 400]]), "outputs": json.dumps([[1000, 400]])},
    {"op_index": 2, "op": "add", "flushed_in_cold": True, "inputs": json.dumps([[1000, 400], [5000, 100]]),
     "outputs": json.dumps([[6000, 400]])},
    {"op_index": 3, "op": "sum", "flushed_in_cold": True, "inputs": json.dumps([[6000, 400]]), "outputs": json.dumps([[7000, 4]])},
])
KERN = pd.DataFrame({"op_index": [0, 2, 3, 3], "kernel_index": [0, 0, 0, 1], "saving_us": [0.5, 2.0, 3.0, 9.0],
                     "met_flush": [True, True, True, False]})


def test_views_are_neither_producer_nor_consumer_of_an_edge():
    assert views(STEP_OPS) == {1} and views(STEP_OPS.assign(view=[False, False, True, False])) == {2}
    e = edges(STEP_OPS, KERN)
    assert 1 not in set(e["producer"]) | set(e["consumer"])
    inside = e[(e["producer"] == 0) & (e["consumer"] == 2)].iloc[0]       # add read what mm wrote, through the view
    assert inside["bytes"] == 400 and inside["attributed_saving_us"] == pytest.approx(2.0 * 400 / 500)


def test_candidates_are_inside_the_step_top_attributed_first():
    e = edges(STEP_OPS, KERN)
    c = candidates(e, STEP_OPS, KERN, 5)
    assert list(zip(c["producer"], c["consumer"])) == [(2, 3), (0, 2)]      # 3.0 µs, then 1.6 µs; none from outside
    assert len(candidates(e, STEP_OPS, KERN, 1)) == 1 and candidates(e, STEP_OPS, KERN, 0).empty


def test_step_under_ncu_with_the_dram_set_by_hand(tmp_path, monkeypatch):
    """`l2attr step --ncu --ncu-metrics dram`: two application-replay runs that differ only in
    cache control, asking for the DRAM counters alone; their rows land in step_dram.csv."""
    from types import SimpleNamespace

    import l2attr.profile.ncu_import as imp
    from l2attr.steps.analyse.answer import dram_totals
    from l2attr.rundir import RunDir
    from l2attr.schema import STEP_DRAM
    from l2attr.steps.measure.ncu import child_env, profile_step

    run = RunDir.create(tmp_path, "s", {"kind": "step", "step": {"name": "s", "mode": "eager"}})
    argvs = []

    def runner(argv, echo):
        argvs.append(list(argv))
        out = argv[argv.index("-o") + 1]
        open(out + ".ncu-rep", "w").close()
        return 0

    def read(path, condition=""):
        cc = "all" if "cache-all" in str(path) else "none"
        rows = [{"nvtx_range": "l2attr@op:1", "metric": "dram__bytes_read.sum", "launch": 0, "kernel": "sum",
                 "value": 4000.0 if cc == "all" else 0.0},
                {"nvtx_range": "l2attr@op:1", "metric": "dram__bytes_write.sum", "launch": 0, "kernel": "sum", "value": 4.0}]
        return SimpleNamespace(table=pd.DataFrame(rows))

    monkeypatch.setattr(imp, "read_report", read)
    df = profile_step(["python", "x.py"], run, child_env(tmp_path, 1), chip="gh100", runner=runner, log=lambda s: None,
                      metrics="dram")
    assert len(argvs) == 2
    for argv, cc in zip(argvs, ("none", "all")):
        assert argv[argv.index("--cache-control") + 1] == cc and argv[argv.index("--replay-mode") + 1] == "application"
        assert sorted(argv[argv.index("--metrics") + 1].split(",")) == ["dram__bytes_read.sum", "dram__bytes_write.sum"]
    assert dram_totals(df) == {"all": 4004.0, "none": 4.0} and run.has(STEP_DRAM)
    assert run.manifest()["step_ncu"]["metrics"] == "dram"


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_rewarm_kernel_compiles_to_l2_only_loads_and_no_store(tmp_path, arch):
    """The re-warm reads through L2 only (ld.global.cg) and writes nothing but its impossible sink."""
    import subprocess

    from l2attr.source import data_dir

    ptx = tmp_path / "warm.ptx"
    subprocess.run(["nvcc", f"-arch={arch}", "--std=c++17", "-ptx", "-o", str(ptx), str(data_dir("kernels") / "warm_l2.cu")],
                   check=True, capture_output=True)
    text = ptx.read_text()
    assert "ld.global.cg.u32" in text
    assert text.count("st.global") == 1          # the sink, behind a test that never passes in practice
