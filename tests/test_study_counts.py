"""steps/analyse/split.study_counts and steps/section/text.study_lines on hand-made answers: each
interval's side of 0.65 % is known by hand (below, above, at within ± 0.15 pp, undecided), per
denominator, and a folder holding two GPUs' steps is counted per GPU, never pooled."""

from __future__ import annotations

from types import SimpleNamespace

from l2attr.steps.analyse.reading import EAGER, REPLAY
from l2attr.steps.analyse.split import study_counts
from l2attr.steps.section.text import study_lines


def _answer(eager: tuple[float, float] | None, replay: tuple[float, float] | None, gpu: str = "G", model: str = "m"):
    def share_of(what: str, d: str):
        iv = {EAGER: eager, REPLAY: replay}[d]
        return None if iv is None else SimpleNamespace(share=SimpleNamespace(lo=iv[0], hi=iv[1]))
    return SimpleNamespace(parts=object(), share_of=share_of, name=model,
                           manifest={"gpu": {"name": gpu}, "step": {"name": model, "facts": {"model": model}}})


def test_each_side_is_counted_by_the_one_rule() -> None:
    answers = [_answer((0.001, 0.004), (0.010, 0.020)),      # below | above
               _answer((0.007, 0.009), (0.007, 0.009)),      # above | above
               _answer((0.0055, 0.0075), None),               # holds 0.65 %, half-width 0.1 pp: at | not measured
               _answer((0.002, 0.012), (0.0063, 0.0067))]     # holds it, half-width 0.5 pp: undecided | at
    assert study_counts(answers, EAGER) == {"below": 1, "above": 1, "at": 1, "undecided": 1, "not measured": 0}
    assert study_counts(answers, REPLAY) == {"below": 0, "above": 2, "at": 1, "undecided": 0, "not measured": 1}


def test_the_first_screen_counts_per_gpu_and_says_nothing_without_a_split() -> None:
    got = study_lines([_answer((0.001, 0.002), (0.001, 0.002), "H100", "a"),
                       _answer((0.008, 0.009), (0.008, 0.009), "H200", "b"),
                       _answer((0.008, 0.009), (0.001, 0.002), "H200", "c")])
    assert got[0] == "GPU: H100. Models: a" and got[2] == "GPU: H200. Models: b, c"
    assert "of 1 step(s) of the eager step: 1 below 0.65 %, 0 above" in got[1]
    assert "of 2 step(s) of the eager step: 0 below 0.65 %, 2 above" in got[3]
    assert "of the graph replay: 1 below 0.65 %, 1 above" in got[3]
    assert study_lines([SimpleNamespace(parts=None)]) == []
