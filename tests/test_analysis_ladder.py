"""Layer A formulas on hand-computed tables: medians, deltas over `below`, three speedups."""

from __future__ import annotations

import math

import pytest
from helpers_rundirs import tiny_cells

from l2attr.analysis.common import why
from l2attr.ladders.analyse.ladder import latency_ladder, ladder_row

# baseline 50, OptMT 40, L2P+OptMT consumer 30 + pin 20; walls 80 / 70 / 100.
MEDIANS = {
    ("baseline", "consumer"): 50.0, ("baseline", "call"): 80.0,
    ("optmt", "consumer"): 40.0, ("optmt", "call"): 70.0,
    ("l2p_optmt", "consumer"): 30.0, ("l2p_optmt", "pin"): 20.0, ("l2p_optmt", "call"): 100.0,
}


def row(medians: dict, rung: str):
    lad = latency_ladder(tiny_cells(medians))
    r = ladder_row(lad, "natural", "reuse_medium", rung)
    assert r is not None
    return r


def test_consumer_only_speedup_is_the_artifacts_number() -> None:
    assert row(MEDIANS, "l2p_optmt")["speedup_consumer"] == pytest.approx(50 / 30)   # 1.667


def test_kernel_charged_speedup_sums_medians_without_a_kernels_cell() -> None:
    r = row(MEDIANS, "l2p_optmt")
    assert r["kernels_us"] == pytest.approx(50.0)                    # 20 + 30
    assert r["speedup_kernels"] == pytest.approx(1.0)                # 50 / 50
    assert "sum of pin and consumer medians" in r["kernels_basis"]


def test_kernel_charged_speedup_prefers_the_kernels_cell() -> None:
    r = row({**MEDIANS, ("l2p_optmt", "kernels"): 52.0}, "l2p_optmt")
    assert r["kernels_us"] == 52.0
    assert r["speedup_kernels"] == pytest.approx(50 / 52)           # 0.9615
    assert r["kernels_basis"].startswith("kernels cell")


def test_wall_charged_speedup() -> None:
    assert row(MEDIANS, "l2p_optmt")["speedup_wall"] == pytest.approx(0.8)   # 80 / 100
    assert row(MEDIANS, "optmt")["speedup_wall"] == pytest.approx(80 / 70)


def test_marginal_deltas_use_the_rung_below() -> None:
    optmt = row(MEDIANS, "optmt")
    assert optmt["below"] == "baseline"
    assert optmt["delta_consumer_us"] == pytest.approx(-10.0)
    assert optmt["delta_consumer_pct"] == pytest.approx(-20.0)       # -10 / 50
    l2p = row(MEDIANS, "l2p_optmt")
    assert l2p["below"] == "optmt"
    assert l2p["delta_consumer_us"] == pytest.approx(-10.0)          # 30 - 40
    assert l2p["delta_kernels_us"] == pytest.approx(10.0)            # (20 + 30) - 40


def test_consumer_ci_comes_from_cells() -> None:
    r = row(MEDIANS, "optmt")
    assert (r["consumer_ci_lo_us"], r["consumer_us"], r["consumer_ci_hi_us"]) == (39.0, 40.0, 42.0)


def test_missing_baseline_is_nan_with_reason_never_zero() -> None:
    medians = {k: v for k, v in MEDIANS.items() if k[0] != "baseline"}
    r = row(medians, "l2p_optmt")
    for field in ("speedup_consumer", "speedup_kernels", "speedup_wall"):
        assert math.isnan(r[field])
        assert why(r, field)
    assert "baseline not measured" in why(r, "speedup_consumer")


def test_pinning_rung_without_pin_cell_is_missing_not_free() -> None:
    medians = {k: v for k, v in MEDIANS.items() if k != ("l2p_optmt", "pin")}
    r = row(medians, "l2p_optmt")
    assert math.isnan(r["kernels_us"]) and math.isnan(r["speedup_kernels"])
    assert "no pin cell" in why(r, "kernels_us")
    assert r["speedup_consumer"] == pytest.approx(50 / 30)          # still known


def test_rung_without_pin_is_charged_its_consumer_time() -> None:
    r = row(MEDIANS, "optmt")
    assert r["kernels_us"] == 40.0 and r["speedup_kernels"] == pytest.approx(1.25)
    assert math.isnan(r["pin_us"]) and why(r, "pin_us") == "rung has no pin kernel"


def test_baseline_and_torch_have_no_delta() -> None:
    lad = latency_ladder(tiny_cells({**MEDIANS, ("torch", "consumer"): 100.0}))
    base = ladder_row(lad, "natural", "reuse_medium", "baseline")
    torch = ladder_row(lad, "natural", "reuse_medium", "torch")
    assert math.isnan(base["delta_consumer_us"]) and "first rung" in why(base, "delta_consumer_us")
    assert math.isnan(torch["delta_consumer_us"]) and "reference row" in why(torch, "delta_consumer_us")
    assert torch["speedup_consumer"] == pytest.approx(0.5)


