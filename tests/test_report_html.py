"""The HTML report: self-contained, one plotly.js, sections present or marked "not measured"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers_rundirs import ladder_cells, write_ladder_run, write_profile_run, write_timeline_run

from l2attr.analysis import analyse, load_runs
from l2attr.report.html import SECTION_SPECS, SECTIONS, SectionSpec, render_html
from l2attr.resources import data_dir


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
                                            "fig-dram", "fig-roofline")} | {"fig-timeline"}
    for fid, spec in figs.items():
        assert f'<div class="chart" id="{fid}"></div>' in full_html
        if fid != "fig-timeline":   # every series chart names its series
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
    cells = ladder_cells()
    cells = cells[~((cells["rung"] == "baseline") & (cells["profile"] == "random"))]
    html = light_html(write_ladder_run(tmp_path, cells=cells))
    assert 'title="baseline not measured for random/natural">n/a</span>' in html


def test_manifest_fields_optional(tmp_path: Path) -> None:
    run = write_ladder_run(tmp_path)
    m = json.loads((run / "manifest.json").read_text())
    slim = {k: m[k] for k in ("schema_version", "kind", "config")}
    (run / "manifest.json").write_text(json.dumps(slim))
    html = light_html(run)
    assert ">unknown<" in html and "How much is L2 pinning worth? — unknown" in html
    assert "no measured HBM copy bandwidth" in html or "hbm_copy_GBps" in html
