"""The HTML report: self-contained, one plotly.js, sections present or marked "not measured"."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pandas as pd
import pytest
from helpers_rundirs import PROFILES, TIMINGS, ladder_cells, write_ladder_run, write_profile_run, write_timeline_run

from l2attr.study import analyse, load_runs
from l2attr.ladders.analyse.answer import answer_line, pin_answer
from l2attr.report.html import SECTION_SPECS, SECTIONS, SectionSpec, render_html
from l2attr.source import data_dir


def figures_in(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="l2attr-figures">(.*?)</script>', html, re.S)
    assert m, "figure block missing"
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def full_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("runs")
    return render_html(analyse(load_runs([write_ladder_run(root), write_profile_run(root),
                                          write_timeline_run(root)])))


def light_html(*runs: Path) -> str:
    """Without plotly.js: fast, for checks on the page's own content."""
    return render_html(analyse(load_runs(list(runs))), plotly_js="")


def test_templates_are_found() -> None:
    folder = data_dir("reports")
    assert {"base.html.j2", "macros.html.j2", "report.css"} <= {p.name for p in folder.iterdir()}
    for spec in SECTION_SPECS + (SectionSpec("answer", "", lambda an: None),):
        if spec.generic:
            continue                     # drawn by sections/generic.html.j2
        assert (folder / "sections" / f"{spec.key}.html.j2").is_file(), spec.key


def test_plotly_embedded_once_and_nothing_fetched(full_html: str) -> None:
    assert full_html.count("* plotly.js v") == 1
    assert not re.search(r"<script[^>]*\bsrc=", full_html), "a script loads from elsewhere"
    assert not re.search(r"<link[^>]*\bhref=", full_html), "a stylesheet or font loads from elsewhere"
    assert "@import" not in full_html and not re.search(r"url\(\s*['\"]?https?:", full_html)
    assert len(full_html.encode()) < 6_000_000


PER_SERIES = {"verdict", "ladder", "speedup", "amortisation", "share", "attribution", "roofline"}


def test_every_section_and_figure(full_html: str) -> None:
    for key, _title in SECTIONS:
        suffix = "-0" if key in PER_SERIES else ""       # one card per series; one series here
        assert f'<section class="card" id="{key}{suffix}">' in full_html
    figs = figures_in(full_html)
    assert set(figs) == {f"{f}-0" for f in ("fig-ladder", "fig-speedup", "fig-amortisation", "fig-hit-rate",
                                            "fig-dram", "fig-roofline")} | {"fig-timeline", "fig-answer"}
    for fid, spec in figs.items():
        assert f'<div class="chart" id="{fid}"></div>' in full_html
        if fid not in ("fig-timeline", "fig-answer"):   # every series chart names its series
            assert "artifact kernels, element pin" in spec["layout"]["title"]["text"]
        assert spec["data"], fid
    timeline = re.search(r'<section class="card" id="timeline">.*?</section>', full_html, re.S).group(0)
    assert ">pin<" in timeline and ">gap<" in timeline and ">consumer<" in timeline
    assert "Not measured" not in full_html


def test_numbers_and_sources_in_tables(full_html: str) -> None:
    # reuse_medium L2P+OptMT: 54.6 / 44.5 = 1.23x consumer-only, 54.6 / 60.7 = 0.90x charged,
    # artifact's timer (consumer + 9 us) 63.6 / 53.5 = 1.19x
    assert ">1.23×<" in full_html and ">0.90×<" in full_html and ">1.19×<" in full_html
    assert "Host overhead per launch" in full_html and "median 9.0 µs" in full_html
    assert 'title="from 20261129T200000Z-ladder/cells.csv[natural|reuse_medium|l2p_optmt|consumer,consumer@artifact,pin,kernels,call]' \
        in full_html


def test_ladder_only_marks_layer_b_not_measured(tmp_path: Path) -> None:
    html = light_html(write_ladder_run(tmp_path))
    attribution = re.search(r'<section class="card" id="attribution-0">.*?</section>', html, re.S).group(0)
    assert "Not measured." in attribution and 'class="chart"' not in attribution
    figs = figures_in(html)
    assert "fig-hit-rate-0" not in figs and "fig-dram-0" not in figs and "fig-ladder-0" in figs
    assert 'id="fig-hit-rate-0"' not in html


def test_profile_only_marks_layer_a_not_measured(tmp_path: Path) -> None:
    html = light_html(write_profile_run(tmp_path))
    ladder = re.search(r'<section class="card" id="ladder-0">.*?</section>', html, re.S).group(0)
    assert "Not measured." in ladder
    assert set(figures_in(html)) == {"fig-hit-rate-0", "fig-dram-0"}


