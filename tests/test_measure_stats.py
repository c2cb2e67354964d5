"""Timing summaries: hand-computed medians, percentiles, CI coverage, kernel sums, spread."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from l2attr.analysis.spread import repeat_spread, spread_summary
from l2attr.measure.stats import bootstrap_median_ci, summarize, summarize_cell
from l2attr.ladders.measure.run import consumer_bytes_per_call
from l2attr.dlrm.config import WorkloadConfig


def test_summarize_hand_computed():
    s = summarize(np.array([1.0, 2.0, 3.0, 4.0, 100.0]))
    assert s["n_samples"] == 5
    assert s["median_us"] == 3.0
    assert s["p10_us"] == pytest.approx(1.4)   # linear interpolation: 1 + 0.4 * (2 - 1)
    assert s["p90_us"] == pytest.approx(61.6)  # 4 + 0.6 * (100 - 4)
    assert s["ci95_lo_us"] <= 3.0 <= s["ci95_hi_us"]


def test_summarize_ignores_nan_and_handles_empty():
    assert summarize(np.array([np.nan, 5.0]))["median_us"] == 5.0
    assert math.isnan(summarize(np.array([np.nan]))["median_us"])


def test_bootstrap_ci_narrows_with_more_samples():
    rng = np.random.default_rng(1)
    small = rng.normal(50, 5, 20)
    large = rng.normal(50, 5, 2000)
    lo_s, hi_s = bootstrap_median_ci(small)
    lo_l, hi_l = bootstrap_median_ci(large)
    assert hi_l - lo_l < hi_s - lo_s
    assert lo_l < 50 < hi_l


def _samples(pin, cons, wall, rung="l2p_optmt", artifact=None):
    n = len(cons)
    return pd.DataFrame({"family": "artifact", "rung": rung, "pin": "element" if rung == "l2p_optmt" else "none",
                         "profile": "reuse_high", "l2_state": "natural",
                         "repeat": 0, "batch": range(n), "table": 0,
                         "pin_time_us": pin, "consumer_time_us": cons,
                         "consumer_artifact_time_us": artifact if artifact is not None else [np.nan] * n,
                         "call_wall_time_us": wall})


def _sorted_resamples_ci(values: np.ndarray, resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """The bootstrap written plainly: draw each resample, take np.median of it."""
    drawn = values[np.random.default_rng(seed).integers(0, values.size, size=(resamples, values.size))]
    lo, hi = np.quantile(np.median(drawn, axis=1), [0.025, 0.975])
    return float(lo), float(hi)


@pytest.mark.parametrize("n", [2, 3, 4, 7, 30, 167, 168, 513, 1000, pytest.param(4097, marks=pytest.mark.slow)])
def test_bootstrap_by_counts_is_the_bootstrap_of_sorted_resamples(n: int) -> None:
    """The counting path (order statistics of the drawn counts) gives bit for bit the interval of
    sorting every resample: odd and even lengths, ties (values on a 0.5 grid), above and below the
    4,096 samples whose counts are kept, and a second call served from the kept counts."""
    rng = np.random.default_rng(n)
    for values in (rng.normal(100.0, 3.0, n), np.round(rng.normal(10.0, 1.0, n) * 2) / 2):
        want = _sorted_resamples_ci(values)
        assert bootstrap_median_ci(values) == want
        assert bootstrap_median_ci(values) == want
    assert bootstrap_median_ci(np.arange(n, dtype=float), seed=3) == _sorted_resamples_ci(np.arange(n, dtype=float), seed=3)


def test_kernels_quantity_is_median_of_per_call_sums():
    df = _samples(pin=[10.0, 1.0, 5.0], cons=[1.0, 10.0, 5.0], wall=[np.nan] * 3)
    out = summarize_cell(df, bytes_per_call=1000).set_index(["quantity", "timer"])
    assert out.loc[("kernels", "kernel"), "median_us"] == 11.0   # per-call sums 11, 11, 10 (sum of medians: 10)
    assert out.loc[("pin", "kernel"), "median_us"] == 5.0
    assert out.loc[("consumer", "kernel"), "median_us"] == 5.0
    assert ("call", "wall") not in out.index                     # no host-timed samples
    assert ("consumer", "artifact") not in out.index
    assert out.loc[("consumer", "kernel"), "achieved_GBps"] == pytest.approx(1000 / 5e-6 / 1e9)
    assert (out["family"] == "artifact").all() and (out["pin"] == "element").all()


def test_host_repeat_gives_artifact_timer_and_wall_cells():
    nan3 = [np.nan] * 3
    df = _samples(pin=nan3, cons=nan3, wall=[100.0, 90.0, 80.0], artifact=[60.0, 70.0, 50.0])
    out = summarize_cell(df, bytes_per_call=1000).set_index(["quantity", "timer"])
    assert out.loc[("consumer", "artifact"), "median_us"] == 60.0
    assert out.loc[("call", "wall"), "median_us"] == 90.0
    assert out.loc[("consumer", "artifact"), "bytes_per_call"] == 0      # bandwidth: kernel timer only
    assert math.isnan(out.loc[("consumer", "artifact"), "achieved_GBps"])


def test_kernels_quantity_counts_missing_pin_as_zero():
    df = _samples(pin=[np.nan] * 3, cons=[4.0, 5.0, 6.0], wall=[np.nan] * 3, rung="optmt")
    out = summarize_cell(df, bytes_per_call=1).set_index("quantity")
    assert "pin" not in out.index
    assert out.loc["kernels", "median_us"] == 5.0


def test_repeat_spread_percent():
    a = _samples(pin=[np.nan] * 3, cons=[10.0, 10.0, 10.0], wall=[np.nan] * 3)
    b = a.assign(repeat=1, consumer_time_us=[11.0, 11.0, 11.0])
    spread = repeat_spread(pd.concat([a, b]))
    assert spread.spread_pct.iloc[0] == pytest.approx(1.0 / 10.5 * 100)
    assert spread.repeats.iloc[0] == 2


def test_consumer_bytes_artifact_shape():
    cfg = WorkloadConfig()
    # 2048 bags x 150 lookups x (128 fp32 row + int64 index) + 2048 int64 offsets
    assert consumer_bytes_per_call(cfg) == 2048 * 150 * (512 + 8) + 2048 * 8


def test_spread_summary_per_timer():
    a = _samples(pin=[np.nan] * 3, cons=[10.0, 10.0, 10.0], wall=[np.nan] * 3)
    b = a.assign(repeat=1, consumer_time_us=[12.0, 12.0, 12.0])
    host = a.assign(repeat=2, consumer_time_us=np.nan, call_wall_time_us=[100.0, 100.0, 100.0])
    host2 = host.assign(repeat=3, call_wall_time_us=[90.0, 90.0, 90.0])
    out = spread_summary(pd.concat([a, b, host, host2])).set_index("timer")
    assert out.loc["consumer (kernel timer)", "worst_spread_pct"] == pytest.approx(2 / 11 * 100)
    assert out.loc["whole call (wall clock)", "median_spread_pct"] == pytest.approx(10 / 95 * 100)
    assert "pin (kernel timer)" not in out.index            # no pin samples: no row, not a zero
    assert out.loc["consumer (kernel timer)", "worst_cell"] == "artifact/l2p_optmt/element/reuse_high/natural"


def test_launch_lag_effect_by_hand():
    """Cell a: the one lagged sample is the slow one, the median stays 10. Cell b: two of three are
    lagged, the median moves from 12 to the clean 10 (20 %). Share 3 of 7."""
    import pandas as pd

    from l2attr.analysis.spread import launch_lag_effect

    rows = [("a", 10, 0), ("a", 10, 5), ("a", 10, 1), ("a", 20, 80), ("b", 10, 2), ("b", 12, 60), ("b", 14, 55)]
    s = pd.DataFrame([{"family": "tuned", "rung": r, "pin": "none", "profile": "random", "l2_state": "natural",
                       "consumer_time_us": t, "launch_lag_us": lag} for r, t, lag in rows])
    got = launch_lag_effect(s, 50.0)
    assert got["lagged_pct"] == pytest.approx(300 / 7)
    assert got["max_shift_pct"] == pytest.approx(20.0)
    assert got["worst_cell"] == "tuned/b/none/random/natural"
    assert launch_lag_effect(s, 0.0) is None
    assert launch_lag_effect(s.drop(columns="launch_lag_us"), 50.0) is None


def test_launch_lag_wording_by_hand():
    """The summary line's one wording on hand-made samples: 2 of 8 launched after a 50 µs spin; the lagged
    sample of cell b is its slow one (median 11 -> 10 without it: 10 %), cell a's is not (no shift)."""
    import pandas as pd

    from l2attr.analysis.spread import describe_launch_lag, launch_lag_effect

    rows = [("a", 10, 1), ("a", 10, 2), ("a", 10, 70), ("a", 10, 3), ("b", 10, 4), ("b", 10, 5), ("b", 12, 60),
            ("b", 12, 6)]
    s = pd.DataFrame([{"family": "artifact", "rung": r, "pin": "none", "profile": "random", "l2_state": "natural",
                       "consumer_time_us": t, "launch_lag_us": lag} for r, t, lag in rows])
    lag = launch_lag_effect(s, 50.0)
    assert lag["lagged_pct"] == pytest.approx(25.0) and lag["max_shift_pct"] == pytest.approx(10.0)
    assert describe_launch_lag(lag, 50.0) == (
        "25.0 % of the kernel-timer samples were launched after the 50 µs spin head start (their event "
        "interval may hold host time); dropping them moves a consumer median by at most 10.00 % "
        "(artifact/b/none/random/natural)")


def test_blocking_timer_counts_timeouts_not_launch_lag_by_hand():
    """Under the blocking timer a late launch cannot reach the interval: only a timed-out wait counts,
    whatever launch_lag_us says (1 of 4 here, the 30 µs sample: median 15 -> 10, 50 %)."""
    import pandas as pd

    from l2attr.analysis.spread import describe_launch_lag, launch_lag_effect

    s = pd.DataFrame([{"family": "tuned", "rung": "optmt", "pin": "none", "profile": "random", "l2_state": "natural",
                       "consumer_time_us": t, "launch_lag_us": lag, "timer_discard": flag}
                      for t, lag, flag in ((10, 900, ""), (10, 5, ""), (20, 5, ""), (30, 5, "timeout"))])
    lag = launch_lag_effect(s, 0.0, "blocking")
    assert lag["lagged_pct"] == pytest.approx(25.0) and lag["max_shift_pct"] == pytest.approx(50.0)
    assert describe_launch_lag(lag, 0.0, "blocking").startswith(
        "blocking kernel timer: 25.0 % of the kernel-timer samples timed out")
