"""Break-even labels in the amortisation chart never sit on top of each other."""

from __future__ import annotations

import copy
import math
from pathlib import Path

from helpers_rundirs import TIMINGS, ladder_samples, write_ladder_run

from l2attr.study import analyse, load_runs
from l2attr.study.study import series_view
from l2attr.report.charts import amortisation_figure, break_even_labels, figure_json, label_extent


def positions(notes: list[dict]) -> list[tuple[float, float, float]]:
    return [(n["x"], n["y"], n["ay"]) for n in notes]


def assert_apart(notes: list[dict]) -> None:
    """Distinct positions, and labels at one height never overlapping on the k axis."""
    assert len(set(positions(notes))) == len(notes)
    for i, a in enumerate(notes):
        for b in notes[i + 1:]:
            if a["ay"] == b["ay"]:
                (a_left, a_right), (b_left, b_right) = label_extent(a), label_extent(b)
                assert a_right < b_left or b_right < a_left, (a["text"], b["text"])


def test_equal_k_share_one_label_and_close_k_are_stacked() -> None:
    notes = break_even_labels([("reuse_high", 8, 1.01), ("reuse_medium", 8, 1.02), ("reuse_low", 9, 1.0),
                               ("random", 47, 1.003)])
    assert [n["text"] for n in notes] == ["8: reuse_high, reuse_medium", "9", "47"]
    assert [n["x"] for n in notes] == [math.log10(8), math.log10(9), math.log10(47)]
    assert [n["ay"] for n in notes] == [18, 35, 18]      # 9 is close to 8: one step lower; 47 is not
    assert_apart(notes)


def test_a_run_of_close_labels_steps_down_each_time() -> None:
    notes = break_even_labels([("a", 10, 1.0), ("b", 11, 1.0), ("c", 12, 1.0), ("d", 13, 1.0)])
    assert [n["ay"] for n in notes] == [18, 35, 52, 69]
    assert_apart(notes)


def test_a_wide_label_pushes_down_a_far_one_it_would_cover() -> None:
    # "4: reuse_high, reuse_medium, reuse_low" reaches past k = 10 at the label font's size
    notes = break_even_labels([("reuse_high", 4, 1.0), ("reuse_medium", 4, 1.0), ("reuse_low", 4, 1.0),
                               ("random", 10, 1.0), ("x", 900, 1.0)])
    assert [n["ay"] for n in notes] == [18, 35, 18]
    assert_apart(notes)


def test_figure_spec_of_a_run_with_equal_and_close_break_evens(tmp_path: Path) -> None:
    # break-even k = ceil(T_pin / (T_optmt - T_l2p)): reuse_high 15/4.5 -> 4, reuse_medium
    # 16.2/2.2 -> 8, reuse_low 18.6/2.5 -> 8 (equal); random saves 0.4 µs, inside its samples' own
    # +-0.4 µs spread (overlapping intervals): within noise by the one rule, so no break-even and no diamond
    timings = copy.deepcopy(TIMINGS)
    timings["reuse_low"]["l2p_optmt"] = (56.4, 18.6)
    run = write_ladder_run(tmp_path, samples=ladder_samples(timings))   # cells summarised from them
    an = analyse(load_runs([run]))
    spec = figure_json(amortisation_figure(series_view(an, an.series[0])))
    labels = [n for n in spec["layout"]["annotations"] if n.get("showarrow")]
    assert sorted(n["text"] for n in labels) == ["4", "8: reuse_medium, reuse_low"]
    am = an.amortisation
    random = am[(am["profile"] == "random") & (am["rung"] == "l2p_optmt") & (am["comparand"] == "optmt")].iloc[0]
    assert random["break_even"] == "within noise"
    assert_apart(labels)
    diamonds = [t for t in spec["data"] if t.get("mode") == "markers"]
    assert sorted(t["x"][0] for t in diamonds) == [4, 8, 8]