def test_source_names_the_rows_used() -> None:
    r = row(MEDIANS, "l2p_optmt")
    assert "run-a/cells.csv[natural|reuse_medium|l2p_optmt|consumer,pin,call]" in r["source"]
    assert "run-a/cells.csv[natural|reuse_medium|baseline|consumer,call]" in r["source"]


def test_rows_are_in_ladder_order_and_states_kept_apart() -> None:
    import pandas as pd
    both = pd.concat([tiny_cells(MEDIANS), tiny_cells({("baseline", "consumer"): 60.0,
                                                       ("optmt", "consumer"): 30.0}, state="flush")])
    lad = latency_ladder(both)
    assert list(lad["l2_state"]) == ["natural"] * 3 + ["flush"] * 2
    assert list(lad["rung"][:3]) == ["baseline", "optmt", "l2p_optmt"]
    assert ladder_row(lad, "flush", "reuse_medium", "optmt")["speedup_consumer"] == pytest.approx(2.0)


def test_kernel_charged_speedup_is_over_per_call_sums_from_the_writer() -> None:
    """Pin and consumer anti-correlated call by call: the median of the per-call sums (11) is not
    the sum of the medians (5 + 5 = 10), and the charged speedup must use the former."""
    import pandas as pd
    from l2attr.measure.stats import summarize_cell

    def samples(rung: str, pin: list[float], consumer: list[float]) -> pd.DataFrame:
        return pd.DataFrame({"family": "artifact", "rung": rung, "pin": "element" if rung == "l2p_optmt" else "none",
                             "profile": "reuse_medium", "l2_state": "natural", "repeat": 0,
                             "batch": range(3), "table": 0, "pin_time_us": pin, "consumer_time_us": consumer,
                             "consumer_artifact_time_us": math.nan, "call_wall_time_us": math.nan})

    cells = pd.concat([summarize_cell(samples("baseline", [math.nan] * 3, [20.0, 22.0, 24.0]), 0),
                       summarize_cell(samples("l2p_optmt", [10.0, 1.0, 5.0], [1.0, 10.0, 5.0]), 0)])
    lad = latency_ladder(cells.assign(run="r"))
    r = ladder_row(lad, "natural", "reuse_medium", "l2p_optmt")
    assert r["speedup_consumer"] == pytest.approx(22 / 5)
    assert r["kernels_us"] == 11.0 and r["speedup_kernels"] == pytest.approx(2.0)   # not 22 / 10


def test_verdict_sets_the_measured_break_even_beside_the_formula():
    """A sweep's break-even rows (hand-made) reach the verdict row and its sentence: k = 8 back to
    back (within noise from 4), none within 32 interleaved; another profile's rows do not."""
    import math

    import pandas as pd

    from l2attr.ladders.analyse.verdict import _add_measured, measured_text

    measured = pd.DataFrame([
        {"family": "tuned", "pin": "line", "profile": "reuse_high", "order": "back_to_back",
         "measured_kernel": 8.0, "even_kernel": 4.0, "max_k": 32, "run": "r"},
        {"family": "tuned", "pin": "line", "profile": "reuse_high", "order": "interleaved",
         "measured_kernel": math.inf, "even_kernel": math.inf, "max_k": 32, "run": "r"},
        {"family": "tuned", "pin": "line", "profile": "random", "order": "interleaved",
         "measured_kernel": 4.0, "max_k": 32, "run": "r"}])
    row = {"profile": "reuse_high"}
    _add_measured(row, measured)
    assert row["measured_back_to_back"] == 8.0 and math.isinf(row["measured_interleaved"])
    assert measured_text(row) == ("faster by the rule, kernel-charged (l2attr sweep amortisation): none within "
                                  "32 calls with the other tables in between, from 8 calls back to back "
                                  "(within noise from 4)")
    empty = {"profile": "reuse_low"}
    _add_measured(empty, measured)
    assert measured_text(empty) == ""


def test_rows_are_looked_up_as_pandas_equality_says():
    """analysis/common.py rows_where / first_row on a table whose answer is known by hand: text and
    numbers compared as `df[col] == value`, a missing value matching nothing, the first hit returned."""
    import pandas as pd

    from l2attr.analysis.common import first_row, rows_where

    df = pd.DataFrame({"rung": ["a", "b", "b", None], "k": [1, 2, 2, 3], "v": [10, 20, 30, 40]})
    assert rows_where(df, rung="b", k=2).tolist() == [False, True, True, False]
    assert (rows_where(df, rung="b", k=2) == ((df["rung"] == "b") & (df["k"] == 2)).to_numpy()).all()
    assert not rows_where(df, rung=None).any() and not rows_where(df, rung=math.nan).any()
    assert first_row(df, rung="b")["v"] == 20 and first_row(df, rung="z") is None
