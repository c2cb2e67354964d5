"""The report's "three kernel families" section, HTML and Markdown, on hand-made runs.

One ladder run holds the artifact family (helpers_rundirs.TIMINGS), the tuned family (line pin)
and the fast family (family "fast", rungs optmt and l2p_optmt, pin "line") on two profiles,
timed so that every figure below can be worked out by hand; a profile run gives the fast
consumer's DRAM bytes and duration on reuse_high.

  reuse_high   tuned OptMT 64.0 µs, L2P+OptMT 60.0 + pin 10.0 µs -> charged 64 / 70 = 0.91×, free 64 / 60 = 1.07×
               fast 40.0 µs (40 / 64 = 0.625: 0.62× tuned OptMT), fast+pin 30.0 + pin 8.0 µs
               -> charged 40 / 38 = 1.05× (the pin pays), free 40 / 30 = 1.33×
               fast's DRAM: 1.6e8 B / 50,000 ns = 3,200 GB/s = 80 % of the 4,000 GB/s read-only HBM
  random       tuned OptMT 70.0 µs, L2P+OptMT 68.0 + pin 11.0 µs -> charged 70 / 79 = 0.89×
               fast 49.0 µs (0.70× tuned OptMT), fast+pin not measured: dashes with the reason
"""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pandas as pd
import pytest
from helpers_rundirs import (
    HBM_COPY_GBPS, OFFSETS_US, ladder_cells, ladder_run_manifest, ladder_samples, metric_rows, profile_values,
    write_ladder_run,
    write_profile_run, write_run,
)

from l2attr.study import analyse, load_runs
from l2attr.cli import main
from l2attr.report.html import render_html
from l2attr.report.markdown import render_markdown
from l2attr.schema import SAMPLES

HBM_READ_GBPS = 4000.0

# family -> pin -> profile -> rung -> (consumer median µs, pin median µs or None)
EXTRA = {
    ("tuned", "line"): {"reuse_high": {"optmt": (64.0, None), "l2p_optmt": (60.0, 10.0)},
                        "random": {"optmt": (70.0, None), "l2p_optmt": (68.0, 11.0)}},
    ("fast", "line"): {"reuse_high": {"optmt": (40.0, None), "l2p_optmt": (30.0, 8.0)},
                       "random": {"optmt": (49.0, None)}},
}


def family_samples(family: str, pin: str, timings: dict[str, dict[str, tuple[float, float | None]]]) -> pd.DataFrame:
    """samples.csv rows for one family as the ladder writes them (kernel timer repeat only): the
    medians are exactly the given values, and pin + consumer's median is their sum."""
    nan = float("nan")
    rows = []
    for profile, rungs in timings.items():
        for rung, (consumer, pin_us) in rungs.items():
            for i, d in enumerate(OFFSETS_US):
                rows.append({"family": family, "rung": rung, "pin": pin if pin_us is not None else "none",
                             "profile": profile, "l2_state": "natural", "batch": i, "table": 0, "repeat": 0,
                             "pin_time_us": nan if pin_us is None else pin_us + d, "consumer_time_us": consumer + d,
                             "consumer_artifact_time_us": nan, "call_wall_time_us": nan})
    return pd.DataFrame(rows, columns=list(SAMPLES.columns))


def write_three_families(root: Path) -> Path:
    samples = pd.concat([ladder_samples()] + [family_samples(f, p, t) for (f, p), t in EXTRA.items()],
                        ignore_index=True)
    manifest = ladder_run_manifest("ladder", hbm_copy_GBps=HBM_COPY_GBPS, hbm_read_GBps=HBM_READ_GBPS)
    manifest["measure"]["families"] = ["artifact", "tuned", "fast"]   # the artifact's cells are the declared ones
    return write_run(Path(root) / "20261130T200000Z-ladder", manifest,
                     {"samples": samples, "cells": ladder_cells(samples)})


