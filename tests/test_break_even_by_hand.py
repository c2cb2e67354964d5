"""Break-even and the pin step's charge on hand-made ladder rows whose answers are worked out by hand.

T_ref (OptMT consumer) 10 µs, T_cons (pinned consumer) 8 µs, T_pin 5 µs, pin step on the host clock
9 µs: kernel-charged k* = 5 / 2 = 2.5 -> 3 calls; wall-charged k* = 9 / 2 = 4.5 -> 5 calls. With
overlapping consumer intervals the saving is within noise and there is no break-even; with the pinned
consumer slower beyond noise, never; cells of two runs are judged against the cross-process spread.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from l2attr.analysis.amortise import break_even_calls, break_even_point
from l2attr.ladders.analyse.amortisation import amortisation_table
from l2attr.ladders.analyse.charges import host_charges, with_charges
from l2attr.analysis.noise import NONE, CrossProcess, cross_process, judge
from l2attr.analysis.significance import Interval


def row(rung: str, cons: float, lo: float, hi: float, pin: float = float("nan"), step: float = float("nan"),
        run: str = "r1") -> dict:
    return {"l2_state": "natural", "profile": "random", "rung": rung, "consumer_us": cons, "consumer_ci_lo_us": lo,
            "consumer_ci_hi_us": hi, "pin_us": pin, "pin_step_us": step, "host_charge_us": step - pin,
            "kernels_us": cons + (0.0 if math.isnan(pin) else pin), "consumer_run": run, "source": "hand", "missing": {}}


def table(*rows: dict, xp: CrossProcess = NONE) -> dict:
    am = amortisation_table(pd.DataFrame(rows), xp=xp)
    rec = am[(am["rung"] == "l2p_optmt") & (am["comparand"] == "optmt")].iloc[0]
    return rec.to_dict()


def test_the_formula_by_hand() -> None:
    assert break_even_point(10.0, 5.0, 8.0) == pytest.approx(2.5) and break_even_calls(10.0, 5.0, 8.0) == 3
    assert break_even_calls(10.0, 4.0, 8.0) == 2                     # exactly 2: 2*10 = 4 + 2*8
    assert math.isinf(break_even_point(10.0, 5.0, 10.0))


def test_kernel_and_wall_charged_side_by_side() -> None:
    rec = table(row("optmt", 10.0, 9.9, 10.1), row("l2p_optmt", 8.0, 7.9, 8.1, pin=5.0, step=9.0))
    assert rec["gain_judgement"] == "faster"
    assert rec["break_even_point"] == pytest.approx(2.5) and rec["break_even"] == "3"
    assert rec["break_even_point_wall"] == pytest.approx(4.5) and rec["break_even_wall"] == "5"
    assert rec["pin_host_us"] == pytest.approx(4.0)


def test_no_break_even_inside_the_noise() -> None:
    rec = table(row("optmt", 10.0, 9.0, 11.0), row("l2p_optmt", 9.5, 8.5, 10.5, pin=5.0, step=9.0))
    assert rec["gain_judgement"] == "within noise"
    assert rec["break_even"] == "within noise" == rec["break_even_wall"] and math.isinf(rec["break_even_calls"])


def test_slower_beyond_noise_never_breaks_even() -> None:
    rec = table(row("optmt", 10.0, 9.9, 10.1), row("l2p_optmt", 11.0, 10.9, 11.1, pin=5.0, step=9.0))
    assert rec["gain_judgement"] == "slower" and rec["break_even"] == "never"


def test_two_runs_are_judged_against_the_cross_process_spread() -> None:
    """Disjoint intervals 2 % apart: beyond noise in one run; within a 5 % cross-process spread across
    two; and without any cross-process figure, never a word stronger than within noise."""
    one = (row("optmt", 10.0, 9.95, 10.05), row("l2p_optmt", 9.8, 9.75, 9.85, pin=1.0, step=2.0))
    assert table(*one)["gain_judgement"] == "faster"
    two = (one[0], {**one[1], "consumer_run": "r2"})
    assert table(*two)["gain_judgement"] == "within noise"                       # spread unknown
    xp = CrossProcess({("consumer", "kernel"): 0.05})
    assert table(*two, xp=xp)["gain_judgement"] == "within noise"
    assert table(*two, xp=CrossProcess({("consumer", "kernel"): 0.01}))["gain_judgement"] == "faster"


def test_cross_process_spread_is_the_largest_difference_per_quantity() -> None:
    summary = pd.DataFrame([{"used_run": "a", "run": "b", "quantity": "consumer", "timer": "kernel",
                             "max_abs_diff_pct": 0.4}, {"used_run": "a", "run": "c", "quantity": "consumer",
                                                        "timer": "kernel", "max_abs_diff_pct": 0.6}])
    xp = cross_process(summary)
    assert xp.of("consumer", "kernel") == pytest.approx(0.006) and math.isnan(xp.of("call", "wall"))
    v = judge(Interval(10, 9.99, 10.01), Interval(9.95, 9.94, 9.96), "a", "b", "consumer", "kernel", xp)
    assert v.cross and v.word == "within noise" and "0.60 %" in v.noise


def samples(rung: str, pin: float | None, artifact: float, wall: float, run: str = "r1", n: int = 5,
            pin_wall: float | None = None) -> list[dict]:
    out = []
    for i in range(n):
        d = (i - n // 2) * 0.1
        out.append({"family": "artifact", "rung": rung, "pin": "element" if pin else "none", "profile": "random",
                    "l2_state": "natural", "repeat": 1, "batch": i, "table": 0, "run": run,
                    "consumer_artifact_time_us": artifact + d, "call_wall_time_us": wall + d,
                    **({"pin_wall_time_us": pin_wall + d} if pin_wall is not None else {})})
    return out


def ladder_rows(pin: float = 5.0) -> pd.DataFrame:
    return pd.DataFrame([row("optmt", 10.0, 9.9, 10.1), row("l2p_optmt", 8.0, 7.9, 8.1, pin=pin)])


def test_pin_step_derived_from_the_host_repeats_by_hand() -> None:
    """OptMT: call 30, artifact 20 -> 10 µs of wrapper; L2P+OptMT: call 44, artifact 18 -> 26 µs: the
    pin step is 26 - 10 = 16 µs, its launch + sync 16 - 5 (the pin kernel) = 11 µs."""
    s = pd.DataFrame(samples("optmt", None, 20.0, 30.0) + samples("l2p_optmt", 5.0, 18.0, 44.0))
    ch = host_charges(s, ladder_rows()).set_index("rung")
    assert ch.loc["l2p_optmt", "pin_step_us"] == pytest.approx(16.0)
    assert ch.loc["l2p_optmt", "host_charge_us"] == pytest.approx(11.0)
    assert ch.loc["l2p_optmt", "pin_step_basis"].startswith("derived")
    lad = with_charges(ladder_rows(), host_charges(s, ladder_rows())).set_index("rung")
    assert lad.loc["optmt", "host_charge_us"] == 0.0      # nothing beyond the consumer: a zero by construction


def test_pin_step_measured_where_recorded_and_never_across_runs() -> None:
    s = pd.DataFrame(samples("optmt", None, 20.0, 30.0) + samples("l2p_optmt", 5.0, 18.0, 44.0, pin_wall=14.0))
    ch = host_charges(s, ladder_rows()).set_index("rung")
    assert ch.loc["l2p_optmt", "pin_step_us"] == pytest.approx(14.0)
    assert ch.loc["l2p_optmt", "pin_step_basis"].startswith("measured")
    two = pd.DataFrame(samples("optmt", None, 20.0, 30.0) + samples("l2p_optmt", 5.0, 18.0, 44.0, run="r2"))
    ch2 = host_charges(two, ladder_rows()).set_index("rung")
    assert math.isnan(ch2.loc["l2p_optmt", "pin_step_us"])
    assert "two runs" in ch2.loc["l2p_optmt", "missing"]["pin_step_us"]


def test_window_setaside_and_reset_say_not_measured_when_not_recorded() -> None:
    lad = pd.DataFrame([row("optmt", 10.0, 9.9, 10.1), row("apw_optmt", 9.9, 9.8, 10.0)])
    s = pd.DataFrame(samples("optmt", None, 20.0, 30.0) + samples("apw_optmt", None, 19.9, 33.0))
    ch = host_charges(s, lad).set_index("rung")
    assert ch.loc["apw_optmt", "window_call_us"] == pytest.approx(3.1)   # (33 - 19.9) - (30 - 20)
    assert math.isnan(ch.loc["apw_optmt", "window_setaside_us"])
    assert ch.loc["apw_optmt", "missing"]["window_setaside_us"].startswith("not measured")
    s2 = s.assign(window_setaside_us=[float("nan")] * 5 + [7.0] * 5, window_reset_us=[float("nan")] * 5 + [9.0] * 5)
    ch2 = host_charges(s2, lad).set_index("rung")
    assert ch2.loc["apw_optmt", "window_setaside_us"] == 7.0 and ch2.loc["apw_optmt", "window_reset_us"] == 9.0


def test_the_report_says_not_measured_for_the_windows_setaside_and_reset() -> None:
    """Markdown's window line and the caveat name the unmeasured costs; a measured one is printed."""
    from l2attr.analysis.caveats import charge_caveats
    from l2attr.report.html_sections import window_lines

    lad = pd.DataFrame([row("optmt", 10.0, 9.9, 10.1), row("apw_optmt", 9.9, 9.8, 10.0)])
    s = pd.DataFrame(samples("optmt", None, 20.0, 30.0) + samples("apw_optmt", None, 19.9, 33.0))
    full = with_charges(lad, host_charges(s, lad))
    assert window_lines(full) == ["APW+OptMT on random: window host call 3.1 µs per call; persisting set-aside: "
                                  "not measured; reset: not measured"]
    assert any(c.level == "warn" and "not measured" in c.text for c in charge_caveats(full))
    s2 = s.assign(window_setaside_us=7.0, window_reset_us=9.0)
    full2 = with_charges(lad, host_charges(s2, lad))
    assert window_lines(full2)[0].endswith("persisting set-aside 7.0 µs per repeat; reset 9.0 µs per repeat")
    assert not any("not measured" in c.text for c in charge_caveats(full2))
