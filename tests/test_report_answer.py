"""The report's rules from issue 20, part 4, on a CPU: the one-line answer comes from
ladders.analyse.answer and is said once; its chart shows the verdict's numbers; compare lists only
settings that differ; the fast family's cards use its own rung names; titles, legends and the
progress line keep out of the way."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pandas as pd
import pytest
from helpers_rundirs import one_cell_run, write_ladder_run
from helpers_sweep import write_sweep_run
from test_report_families import write_fast_profile, write_three_families

from l2attr.study import analyse, load_runs
from l2attr.ladders.analyse.answer import answer_line, overall, pin_answer
from l2attr.cli import main
from l2attr.report.answer_chart import answer_figure
from l2attr.report.charts import figure_json, heatmap_figure
from l2attr.report.html import render_html
from l2attr.ladders.analyse.amortisation import said
from l2attr.analysis.common import rung_label


def text_of(fragment: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", fragment))).strip()


def card(html: str, cid: str) -> str:
    return re.search(rf'<section class="card" id="{cid}">.*?</section>', html, re.S).group(0)


def verdict_rows(*rows: tuple) -> pd.DataFrame:
    """(family, pin, profile, charged, free[, the rule's word]); without a word, faster above 1."""
    def word(r: tuple) -> str:
        return r[5] if len(r) > 5 else "faster" if r[3] > 1 else "slower"
    return pd.DataFrame([{"series": f"{r[0]}/{r[1]}", "family": r[0], "pin": r[1], "profile": r[2],
                          "pin_speedup_charged": r[3], "pin_speedup_consumer": r[4], "pin_judgement_charged": word(r)}
                         for r in rows])


# -- the judgement (ladders.analyse.answer) -------------------------------------------------------------

def test_yes_no_partly_with_the_charged_range() -> None:
    v = verdict_rows(("fast", "line", "reuse_high", 1.05, 1.33), ("fast", "line", "random", 0.97, 1.1),
                     ("artifact", "element", "reuse_high", 0.88, 1.07), ("artifact", "element", "random", 0.90, 1.01),
                     ("tuned", "line", "reuse_high", 1.2, 1.3), ("tuned", "element", "reuse_high", 1.1, 1.2),
                     ("tuned", "line", "random", float("nan"), 1.0))          # no charged number: not judged
    answers = pin_answer(v)
    assert [a.family for a in answers] == ["artifact", "tuned", "fast"]        # ladder order
    assert [a.pays for a in answers] == ["no", "yes", "partly"]
    assert answers[1].cases == 2 and answers[1].pins == ("line", "element")
    assert overall(answers) == "Partly"
    assert answer_line(answers) == (
        "Does the L2 pin pay once its kernel is charged? Partly — artifact: no, 0.88–0.90×; tuned: yes, "
        "1.10–1.20×; fast: partly, 0.97–1.05× (pays in 1 of 2; best reuse_high, line pin).")


def test_the_word_is_the_rules_not_the_ratios() -> None:
    """A ratio above 1 whose intervals overlap is no "yes": the family answer counts the rule's words."""
    v = verdict_rows(("tuned", "line", "reuse_high", 1.02, 1.1, "within noise"),
                     ("tuned", "line", "random", 1.01, 1.05, "within noise"),
                     ("artifact", "element", "reuse_high", 0.99, 1.07, "within noise"),
                     ("artifact", "element", "random", 0.90, 1.01, "slower"))
    tuned, artifact = sorted(pin_answer(v), key=lambda a: a.family != "tuned")
    assert tuned.pays == "within noise" and tuned.paying == 0 and tuned.within_noise == 2 and tuned.css == "within-noise"
    assert artifact.pays == "partly" and artifact.losing == 1
    assert artifact.text == "artifact: partly, 0.90–0.99× (pays in 0 of 2; within noise in 1; best reuse_high, element pin)"
    assert overall([tuned]) == "Within noise"
    no_word = verdict_rows(("tuned", "line", "random", 1.3, 1.4)).drop(columns="pin_judgement_charged")
    assert pin_answer(no_word)[0].pays == "within noise"     # no judgement recorded: never a "yes"


def test_no_charged_number_no_line() -> None:
    assert pin_answer(pd.DataFrame()) == [] and answer_line([]) == ""
    assert pin_answer(verdict_rows(("artifact", "element", "random", float("nan"), 1.0))) == []


# -- the page ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def families(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("answer")
    an = analyse(load_runs([write_three_families(root), write_fast_profile(root)]))
    return an, render_html(an, plotly_js="")


def test_the_line_is_the_analysis_line_once_first(families) -> None:
    an, html = families
    line = answer_line(pin_answer(an.verdict))
    assert line and text_of(html.split("</h1>", 1)[1]).startswith(line)
    assert text_of(html).count(line) == 1
    # the verdict's per-profile sentences: once each, in their verdict card
    for said in an.verdict["headline"]:      # a fast card's are in the fast family's names already
        assert text_of(html).count(said) == 1, said


def test_the_chart_shows_the_verdict_numbers(families) -> None:
    an, html = families
    spec = json.loads(re.search(r'id="l2attr-figures">(.*?)</script>', html, re.S).group(1))["fig-answer"]
    drawn = {(t["name"], x): y + t["base"] for t in spec["data"] for x, y in zip(t["x"], t["y"]) if y is not None}
    fast = an.verdict[(an.verdict["series"] == "fast/line") & (an.verdict["profile"] == "reuse_high")].iloc[0]
    assert drawn[("reuse_high", "fast · line pin")] == pytest.approx(fast["pin_speedup_charged"])
    assert drawn[("reuse_high · pin free", "fast · line pin")] == pytest.approx(fast["pin_speedup_consumer"])
    assert len(drawn) == 2 * int(an.verdict["pin_speedup_charged"].notna().sum())


def test_no_answer_chart_without_a_charged_number() -> None:
    assert answer_figure(pd.DataFrame(), []) is None
    assert answer_figure(verdict_rows(("artifact", "element", "random", float("nan"), 1.0)), []) is None


def test_fast_cards_use_the_fast_names(families) -> None:
    an, html = families
    i = next(i for i, s in enumerate(an.series) if s.family == "fast")
    standard = r"(?<![\w+])(?<!tuned )(L2P\+|APW\+)?OptMT(?![\w+])"   # the names fast renames
    for key in ("verdict", "ladder", "amortisation", "share"):
        text = text_of(card(html, f"{key}-{i}"))
        assert "fast+pin" in text or "fast" in text
        assert not re.search(standard, text), (key, re.search(standard, text))
    figures = json.loads(re.search(r'id="l2attr-figures">(.*?)</script>', html, re.S).group(1))
    for fid, spec in figures.items():
        if fid.endswith(f"-{i}"):
            assert not re.search(standard, json.dumps(spec)), fid
    # the other families keep theirs
    assert "L2P+OptMT" in text_of(card(html, "ladder-0"))


def test_a_family_names_its_rungs_as_it_declares_them() -> None:
    """dlrm.declare's rung_labels are the only source: the fast family's OptMT slot is `fast`,
    its pin rung `fast+pin`; a family that declares none keeps the standard names."""
    assert [rung_label(r, "fast") for r in ("optmt", "l2p_optmt", "apw_optmt", "baseline")] == \
        ["fast", "fast+pin", "fast+window", "baseline"]
    assert [rung_label(r, f) for r, f in (("l2p_optmt", "tuned"), ("optmt", ""), ("torch", "fast"))] == \
        ["L2P+OptMT", "OptMT", "torch"]
    assert said("the pin is all that {l2p_optmt} adds over {optmt}", "fast") == "the pin is all that fast+pin adds over fast"


def test_compare_lists_only_settings_that_differ(tmp_path: Path) -> None:
    """A setting only one run records (ptxas builds of variants the other never measured) is
    counted, not listed; one both record with another value is listed."""
    a = one_cell_run(tmp_path, "A-ladder", "2026-11-29T10:00:00Z", {0: 100.0, 2: 102.0}, measure={"spin_us": 50.0})
    b = one_cell_run(tmp_path, "B-ladder", "2026-11-30T10:00:00Z", {0: 104.0, 2: 104.0}, measure={"spin_us": 30.0})
    m = json.loads((a / "manifest.json").read_text())
    m["ptxas"] = {"variants": {f"tuned/optmt/none.consumer.v{i}": {"registers": 40 + i} for i in range(30)}}
    (a / "manifest.json").write_text(json.dumps(m))
    an = analyse(load_runs([a, b]))
    assert set(an.compare_settings["setting"]) == {"measure.spin_us"}
    section = text_of(card(render_html(an, plotly_js=""), "compare"))
    assert "(not recorded)" not in section and "ptxas.variants" not in section
    assert "30 settings only one of the two runs records" in section


# -- layout rules checked on the specs -----------------------------------------------------------

def test_heatmap_series_on_its_own_line(families) -> None:
    from l2attr.study.study import series_view

    an, _ = families
    drawn = [(s, fig) for s in an.series if (fig := heatmap_figure(series_view(an, s), "dram_read")) is not None]
    assert drawn
    for s, fig in drawn:
        first, _, second = figure_json(fig)["layout"]["title"]["text"].partition("<br>")
        assert len(first) <= 45 and s.title in second


def test_sweep_legend_below_its_axis_title(tmp_path: Path) -> None:
    from l2attr.sweep.analyse.judge import analyse_sweep
    from l2attr.sweep.load import load_sweep
    from l2attr.sweep.section.chart import figures

    run = write_sweep_run(tmp_path, "occupy")
    figs = figures(analyse_sweep(load_sweep(run)), "fig-sweep")
    assert figs
    for fig in figs.values():
        layout = figure_json(fig)["layout"]
        assert layout["legend"]["y"] <= -0.26 and layout["margin"]["b"] >= 150


# -- the progress line ---------------------------------------------------------------------------

def test_progress_line_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    run = write_ladder_run(tmp_path)
    monkeypatch.setenv("L2ATTR_PROGRESS", "1")
    assert main(["report", str(run), "-o", str(tmp_path / "r.html")]) == 0
    err = capsys.readouterr().err
    assert [ln.split(": ", 1)[1].split(" (")[0] for ln in err.splitlines()] == [
        "reading 1 run dirs and 0 sweeps", "analysing", "rendering html", f"writing {tmp_path / 'r.html'}"]
    monkeypatch.delenv("L2ATTR_PROGRESS")
    assert main(["report", str(run), "-o", str(tmp_path / "r2.html")]) == 0
    assert capsys.readouterr().err == ""          # not a terminal: quiet, so errors stay one line