def test_failed_validity_control_shows_red_banner(tmp_path: Path) -> None:
    html = light_html(write_ladder_run(tmp_path), write_profile_run(tmp_path, control="not_clear"))
    assert '<div class="banner error" role="alert">' in html
    assert "cannot see cross-kernel L2" in html


def test_kernel_replay_is_called_out(tmp_path: Path) -> None:
    profile = write_profile_run(tmp_path, ncu={"version": "2025.3.1", "replay_mode": "kernel",
                                               "cache_control": "all", "clock_control": "base"})
    html = light_html(profile)
    assert "--replay-mode kernel" in html and "cache control was &#39;all&#39;" in html


def test_missing_cell_is_na_with_reason(tmp_path: Path) -> None:
    """No run measured the baseline on random (one run skipped the profile, the other the rung)."""
    hot = write_ladder_run(tmp_path, "20261129T200000Z-hot", profiles=PROFILES[:3])
    rungs = [r for r in TIMINGS["random"] if r != "baseline"]
    cold = write_ladder_run(tmp_path, "20261129T200100Z-random", profiles=["random"], rungs=rungs)
    html = light_html(hot, cold)
    assert 'title="baseline not measured for random/natural">n/a</span>' in html


def test_manifest_fields_optional(tmp_path: Path) -> None:
    """Fields a writer may leave out (integrity/manifest.py: everything but the required ones) are
    shown as "unknown"; a manifest without a required field is refused
    (tests/test_integrity_manifest_required.py)."""
    run = write_ladder_run(tmp_path)
    m = json.loads((run / "manifest.json").read_text())
    from l2attr.integrity.manifest import required_fields

    keep = {f.split(".")[0] for f in required_fields(m)} | {"schema_version"}
    slim = {k: m[k] for k in keep}
    slim["versions"] = {"l2attr": m["versions"]["l2attr"]}      # no git sha, no source digest
    slim["gpu"] = {"name": m["gpu"]["name"]}                      # no driver
    (run / "manifest.json").write_text(json.dumps(slim))
    html = light_html(run)
    assert ">unknown<" in html
    assert "no measured HBM copy bandwidth" in html or "hbm_copy_GBps" in html


# -- answer first, escaping, offline, the compare slot, provenance ------------------------------

