"""The graph kernel counts a step manifest records are held to the kernel table: counts known by
hand on a three-node table (one node the eager ops did not launch), and each damage refused."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from l2attr.errors import UserError
from l2attr.steps.check.counts import check_graph_counts, expected_counts


def _kernels(mode: str) -> pd.DataFrame:
    rows = []
    for step in (0, 1):
        for node, op in ((0, 0), (1, -2), (2, 1)):
            rows.append({"condition": "natural", "step": step, "op_index": op, "kernel_index": 0,
                         "kernel": f"k{node}", "node": node})
        rows.append({"condition": "cold", "step": step, "op_index": 0, "kernel_index": 0, "kernel": "k0", "node": 0})
    df = pd.DataFrame(rows)
    return df if mode == "surgery" else df.drop(columns="node")


def _manifest(mode: str, **section: object) -> dict:
    base = ({"graph_kernels": 3, "matched_kernels": 2, "eager_kernels": 2, "call_us": [1.0, 2.0],
             "torch_graph_us": [1.0, 2.0]} if mode == "surgery"
            else {"replay_kernels": 3, "matched_kernels": 2, "eager_kernels": 2})
    return {"step": {"mode": mode, "repeats": 2}, mode: {**base, **section}}


@pytest.mark.parametrize("mode", ["surgery", "graph"])
def test_the_counts_are_the_tables(mode):
    section, want = expected_counts({"step": {"mode": mode}}, _kernels(mode))
    assert section == mode
    assert want == ({"graph_kernels": 3, "matched_kernels": 2} if mode == "surgery"
                    else {"replay_kernels": 3, "matched_kernels": 2})
    check_graph_counts(_manifest(mode), _kernels(mode), Path("run"))


@pytest.mark.parametrize("mode", ["surgery", "graph"])
@pytest.mark.parametrize("value", [True, 1, 3, -1, 2.0, "2", None])
def test_a_matched_count_that_is_not_the_tables_is_refused(mode, value):
    with pytest.raises(UserError, match="matched_kernels"):
        check_graph_counts(_manifest(mode, matched_kernels=value), _kernels(mode), Path("run"))


@pytest.mark.parametrize("field,value", [("call_us", [1.0, 2.0, 3.0]), ("torch_graph_us", [1.0, 2.0, 3.0]), ("call_us", [1.0, True]),
                                         ("call_us", {}), ("torch_graph_us", [1.0, -2.0]),
                                         ("call_kernel_us", [1.0]), ("call_kernels", [3, 0]), ("call_kernels", True),
                                         ("call_kernel_us", None)])
def test_call_times_at_most_one_per_repeat_each_or_none(field, value):
    with pytest.raises(UserError, match="surgery"):
        check_graph_counts(_manifest("surgery", **{"call_kernel_us": [5.0, 6.0], "call_kernels": [3, 3], field: value}),
                           _kernels("surgery"), Path("run"))


@pytest.mark.parametrize("section", [
    {"call_us": [], "torch_graph_us": []},                                  # the user's own graph
    {"call_us": [], "torch_graph_us": [], "call_kernel_us": [], "call_kernels": []},
    {"torch_graph_us": [1.0]},                                              # a discarded sample left out
    {"call_us": [], "torch_graph_us": [], "call_kernel_us": [5.0, 6.0], "call_kernels": [3, 3]},   # every sample discarded
    {"call_kernel_us": [5.0, 6.0], "call_kernels": [3, 3]},
    {"call_us": [1.0, 2.0], "torch_graph_us": []},     # every sample of torch's replay discarded (an H100 run)
    {"call_us": [], "torch_graph_us": [1.0, 2.0]}])    # the call timed out behind the blocking kernel
def test_what_a_writer_records_passes(section):
    check_graph_counts(_manifest("surgery", **section), _kernels("surgery"), Path("run"))


def test_a_per_op_step_has_no_graph_counts():
    assert expected_counts({"step": {"mode": "eager"}}, _kernels("graph")) == ("", {})


def _declared(kernels: pd.DataFrame, times: pd.DataFrame | None = None) -> None:
    from l2attr.steps.check.counts import check_declared

    k = kernels.assign(duration_us=1.0)
    check_declared({"step": {"mode": "graph", "repeats": 2}}, k, times, None, Path("run"))


def test_repeats_named_0_to_n_minus_1_pass() -> None:
    _declared(_kernels("graph"), pd.DataFrame({"repeat": [0, 1, 2, 3]}))


@pytest.mark.parametrize("name", [2, -1, 0.5, "x"])
def test_an_arm_with_a_repeat_outside_0_to_n_minus_1_is_refused(name: object) -> None:
    """Issue 52: steps 0-8 and 10 with step.repeats 10 passed the count and printed "not measured at nan %"."""
    k = _kernels("graph").astype({"step": object})
    k.loc[(k["condition"] == "cold") & (k["step"] == 1), "step"] = name
    with pytest.raises(UserError, match=r"arm cold: step .* is no repeat of 0\.\.1"):
        _declared(k)


@pytest.mark.parametrize("repeats", [[0, 1, 2, 4], [0, 1, 2, 3.5], [0, 1, 2, 2], [0, 1, 2, "x"]])
def test_step_times_repeats_are_named_not_counted(repeats: list[object]) -> None:
    with pytest.raises(UserError, match="step_times.csv: repeat"):
        _declared(_kernels("graph"), pd.DataFrame({"repeat": repeats}))
