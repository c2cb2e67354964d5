"""Kernels that ran beside another in natural (steps/analyse/answer.py `overlapped`) are left out of a
graph-surgery answer, and the first line says how much kernel time that is."""

import pandas as pd

from l2attr.steps.analyse.answer import answer, overlapped
from l2attr.steps.table import overlap_line


def _rows(cond: str, step: int, spans: list[tuple[float, float]], durations_cold: bool = False) -> list[dict]:
    return [{"condition": cond, "step": step, "op_index": -2, "kernel_index": j, "node": j, "kernel": f"k{j}",
             "duration_us": d, "start_us": s, "stream": 7} for j, (s, d) in enumerate(spans)]


def test_overlap_is_found_both_ways_and_only_in_natural():
    k = pd.DataFrame(_rows("natural", 0, [(0, 10), (5, 2), (20, 5), (30, 1)]) +
                     _rows("cold", 0, [(0, 10), (5, 2), (20, 5), (30, 1)]))
    got = overlapped(k)
    assert got[k["condition"] == "natural"].tolist() == [True, True, False, False]
    assert not got[k["condition"] == "cold"].any()


def test_touching_end_to_start_is_no_overlap():
    k = pd.DataFrame(_rows("natural", 0, [(0, 10), (10, 2)]))
    assert not overlapped(k).any()


def test_an_overlapped_kernel_is_judged_apart_and_left_out_of_the_share():
    rows = []
    for i in range(6):
        # k0 and k1 overlap in natural (each 10 µs, sharing the GPU); cold runs them one at a time (6 µs each);
        # k2 is alone: 10 natural, 12 cold (reuse is worth 2 µs)
        rows += _rows("natural", i, [(0, 10 + 0.01 * i), (1, 10), (30, 10)])
        rows += _rows("cold", i, [(0, 6), (10, 6), (30, 12 + 0.01 * i)])
    ans = answer(pd.DataFrame(rows), pd.DataFrame(columns=["op_index", "op", "module", "flushed_in_cold"]),
                 every_kernel=True)
    k = ans.kernels.sort_values("node")
    assert k["overlapped"].tolist() == [True, True, False]
    assert k["judgement"].tolist()[:2] == ["ran beside another kernel"] * 2
    assert abs(ans.kernel_time_us - 10.0) < 1e-9            # k2 alone
    assert abs(ans.saving_us - 2.0) < 0.1 and ans.judgement == "faster"
    assert overlap_line(ans.kernels).startswith("2 of 3 kernels (66.7 % of natural kernel time) ran beside")