def write_fast_profile(root: Path) -> Path:
    """ncu counters of the fast consumer on reuse_high: 1.6e8 DRAM read bytes in 50,000 ns."""
    key = ("optmt", "reuse_high", "consumer")
    counters = {**profile_values()[key], "dram__bytes_read.sum": 1.6e8, "gpu__time_duration.sum": 50_000.0}
    metrics = metric_rows({key: counters}, spread=(1.0,))
    metrics["family"] = "fast"                 # the range names and cell ids say so too, as ncu_import writes them
    metrics["nvtx_range"] = metrics["nvtx_range"].str.replace(":artifact:", ":fast:", regex=False)
    metrics["cell"] = metrics["cell"].str.replace("artifact:", "fast:", n=1, regex=False)
    return write_profile_run(root, metrics=metrics, control=None)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("families")
    return [write_three_families(root), write_fast_profile(root)]


@pytest.fixture(scope="module")
def analysis(study: list[Path]):
    return analyse(load_runs(study))


@pytest.fixture(scope="module")
def html(analysis) -> str:
    return render_html(analysis, plotly_js="")


@pytest.fixture(scope="module")
def md(analysis) -> str:
    return render_markdown(analysis)


def section_of(html: str) -> str:
    m = re.search(r'<section class="card" id="families">.*?</section>', html, re.S)
    assert m, "no families section"
    return m.group(0)


