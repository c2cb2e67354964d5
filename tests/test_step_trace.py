"""Step attribution on a CPU: kernels matched to steps and ops by their launch time in a hand-made
kineto trace, per-kernel savings, the share of step time, and edges from tensor identity."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from l2attr.steps.analyse.answer import answer, edges, top_edges
from l2attr.steps.measure.trace import SLOTS_KEY, Slots, kernels as read_kernels


def _trace(steps: int, natural: dict[str, float], cold: dict[str, float]) -> dict:
    """Two ops per step on thread 1: op 0 launches kernel 'produce', op 1 'consume' (and in the
    cold arm a flush kernel before each op, which must be dropped)."""
    ev, corr, t, slots = [], 0, 0.0, Slots()
    for i in range(steps):
        for cond, times in (("natural", natural), ("cold", cold)):
            start = t
            for op, kname in enumerate(("produce", "consume")):
                if cond == "cold":
                    corr += 1
                    ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": t + 0.5,
                            "dur": 1, "args": {"correlation": corr}},
                           {"ph": "X", "cat": "kernel", "name": "flush_l2", "tid": 7, "ts": t + 2, "dur": 30,
                            "args": {"correlation": corr, "stream": 7}}]
                    t += 40
                ev.append({"ph": "X", "cat": "user_annotation", "name": f"l2attr:op:{op}", "tid": 1, "ts": t, "dur": 5})
                corr += 1
                ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": t + 1, "dur": 2,
                        "args": {"correlation": corr}},
                       {"ph": "X", "cat": "kernel", "name": kname, "tid": 7, "ts": t + 3, "dur": times[kname],
                        "args": {"correlation": corr, "stream": 7}}]
                t += 100
            ev.append({"ph": "X", "cat": "user_annotation", "name": slots.name(condition=cond, step=i), "tid": 1,
                       "ts": start - 1, "dur": t - start + 2})
            t += 50
    return {"traceEvents": ev, SLOTS_KEY: slots.table()}


def kernels(trace: dict):
    """The kernels of a hand-made trace, read through the replays it carries (as a kept trace)."""
    return read_kernels(trace, Slots.kept(trace))


OPS = pd.DataFrame([
    {"op_index": 0, "op": "mul", "module": "", "flushed_in_cold": True,
     "inputs": json.dumps([[1000, 400]]), "outputs": json.dumps([[5000, 400]])},
    {"op_index": 1, "op": "sum", "module": "", "flushed_in_cold": True,
     "inputs": json.dumps([[5000, 400]]), "outputs": json.dumps([[9000, 4]])},
])


def test_kernels_are_matched_to_steps_and_ops_and_the_flush_dropped():
    k = kernels(_trace(3, {"produce": 10.0, "consume": 20.0}, {"produce": 12.0, "consume": 30.0}))
    assert len(k) == 3 * 2 * 2 and "flush_l2" not in set(k["kernel"])
    assert set(zip(k["op_index"], k["kernel"])) == {(0, "produce"), (1, "consume")}
    assert sorted(set(k["step"])) == [0, 1, 2] and set(k["kernel_index"]) == {0}


def test_savings_share_and_edges_by_hand():
    k = kernels(_trace(6, {"produce": 10.0, "consume": 20.0}, {"produce": 12.0, "consume": 30.0}))
    ans = answer(k, OPS)
    per = ans.kernels.set_index("op")
    assert per.loc["mul", "saving_us"] == pytest.approx(2.0)
    assert per.loc["sum", "saving_us"] == pytest.approx(10.0)
    assert ans.saving_us == pytest.approx(12.0) and ans.kernel_time_us == pytest.approx(30.0)
    assert ans.share == pytest.approx(0.4)
    e = edges(OPS, ans.kernels)
    inside = e[e["producer"] == 0].iloc[0]
    assert (inside["consumer"], inside["bytes"]) == (1, 400)
    assert inside["attributed_saving_us"] == pytest.approx(10.0)     # sum reads only mul's output
    assert e[(e["consumer"] == 0)].iloc[0]["producer"] == -1          # mul's input came from before the step
    assert list(top_edges(ans, OPS)["producer_op"]) == ["mul"]


def test_equal_arms_are_within_noise():
    k = kernels(_trace(6, {"produce": 10.0, "consume": 20.0}, {"produce": 10.0, "consume": 20.0}))
    ans = answer(k, OPS)
    assert ans.judgement == "within noise" and "within noise" in ans.headline("x")


def test_step_dram_rows_from_an_imported_report_by_hand():
    from l2attr.steps.analyse.answer import dram_per_kernel, dram_totals
    from l2attr.steps.measure.ncu import dram_frame

    def rows(launch, op, metric, value):
        return {"nvtx_range": f"l2attr@op:{op}", "metric": metric, "value": value, "launch": launch, "kernel": f"k{launch}"}
    none = pd.DataFrame([rows(0, 0, "dram__bytes_read.sum", 100.0), rows(0, 0, "dram__bytes_write.sum", 10.0),
                         rows(1, 1, "dram__bytes_read.sum", 0.0), rows(2, 1, "dram__bytes_read.sum", 5.0),
                         rows(3, 7, "lts__t_sectors_lookup_hit.sum", 1.0)])
    allc = none.assign(value=[100.0, 10.0, 400.0, 5.0, 1.0])
    df = pd.concat([dram_frame(none, "none"), dram_frame(allc, "all")])
    assert set(df["key"]) == {"dram_read", "dram_write"}
    assert list(df[df["cache_control"] == "none"]["kernel_index"]) == [0, 0, 0, 1]   # the op's second launch
    assert dram_totals(df) == {"all": 515.0, "none": 115.0}
    per = dram_per_kernel(df).set_index(["op_index", "kernel_index"])
    assert per.loc[(1, 0), "all"] - per.loc[(1, 0), "none"] == 400.0