def text_of(fragment: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", fragment))).strip()


def test_answer_is_the_first_text_after_the_title(tmp_path: Path) -> None:
    """One line from ladders.analyse.answer, first under the title, once on the page; the verdict's
    per-profile sentences once, in the verdict card (they used to be repeated at the top)."""
    an = analyse(load_runs([write_ladder_run(tmp_path), write_profile_run(tmp_path)]))
    html = render_html(an, plotly_js="")
    line = answer_line(pin_answer(an.verdict))
    # reuse_medium, by hand: OptMT 46.7 / (pin 16.2 + L2P consumer 44.5) = 0.77x charged; every profile < 1
    assert line == "Does the L2 pin pay once its kernel is charged? No — artifact: no, 0.77–0.78×."
    after_title = text_of(html.split("</h1>", 1)[1])
    assert after_title.startswith(line)
    assert text_of(html).count(line) == 1
    assert html.index('id="answer"') < html.index("<table")
    for sentence in an.of(an.verdict, an.headline)["headline"]:
        assert text_of(html).count(sentence) == 1, sentence
    verdict = re.search(r'<section class="card" id="verdict-0">.*?</section>', html, re.S).group(0)
    assert all(s in text_of(verdict) for s in an.verdict["headline"])


def test_answer_chart_comes_right_after_the_line(tmp_path: Path) -> None:
    html = render_html(analyse(load_runs([write_ladder_run(tmp_path)])), plotly_js="")
    answer = html[html.index('id="answer"'):html.index('class="subtitle"')]
    assert answer.index('id="answer-line"') < answer.index('<div class="chart" id="fig-answer">')
    assert '<a href="#verdict-0">' in answer
    assert "fig-answer" in figures_in(html)


def test_answer_without_measurements(tmp_path: Path) -> None:
    run = write_timeline_run(tmp_path)
    html = light_html(run)
    assert text_of(html.split("</h1>", 1)[1]).startswith("No answer: neither a latency ladder nor an L2 attribution")


def test_text_from_the_runs_is_escaped(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    run = write_ladder_run(tmp_path, name="20261129T200000Z-<script>alert(2)",
                           command=f"l2attr ladder --name {evil}")
    html = light_html(run)
    assert html.count("<script") == 3          # the figures' JSON, plotly.js, the script that draws
    assert "alert(1)</script>" not in html and "<script>alert(2)" not in html
    assert "&lt;script&gt;alert(2)" in html and "--name &lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_nothing_on_the_page_points_to_the_network(full_html: str) -> None:
    page = re.sub(r"<script>\s*/\*\*\s*\n?\s*\* plotly\.js.*?</script>", "", full_html, count=1, flags=re.S)
    assert "plotly.js v" not in page, "the plotly.js block was not cut out"
    assert "http://" not in page and "https://" not in page


def test_compare_section_only_when_runs_share_cells(tmp_path: Path) -> None:
    """Two one-cell runs, 101 vs 104 µs (see test_analysis_compare): the section sits after the
    ladder, says the difference, names the differing setting, and lists the cell."""
    from helpers_rundirs import one_cell_run

    a = one_cell_run(tmp_path, "A-ladder", "2026-11-29T10:00:00Z", {0: 100.0, 2: 102.0}, measure={"spin_us": 50.0})
    b = one_cell_run(tmp_path, "B-ladder", "2026-11-30T10:00:00Z", {0: 104.0, 2: 104.0}, measure={"spin_us": 30.0})
    assert 'id="compare"' not in render_html(analyse(load_runs([a])), plotly_js="")
    html = render_html(analyse(load_runs([a, b])), plotly_js="")
    cards = re.findall(r'<section class="card" id="([^"]+)"', html)
    assert cards[cards.index("ladder-0") + 1] == "compare"
    assert '<a href="#compare">Compare runs</a>' in html
    section = re.search(r'<section class="card" id="compare">.*?</section>', html, re.S).group(0)
    assert "A-ladder against B-ladder (the run the analysis uses)" in section
    assert "consumer (kernel timer): 1 cells, |difference| median 2.88 %" in section
    assert "<td>measure.spin_us</td><td>30.0</td><td>50.0</td>" in section
    assert '<td class="key">artifact/optmt/none/random/natural</td>' in section


def run_block(html: str, name: str) -> str:
    prov = re.search(r'<section class="card" id="provenance">.*?</section>', html, re.S).group(0)
    return prov.split(f"<h3>{name} ", 1)[1].split("<h3>", 1)[0]


def fact(block: str, label: str) -> str:
    m = re.search(rf"<tr><td>{re.escape(label)}</td><td[^>]*>(.*?)</td></tr>", block, re.S)
    assert m, label
    return text_of(m.group(1))


def test_provenance_one_table_per_run_with_units(tmp_path: Path) -> None:
    gpu = {**json.loads((write_ladder_run(tmp_path / "x") / "manifest.json").read_text())["gpu"],
           "sm_clock_mhz": "1980", "max_mem_clock_mhz": "3201", "driver_cuda": 13000, "runtime_cuda": 13020}
    unknown_sha = "unknown (no .git next to the package; source_digest identifies the code)"
    ladder = write_ladder_run(tmp_path, gpu=gpu, versions={"l2attr": "0.1.0", "git_sha": unknown_sha})
    profile = write_profile_run(tmp_path)
    html = light_html(ladder, profile)
    prov = re.search(r'<section class="card" id="provenance">.*?</section>', html, re.S).group(0)
    assert prov.count('<table class="data kv">') == 3      # one per run, and the workload config
    lad, prof = run_block(html, ladder.name), run_block(html, profile.name)
    assert fact(lad, "L2 size") == "60.0 MiB" and 'title="recorded: 62,914,560"' in lad
    assert fact(lad, "persisting L2 max") == "37.5 MiB"
    assert fact(lad, "SM clock") == "1,980 MHz" and fact(lad, "memory clock max") == "3,201 MHz"
    assert fact(lad, "CUDA (driver API)") == "13.0" and fact(lad, "CUDA (runtime)") == "13.2"
    assert fact(lad, "HBM device-to-device copy") == "4,020 GB/s"
    assert fact(lad, "git sha") == unknown_sha and fact(lad, "source digest") == "unknown"
    assert fact(lad, "command line") == "l2attr ladder --preset artifact --out runs"
    assert fact(lad, "pin granularity") == "each family's own" and fact(lad, "repeats") == "3"
    assert "Nsight Compute" not in lad and "Compiled variants (2 kernels)" in lad
    assert fact(prof, "git sha") == "abc1234" and fact(prof, "replay mode") == "application"
    assert fact(prof, "validity control") == "clear" and fact(prof, "cache control") == "none"
    for run, block in ((ladder, lad), (profile, prof)):
        raw = re.search(r'<details><summary>Raw manifest.json</summary>\s*<pre class="raw">(.*?)</pre>', block, re.S)
        assert json.loads(unescape(raw.group(1))) == json.loads((run / "manifest.json").read_text())