def text_of(fragment: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", fragment))).strip()


def rows_of(section: str, profile: str) -> dict[str, list[str]]:
    """The table under <h3>profile</h3>: family title -> its cells' text."""
    block = section.split(f"<h3>{profile}</h3>", 1)[1].split("<h3>", 1)[0]
    body = block.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    out = {}
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S):
        cells = [text_of(td) for td in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
        out[cells[0]] = cells[1:]
    return out


def test_the_analysis_has_the_hand_numbers(analysis) -> None:
    fam = analysis.families.set_index(["profile", "family"])
    fast = fam.loc[("reuse_high", "fast")]
    assert fast["consumer_us"] == pytest.approx(40.0) and fast["vs_tuned"] == pytest.approx(0.625)
    assert fast["pin_speedup_charged"] == pytest.approx(40.0 / 38.0)
    assert fast["dram_fraction"] == pytest.approx(0.8)
    assert fam.loc[("reuse_high", "tuned"), "pin_speedup_charged"] == pytest.approx(64.0 / 70.0)
    assert set(analysis.families["family"]) == {"artifact", "tuned", "fast"}


def test_html_section_right_after_the_verdict_with_units_in_headers(html: str) -> None:
    cards = re.findall(r'<section class="card" id="([^"]+)"', html)
    last_verdict = max(i for i, c in enumerate(cards) if c.startswith("verdict"))
    assert cards[last_verdict + 1] == "families"
    assert '<a href="#families">The three kernel families</a>' in html
    section = section_of(html)
    assert "<h2>The three kernel families" in section
    for header in ("median, µs", "× tuned OptMT", "DRAM, % of read-only HBM", "pin kernel, µs", "pin charged",
                   "pin free"):
        assert f">{header}</th>" in section, header
    assert "families-absent" not in section and "No run measured" not in section   # all three were measured


def test_html_fast_row_on_reuse_high(html: str) -> None:
    rows = rows_of(section_of(html), "reuse_high")
    assert list(rows) == ["artifact kernels, element pin (headline)", "tuned kernels, line pin", "fast kernels, line pin"]
    # name, µs, × tuned OptMT, DRAM %, pinned consumer µs, pin µs, charged, free
    assert rows["fast kernels, line pin"] == ["fast", "40.0", "0.62×", "80", "30.0", "8.0", "1.05×", "1.33×"]
    assert rows["tuned kernels, line pin"][:4] == ["OptMT", "64.0", "1.00×", "—"]
    assert rows["tuned kernels, line pin"][4:] == ["60.0", "10.0", "0.91×", "1.07×"]
    # artifact, reuse_high: OptMT 38.0 / 64.0 = 0.59×; 38.0 / (33.5 + 15.0) = 0.78× charged
    assert rows["artifact kernels, element pin (headline)"][1:3] == ["38.0", "0.59×"]
    assert rows["artifact kernels, element pin (headline)"][6] == "0.78×"
    section = section_of(html)
    assert 'title="3,200 GB/s of 4,000 GB/s measured read-only">80</td>' in section
    assert '<td class="num better">1.05×</td>' in section and '<td class="num worse">0.91×</td>' in section


def test_html_missing_values_are_dashes_with_a_reason(html: str) -> None:
    section = section_of(html)
    rows = rows_of(section, "random")
    # no family was profiled on random: its DRAM column is left out, and said to be
    assert rows["fast kernels, line pin"] == ["fast", "49.0", "0.70×", "—", "—", "—", "—"]
    assert rows["tuned kernels, line pin"][5:7] == ["0.89×", "1.03×"]     # 70 / 79, 70 / 68
    random = section.split("<h3>random</h3>", 1)[1].split("<h3>", 1)[0]
    assert '<span class="dash" title="fast+pin not measured for random/natural">—</span>' in random
    assert random.count('<span class="dash" title="fast+pin not measured for random/natural">—</span>') == 4
    assert ("columns left out, n/a in every row: Consumer without a pin: DRAM, % of read-only HBM."
            in text_of(random))
    assert ">n/a<" not in section


def test_html_sentences_per_profile(html: str) -> None:
    text = text_of(section_of(html))
    assert ("reuse_high, fast (line pin): fast consumer 40.0 µs (0.62× the tuned OptMT consumer), drawing 80 % "
            "of the measured read-only HBM bandwidth; fast+pin with the pin kernel charged: 1.05× (1.33× if "
            "the pin were free): the pin pays.") in text
    assert "random, fast (line pin): fast consumer 49.0 µs (0.70× the tuned OptMT consumer); the pin rung was not measured." \
        in text
    assert "reuse_high, tuned (line pin): OptMT consumer 64.0 µs; L2P+OptMT with the pin kernel charged: 0.91×" in text


def test_html_answer_judges_each_family_once(html: str, analysis) -> None:
    """The answer line names each family with a charged number; the family sentences are said
    once, in the families section, not again at the top."""
    answer = re.search(r'<div class="answer" id="answer">.*?</div>', html, re.S).group(0)
    text = text_of(answer)
    # 7 (profile, family and pin) rows with a pin rung; the pin pays in one (fast on reuse_high, 1.05×)
    assert text.startswith("Does the L2 pin pay once its kernel is charged? Partly — artifact: no, ")
    assert "fast: yes, 1.05×" in text
    page = text_of(html)
    for sentence in analysis.families["sentence"]:
        assert sentence not in text and page.count(sentence) == 1, sentence


def test_markdown_section(md: str) -> None:
    lines = md.splitlines()
    assert "**The three kernel families**" in lines
    start = lines.index("**The three kernel families**")
    block = "\n".join(lines[start:])
    # the card's columns (html_study.family_columns), a missing cell numbered with its reason below
    assert "| fast kernels, line pin | fast | 40.0 | 0.62× | 80 | 30.0 | 8.0 | 1.05× | 1.33× |" in block
    assert "| tuned kernels, line pin | OptMT | 64.0 | 1.00× | — (2) | 60.0 | 10.0 | 0.91× | 1.07× |" in block
    assert "(2) the tuned family's OptMT consumer was not profiled for reuse_high (l2attr profile)" in block
    random = block.split("*random*", 1)[1].split("\n**", 1)[0]
    assert "| fast kernels, line pin | fast | 49.0 | 0.70× | — (1) | — (1) | — (1) | — (1) |" in random
    assert ("_(1) fast+pin not measured for random/natural; columns left out, n/a in every row: Consumer "
            "without a pin: DRAM, % of read-only HBM._") in random
    # tables are well-formed
    for chunk in md.split("\n\n"):
        rows = [b for b in chunk.splitlines() if b.startswith("|")]
        assert len({r.count("|") - r.count("\\|") for r in rows}) <= 1


def test_markdown_answer_lists_the_families_after_the_headline(md: str, analysis) -> None:
    head = md.index("**Verdict — artifact kernels, element pin · the headline**")
    fams = md.index("**The pin across the kernel families** — Across the kernel families (artifact, tuned, fast)")
    other = md.index("**Verdict — tuned kernels, line pin")
    assert head < fams < other
    answer = md[fams:other]
    for sentence in analysis.families["sentence"]:
        assert f"- {sentence}" in answer
        assert md.count(f"- {sentence}") == 1       # listed once: the section below shows the tables


def test_one_family_has_the_section_but_no_family_answer(tmp_path: Path) -> None:
    an = analyse(load_runs([write_ladder_run(tmp_path)]))
    html, md = render_html(an, plotly_js=""), render_markdown(an)
    section = section_of(html)
    assert "No run measured the tuned or the fast families." in text_of(section)
    assert "l2attr ladder --family tuned,fast" in section
    # reuse_medium, artifact: OptMT 46.7; 46.7 / (44.5 + 16.2) = 0.77× charged, 46.7 / 44.5 = 1.05× free
    assert rows_of(section, "reuse_medium")["artifact kernels, element pin (headline)"] == [
        "OptMT", "46.7", "44.5", "16.2", "0.77×", "1.05×"]     # × tuned OptMT and DRAM: left out, none measured
    assert "<details class=\"answer-families\">" not in html and "The pin across the kernel families" not in md
    assert "**The three kernel families**" in md
    assert "- reuse_medium, artifact (element pin): OptMT consumer 46.7 µs;" in md   # sentences in the section


def test_no_ladder_no_section(tmp_path: Path) -> None:
    an = analyse(load_runs([write_profile_run(tmp_path)]))
    assert an.families.empty
    html, md = render_html(an, plotly_js=""), render_markdown(an)
    assert 'id="families"' not in html and "The three kernel families" not in html
    assert "The three kernel families" not in md and "kernel families" not in md


def test_cli_report_on_the_three_families(study: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert main(["report", *map(str, study), "-o", str(out)]) == 0
    assert '<section class="card" id="families">' in out.read_text()
    assert main(["report", *map(str, study), "--format", "md", "-o", str(tmp_path / "r.md")]) == 0
    assert "**The three kernel families**" in (tmp_path / "r.md").read_text()


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.skipif(not any(EXAMPLES.glob("*/cells.csv")), reason="no ladder run under examples/")
def test_report_on_examples_still_renders(tmp_path: Path) -> None:
    """`l2attr report examples/` in both formats: the section, one table per profile, one row
    per (profile, series) of the analysis, every sentence; the families the runs lack are named."""
    out = tmp_path / "examples.html"
    assert main(["report", str(EXAMPLES), "-o", str(out)]) == 0
    html = out.read_text()
    from l2attr.sweep.load import is_sweep_dir

    an = analyse(load_runs(sorted(p for p in EXAMPLES.iterdir()
                                  if (p / "manifest.json").is_file() and not is_sweep_dir(p))))
    section = section_of(html)
    text = text_of(section)
    profiles = list(dict.fromkeys(an.families["profile"]))
    assert section.count("<h3>") == len(profiles)
    assert section.count('<tr title="from ') == len(an.families)
    for sentence in an.families["sentence"]:
        assert sentence.split(": ", 1)[1] in text
    absent = [f for f in ("artifact", "tuned", "fast") if f not in set(an.families["family"])]
    assert ("No run measured" in text) == bool(absent)
    assert '<details class="answer-families">' not in html
    md_out = tmp_path / "examples.md"
    assert main(["report", str(EXAMPLES), "--format", "md", "-o", str(md_out)]) == 0
    md = md_out.read_text()
    assert "**The three kernel families**" in md
    assert all(f"- {sentence}" in md for sentence in an.families["sentence"])
