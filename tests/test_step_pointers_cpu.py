"""Kernel-level edges of a captured step (steps/measure/pointers.py, steps/measure/graph_edges.py) on hand-made data."""

import struct

import pandas as pd
import pytest

from l2attr.steps.table import edge_names
from l2attr.schema import KERNEL_EDGES
from l2attr.errors import UserError
from l2attr.steps.measure import pointers
from l2attr.steps.measure.graph_edges import fit, rank, rows_from
from l2attr.steps.measure.pointers import blocks, kernel_edges, touched, warm_spans, words


def test_words_are_the_aligned_little_endian_words_and_a_short_tail_is_none():
    blob = struct.pack("<QQ", 0x7F00_0000_1000, 5) + b"\x01\x02\x03"
    assert words(blob) == [0x7F00_0000_1000, 5]
    assert words(b"\x01\x02\x03\x04") == []


def test_blocks_follow_each_other_in_a_segment_or_carry_their_address():
    snap = [{"address": 1000, "blocks": [{"size": 100}, {"size": 50}]},
            {"address": 500, "blocks": [{"address": 500, "size": 20}]}]
    assert blocks(snap) == [(500, 20), (1000, 100), (1100, 50)]


def test_a_word_touches_the_block_that_holds_it_only():
    spans = [(500, 20), (1000, 100), (1100, 50)]
    assert touched([499, 500, 519, 520, 1099, 1100, 1149, 1150, 7], spans) == {0, 1, 2}
    assert touched([520, 999, 1150], spans) == set()


def test_an_edge_joins_a_kernel_to_the_latest_earlier_toucher_of_each_block():
    spans = [(0, 10), (100, 20), (200, 40)]
    #        k0 touches a, k1 touches b, k2 reads a and b, k3 reads a, c (c never touched before)
    touch = [{0}, {1}, {0, 1}, {0, 2}]
    e = kernel_edges(touch, spans)
    got = {(r.producer, r.consumer): (r.bytes, r.blocks) for r in e.itertuples()}
    assert got == {(0, 2): (10, (0,)), (1, 2): (20, (1,)), (2, 3): (10, (0,))}


def test_warm_spans_oldest_first_and_without_the_producers_blocks():
    spans = [(0, 10), (100, 20), (200, 40)]
    touch = [{0}, {1}, {2}, {0, 1, 2}]
    assert warm_spans(3, touch, spans) == [(0, 10), (100, 20), (200, 40)]
    assert warm_spans(3, touch, spans, producer=1) == [(0, 10), (200, 40)]
    assert warm_spans(0, touch, spans) == []


def test_fit_keeps_the_most_recent_bytes():
    assert fit([(0, 10), (100, 20), (200, 40)], 50) == [(110, 10), (200, 40)]
    assert fit([(0, 10)], 100) == [(0, 10)]
    assert fit([(0, 10)], 0) == []


def _kernels(nat: dict[int, float], cold: dict[int, float]) -> pd.DataFrame:
    rows = [{"node": j, "condition": "natural", "duration_us": v} for j, v in nat.items()]
    rows += [{"node": j, "condition": "cold", "duration_us": v} for j, v in cold.items()]
    return pd.DataFrame(rows)


def test_rank_puts_the_consumer_with_the_larger_cold_saving_first_then_bytes():
    edges = pd.DataFrame({"producer": [0, 0, 1], "consumer": [1, 2, 2], "bytes": [5, 0, 9], "blocks": [(0,), (1,), (2,)]})
    k = _kernels({1: 10.0, 2: 10.0}, {1: 11.0, 2: 14.0})
    got = rank(edges, k, 5)
    assert list(zip(got["producer"], got["consumer"])) == [(1, 2), (0, 1)]      # the 0-byte edge is dropped
    assert rank(edges, k, 1)["consumer"].tolist() == [2]
    assert rank(edges, k, 0).empty


def _trace_rows(durations: dict[str, list[float]], names: list[str]) -> pd.DataFrame:
    rows = []
    for arm, ds in durations.items():
        for r, d in enumerate(ds):
            for j, n in enumerate(names):
                rows.append({"edge": 0, "arm": arm, "repeat": r, "op_index": -1, "kernel": n,
                             "duration_us": d if j == 2 else 1.0, "start_us": 10.0 * j + 100 * r})
    return pd.DataFrame(rows)


def test_rows_from_reads_the_consumer_node_by_name_and_occurrence():
    names = ["gemm", "relu", "gemm"]                    # the consumer is the second gemm (node 2)
    plans = pd.DataFrame({"producer": [1], "consumer": [2], "bytes": [64], "blocks": [(0,)]})
    kern = _trace_rows({"natural": [5.0, 6.0], "cold": [9.0, 9.5]}, names)
    got = rows_from(kern, plans, names, {(0, "cold"): 0})
    assert sorted(got["consumer_us"][got["arm"] == "natural"]) == [5.0, 6.0]
    assert set(got["consumer"]) == {2} and set(got["n_kernels"]) == {1}


def test_rows_from_refuses_a_replay_without_the_consumer():
    names = ["gemm", "relu", "gemm"]
    plans = pd.DataFrame({"producer": [1], "consumer": [2], "bytes": [64], "blocks": [(0,)]})
    kern = _trace_rows({"natural": [5.0]}, names)
    kern = kern[~((kern["kernel"] == "gemm") & (kern["start_us"] == 20.0))]
    with pytest.raises(UserError, match="consumer kernel gemm is missing"):
        rows_from(kern, plans, names, {})


def test_kernel_level_edges_are_named_by_their_kernel_nodes():
    k = pd.DataFrame({"node": [0, 1, 0, 1], "kernel": ["triton_poi_fused_gelu_0", "void at::native::foo<float>(int)"] * 2})
    ops = pd.DataFrame({"op_index": [0], "op": ["aten::mm"]})
    names = edge_names({KERNEL_EDGES: True}, k, ops)
    assert dict(zip(names["op_index"], names["op"])) == {0: "triton:fused_gelu", 1: "foo"}
    assert edge_names({}, k, ops) is ops


def test_no_driver_is_one_clear_reason(monkeypatch):
    monkeypatch.setattr(pointers, "_LIB", [])
    monkeypatch.setattr(pointers.ctypes, "CDLL", lambda name: (_ for _ in ()).throw(OSError("not found")))
    with pytest.raises(pointers.PointersUnavailable, match="libcuda.so.1 could not be loaded"):
        pointers.node_words(0)


def _copy_kernel_edge_run(tmp_path):
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "examples" / "steps" / "surgery"
    src = next(p for p in sorted(root.glob("*-selfcheck-quarter-l2")))
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def test_a_kernel_level_edge_must_name_kernel_nodes_in_order(tmp_path):
    from l2attr.steps.analyse.answer import analyse_step

    run = _copy_kernel_edge_run(tmp_path)
    assert analyse_step(run).measured_edges["consumer"].tolist() == [1]
    e = pd.read_csv(run / "step_edges.csv")
    e.loc[0, "consumer"] = 7                                # the self-check has kernel nodes 0 and 1
    e.to_csv(run / "step_edges.csv", index=False)
    with pytest.raises(UserError, match="must name a kernel node of step_kernels.csv"):
        analyse_step(run)
    e["consumer"], e["producer"] = 0, 1
    e.to_csv(run / "step_edges.csv", index=False)
    with pytest.raises(UserError, match="kernel node order"):
        analyse_step(run)
