"""The sweep judgements on hand-made points whose answers are worked out here by hand: every word
comes from the one significance rule (beyond both 95 % intervals), "within noise" otherwise.

Each case is the shape of a reading the first sweeps got wrong (issue 19 item 3): a break-even
decided by a 0.02 % difference, a half-life that rested on a gain left of 0.499, a window called
"nothing measurable" next to a +2.3 % with disjoint intervals, and "peaks at 60K" on a profile
where 120K cannot be told from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from l2attr.sweep.analyse.judge import analyse_sweep
from l2attr.sweep.analyse.break_even import crossing, k_text
from l2attr.sweep.load import SweepRun
from l2attr.sweep.analyse.verdict import quotient
from l2attr.sweep.table import SWEEP_POINTS
from l2attr.vocab import Judgement

CONFIG = {"tables": 2, "rows": 1000, "dim": 128, "dtype": "fp32", "hot_rows": 10}


def row(point: str, x: float, arm: str, quantity: str, median: float, lo: float, hi: float,
        timer: str = "kernel", family: str = "artifact", profile: str = "reuse_high", **facts: Any) -> dict:
    base = {"axis": "", "family": family, "pin": "element", "profile": profile, "point": point, "x": x,
            "order": "interleaved", "k": 1.0, "arm": arm, "hot_rows": 10.0, "hit_ratio": 0.0, "occupy_bytes": 0.0,
            "pollute_bytes": 0.0, "quantity": quantity, "timer": timer, "n_samples": 100.0, "median_us": median,
            "p10_us": lo, "p90_us": hi, "ci95_lo_us": lo, "ci95_hi_us": hi}
    return {**base, **facts}


def run_of(axis: str, rows: list[dict], tmp_path: Path) -> SweepRun:
    points = pd.DataFrame([{**r, "axis": axis} for r in rows], columns=list(SWEEP_POINTS.columns))
    return SweepRun("hand", tmp_path, {"sweep": {"axis": axis}, "config": CONFIG}, points)


# -- break-even ------------------------------------------------------------------------------------

def test_crossing_and_its_text():
    S, N, F = Judgement.SLOWER, Judgement.WITHIN_NOISE, Judgement.FASTER
    assert crossing([1, 2, 4, 8], [S, S, N, F]) == (4.0, 8.0)
    assert crossing([1, 2, 4, 8], [S, N, N, N]) == (2.0, float("inf"))
    assert crossing([8, 1, 4], [F, S, S]) == (8.0, 8.0)          # sorted by x first
    assert k_text(8.0, 32, 4.0) == "8 (within noise from 4)"
    assert k_text(float("inf"), 32, 2.0) == "within noise from 2"
    assert k_text(float("inf"), 32, float("inf")) == "> 32" and k_text(8.0, 32, 8.0) == "8"


def amortisation_rows(k4: tuple[float, float, float], k8: tuple[float, float, float]) -> list[dict]:
    """OptMT charged 100 [99.9, 100.1] at every k; the pinned arm 130 and 115 at k = 1, 2 (slower)."""
    out = []
    for k, pinned in ((1, (130.0, 129.9, 130.1)), (2, (115.0, 114.9, 115.1)), (4, k4), (8, k8)):
        point = f"back_to_back:k{k}"
        facts = {"order": "back_to_back", "k": float(k)}
        out += [row(point, k, "optmt", "charged", 100.0, 99.9, 100.1, **facts),
                row(point, k, "l2p_optmt", "charged", *pinned, **facts)]
    return out


def test_a_break_even_by_a_hair_with_overlapping_intervals_is_within_noise(tmp_path: Path):
    # k = 4: 99.98 [99.90, 100.05] against 100 [99.9, 100.1]: 1.0002x, the intervals overlap -> within noise;
    # k = 8: 95 [94.9, 95.1], clear of OptMT's interval -> faster: it pays from 8, breaks even within noise at 4
    an = analyse_sweep(run_of("amortisation", amortisation_rows((99.98, 99.90, 100.05), (95.0, 94.9, 95.1)), tmp_path))
    be = an.break_even.iloc[0]
    assert (be["even_kernel"], be["measured_kernel"]) == (4.0, 8.0)
    assert list(an.table["judgement"]) == ["slower", "slower", "within noise", "faster"]
    assert "artifact reuse_high: measured 8 (within noise from 4)" in an.reading


def test_no_k_pays_when_every_gain_is_inside_the_intervals(tmp_path: Path):
    # 0.05 % and 0.03 % faster, both inside OptMT's +-0.1 %: never measurably faster, even from k = 4
    an = analyse_sweep(run_of("amortisation", amortisation_rows((99.95, 99.85, 100.05), (99.97, 99.87, 100.07)),
                              tmp_path))
    be = an.break_even.iloc[0]
    assert be["even_kernel"] == 4.0 and be["measured_kernel"] == float("inf")
    assert "measured within noise from 4, formula n/a" in an.reading and "measured 4" not in an.reading


# -- pollution: the share of the gain left -------------------------------------------------------

def pollution_rows(pinned: dict[float, tuple[float, float, float]]) -> list[dict]:
    out = []
    for x, p in pinned.items():
        point = f"pollute_{x:g}MiB"
        out += [row(point, x, "optmt", "consumer", 100.0, 99.5, 100.5), row(point, x, "l2p_optmt", "consumer", *p)]
    return out


def test_a_gain_left_of_0_499_is_not_below_half_when_its_interval_is_not(tmp_path: Path):
    # gain at 0: 100 - 90 = 10, interval [99.5 - 90.5, 100.5 - 89.5] = [9, 11]
    # at 30: 100 - 95.01 = 4.99 -> 0.499 left, interval [(99.5 - 95.51) / 11, (100.5 - 94.51) / 9] (straddles 1/2)
    # at 60: 100 - 98 = 2 -> 0.2 left, interval [(99.5 - 98.5) / 11, (100.5 - 97.5) / 9] = [0.09, 0.33]: below half
    an = analyse_sweep(run_of("pollution", pollution_rows({
        0.0: (90.0, 89.5, 90.5), 30.0: (95.01, 94.51, 95.51), 60.0: (98.0, 97.5, 98.5), 120.0: (99.0, 98.5, 99.5)}),
        tmp_path))
    t = an.table.set_index("pollute_mib")
    assert t.loc[30.0, "gain_left"] == pytest.approx(0.499)
    assert (t.loc[30.0, "gain_left_lo"], t.loc[30.0, "gain_left_hi"]) == pytest.approx((3.99 / 11, 5.99 / 9))
    s = an.summary.iloc[0]
    assert s["below_half_by"] == 60.0                      # not 30: 0.499's interval reaches 0.67
    # the medians cross 1/2 between 0 (1.0) and 30 (0.499); the interval's ends: the low end between 0
    # (9/11) and 30 (3.99/11), the high end between 30 (5.99/9) and 60 (3/9)
    lo0, lo30, hi30, hi60 = 9 / 11, 3.99 / 11, 5.99 / 9, 3 / 9
    assert s["half_life"] == pytest.approx(0.5 * 30 / (1 - 0.499))
    assert s["half_life_lo"] == pytest.approx((lo0 - 0.5) * 30 / (lo0 - lo30))
    assert s["half_life_hi"] == pytest.approx(30 + (hi30 - 0.5) * 30 / (hi30 - hi60))
    assert "below half beyond noise by 60 MiB" in an.reading and "by 30 MiB" not in an.reading


def test_no_gain_beyond_noise_means_nothing_to_lose_and_a_plateau_near_half_is_within_noise(tmp_path: Path):
    flat = analyse_sweep(run_of("pollution", pollution_rows({0.0: (99.8, 99.3, 100.3), 30.0: (99.9, 99.4, 100.4)}),
                                tmp_path))
    assert "no gain to lose at 0 MiB (within noise)" in flat.reading
    near = analyse_sweep(run_of("pollution", pollution_rows({0.0: (90.0, 89.5, 90.5), 120.0: (94.0, 93.5, 94.5)}),
                                tmp_path))
    # 0.6 left at 120, interval [(99.5 - 94.5) / 11, (100.5 - 93.5) / 9] = [0.45, 0.78]: straddles one half
    assert quotient(99.5 - 94.5, 100.5 - 93.5, 9, 11) == pytest.approx((5 / 11, 7 / 9))
    assert "60 % left at 120 MiB (within noise of half)" in near.reading


def test_quotient_bounds_of_a_gain_that_may_be_negative():
    assert quotient(-2.0, 4.0, 8.0, 10.0) == pytest.approx((-2 / 8, 4 / 8))
    assert quotient(-4.0, -2.0, 8.0, 10.0) == pytest.approx((-4 / 8, -2 / 10))


# -- the window against OptMT --------------------------------------------------------------------

def window_rows(profile: str, optmt: tuple, remap: tuple, window: tuple) -> list[dict]:
    return [row("no_window", 0.0, "optmt", "consumer", *optmt, profile=profile),
            row("no_window", 0.0, "remap", "consumer", *remap, profile=profile),
            row("hr1", 1.0, "window", "consumer", *window, profile=profile, hit_ratio=1.0),
            row("hr1", 1.0, "window", "prepare", 3.0, 2.9, 3.1, timer="wall", profile=profile, hit_ratio=1.0)]


def test_a_two_percent_window_gain_with_disjoint_intervals_buys_something(tmp_path: Path):
    # reuse_low: 132.29 [132.19, 132.38] -> 129.25 [129.15, 129.31], disjoint: faster (1.02x);
    # reuse_high: 92.99 [92.90, 93.09] -> 93.15 [93.02, 93.25], overlapping: within noise
    rows = (window_rows("reuse_low", (132.29, 132.19, 132.38), (132.25, 132.10, 132.35), (129.25, 129.15, 129.31))
            + window_rows("reuse_high", (92.99, 92.90, 93.09), (92.98, 92.91, 93.08), (93.15, 93.02, 93.25)))
    an = analyse_sweep(run_of("window", rows, tmp_path))
    assert "artifact reuse_low: remap alone 1.000× (within noise), window 1.02× at hitRatio 1 for 3.0 µs of host " \
           "time per call (faster)" in an.reading
    assert "artifact reuse_high: remap alone 1.000× (within noise), window 0.998× at hitRatio 1" in an.reading
    assert an.reading.count("(within noise)") == 3 and an.reading.count("(faster)") == 1


# -- peak per family and profile --------------------------------------------------------------------

def hotset_rows(family: str, profile: str, consumer: dict[int, tuple[float, float, float]]) -> list[dict]:
    return [row(f"hot{n}", n, "optmt" if n == 0 else "l2p_optmt", "consumer", *c, family=family, profile=profile,
                hot_rows=float(n)) for n, c in consumer.items()]


def test_peaks_only_where_the_best_size_is_beyond_noise_of_every_other(tmp_path: Path):
    rows = (hotset_rows("artifact", "reuse_high", {0: (93.0, 92.9, 93.1), 30_000: (90.0, 89.9, 90.1),
                                                    60_000: (87.0, 86.9, 87.1), 120_000: (91.0, 90.9, 91.1)})
            # random: 60K and 120K overlap ([62.5, 62.7] and [62.45, 62.65]): no peak, the best is named with its tie
            + hotset_rows("tuned", "random", {0: (63.4, 63.3, 63.5), 60_000: (62.6, 62.5, 62.7),
                                              120_000: (62.55, 62.45, 62.65)})
            # nothing clear of OptMT: no peak, no best claimed beyond noise
            + hotset_rows("tuned", "reuse_low", {0: (60.0, 59.9, 60.1), 60_000: (59.95, 59.85, 60.05)}))
    an = analyse_sweep(run_of("hotset", rows, tmp_path))
    assert "artifact reuse_high: peaks at 60,000 rows (29.3 MiB): 1.07×, beyond noise of every other point" in an.reading
    assert ("tuned random: best 1.01× (faster) at 120,000 rows (58.6 MiB), within noise of 60,000 rows (29.3 MiB)"
            in an.reading)
    assert "tuned reuse_low: nothing beats OptMT beyond noise (best 1.001× at 60,000 rows (29.3 MiB): within noise)" \
        in an.reading
    assert an.reading.count("peaks at") == 1
    peaks = an.summary.set_index(["family", "profile"])["peak"]
    assert peaks[("artifact", "reuse_high")] and not peaks[("tuned", "random")] and not peaks[("tuned", "reuse_low")]
