"""Report sections ask for analyses by name (report/registry.py `reads=`, report/reads.py): every
declared name is registered (l2attr/study/study.py), a build sees only what it declared, an
unregistered name fails the declaration at import, and drawing the pages reads exactly what the
sections declare."""

from __future__ import annotations

import dataclasses
import importlib
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers_rundirs import one_cell_run, write_ladder_run, write_profile_run, write_timeline_run

from l2attr.study import analyse, load_runs
from l2attr.study.study import RUN_FACTS, SERIES_ANALYZERS, STUDY_ANALYSES, Analysis, analysis_names
from l2attr.report import reads, registry
from l2attr.report.html import render_html
from l2attr.report.markdown import render_markdown

ROOT = Path(__file__).resolve().parents[1]
ALL_SPECS = (*registry.SECTION_SPECS, registry.ANSWER)


def drawn(*studies: list[Path]) -> dict[str, set[str]]:
    """Section key -> every name its builds read while both pages of each study were drawn."""
    with reads.recording() as seen:
        for runs in studies:
            an = analyse(load_runs(runs))
            render_html(an, plotly_js="")
            render_markdown(an)
    return seen


def test_every_section_declares_registered_names_and_each_name_is_one_analysis() -> None:
    names = analysis_names()
    assert len(names) == len(set(names)), "a name registered twice (series / study / run fact)"
    assert set(names) == set(SERIES_ANALYZERS) | set(STUDY_ANALYSES) | set(RUN_FACTS)
    fields = {f.name for f in dataclasses.fields(Analysis)}
    assert set(STUDY_ANALYSES) <= fields                     # a study analysis is a field of Analysis
    assert not fields & set(SERIES_ANALYZERS), "a field hides a series frame from an.<name>"
    for spec in ALL_SPECS:
        assert spec.reads and set(spec.reads) <= set(names), spec.key
    assert len({s.key for s in ALL_SPECS}) == len(ALL_SPECS)


def test_drawing_the_pages_reads_exactly_the_declared_names(tmp_path: Path) -> None:
    """A ladder alone (no profile: the families' DRAM share is missing, so its reason is read from
    the measured roofline), the ladder with a profile and a timeline, and two runs of one cell
    (the compare section): every section reads every name it declares, and no other."""
    a = one_cell_run(tmp_path / "pair", "A-ladder", "2026-11-29T10:00:00Z", {0: 100.0, 2: 102.0})
    b = one_cell_run(tmp_path / "pair", "B-ladder", "2026-11-30T10:00:00Z", {0: 104.0, 2: 104.0})
    full = [write_ladder_run(tmp_path / "full"), write_profile_run(tmp_path / "full"),
            write_timeline_run(tmp_path / "full")]
    seen = drawn([write_ladder_run(tmp_path / "alone")], full, [a, b])
    assert {spec.key: set(spec.reads) for spec in ALL_SPECS} == seen


@pytest.mark.slow
def test_the_committed_study_pages_read_the_declared_names(tmp_path: Path) -> None:
    """examples/report.html and report.md, made as `l2attr report examples` makes them: each
    section reads what it declares. Every family there was profiled, so the families section never
    needs the measured roofline's reason for a missing DRAM share."""
    from l2attr.cli import main

    with reads.recording() as seen:
        for page in ("report.html", "report.md"):
            assert main(["report", str(ROOT / "examples"), "-o", str(tmp_path / page)]) == 0
    want = {spec.key: set(spec.reads) for spec in ALL_SPECS}
    want["families"] -= {"measured_roofline"}
    assert seen == want


def test_a_build_sees_its_declared_names_and_nothing_else(tmp_path: Path) -> None:
    an = analyse(load_runs([write_ladder_run(tmp_path)]))
    got: dict[str, object] = {}

    def build(v: reads.SectionView) -> dict[str, object]:
        got["verdict"] = v.verdict
        got["state"] = v.state
        with pytest.raises(reads.UndeclaredRead, match=r"section 'probe' read 'ladder' without declaring it"):
            v.ladder
        with pytest.raises(reads.UndeclaredRead):           # getattr's default does not hide it
            getattr(v, "caveats", None)
        with pytest.raises(AttributeError, match="read-only"):
            v.verdict = pd.DataFrame()
        return {}

    registry.SectionSpec("probe", "Probe", build, reads=("verdict", "state")).fields(an)
    assert got["verdict"] is an.verdict and got["state"] == an.state == "natural"


def test_an_undeclared_read_on_a_real_section_stops_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The roofline section without 'hbm_copy_GBps' in its declaration: the page is not drawn."""
    specs = tuple(dataclasses.replace(s, reads=tuple(n for n in s.reads if n != "hbm_copy_GBps"))
                  if s.key == "roofline" else s for s in registry.SECTION_SPECS)
    monkeypatch.setattr(registry, "SECTION_SPECS", specs)
    an = analyse(load_runs([write_ladder_run(tmp_path)]))
    with pytest.raises(reads.UndeclaredRead, match="section 'roofline' read 'hbm_copy_GBps'"):
        render_html(an, plotly_js="")


def test_an_unknown_name_fails_the_declaration_with_one_line() -> None:
    with pytest.raises(reads.UnknownAnalysis) as err:
        registry.SectionSpec("renamed", "Renamed", lambda v: None, reads=("verdict", "verdicts"))
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith("section 'renamed' reads 'verdicts', which no analysis is registered as "
                          "(did you mean 'verdict'?); registered (l2attr/study/study.py): ladder, charges")
    with pytest.raises(reads.UnknownAnalysis, match="a tuple of analysis names, not the string 'verdict'"):
        registry.SectionSpec("one", "One", lambda v: None, reads="verdict")  # type: ignore[arg-type]


def test_a_module_declaring_an_unknown_name_fails_at_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The declaration runs at import: the module that holds it cannot be imported, before any page."""
    (tmp_path / "extra_sections.py").write_text(
        "from l2attr.report.registry import SectionSpec\n"
        "EXTRA = SectionSpec('gone', 'Gone', lambda v: None, reads=('no_such_analysis',))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(reads.UnknownAnalysis, match="section 'gone' reads 'no_such_analysis'"):
        importlib.import_module("extra_sections")
    # the same in a fresh interpreter: the last line of its error is the one message
    proc = subprocess.run([sys.executable, "-c", "import extra_sections"], cwd=tmp_path, capture_output=True,
                          text=True)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "l2attr.report.reads.UnknownAnalysis: section 'gone' reads 'no_such_analysis', which no analysis")


def test_read_answers_every_kind_and_refuses_others(tmp_path: Path) -> None:
    an = analyse(load_runs([write_ladder_run(tmp_path)]))
    assert an.read("verdict") is an.frame("verdict")                   # a series frame
    assert an.read("charges") is an.frame("charges") and not an.charges.empty   # no field hides it
    assert an.read("caveats") is an.caveats                             # a study analysis
    assert an.read("runs") is an.study.runs                             # a run fact
    with pytest.raises(KeyError, match="no analysis 'nope'; registered: ladder"):
        an.read("nope")
