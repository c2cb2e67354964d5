"""Every file of a run dir is an input: `report -o` onto any of them (compressed tables, sidecars,
raw ncu reports, traces), through a symbolic or hard link to one, or into the run dir itself is
refused before any work, and the file stays as it was. A dangling link is refused as an output
file and as a folder of runs (writing through it would create whatever it points at)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import runs_mutate as rm
from l2attr.cli import main

EXAMPLES = rm.EX
# the committed runs that hold each kind of file beside their tables
WITH_FILES = {
    "compressed tables": rm.RUNS["ladder"],
    "sweep sidecars": EXAMPLES / "20261130T220358Z-pollution-dram",
    "occupy sidecar": EXAMPLES / "20261201T210348Z-bench-occupy",
    "raw ncu report": EXAMPLES / "reproduction" / "20261201T173405Z-timeline",
    "step trace": EXAMPLES / "steps" / "runs" / "20261201T201822Z-selfcheck-4x-l2",
    "experiment": rm.RUNS["experiment"],
}


def _copy(src: Path, tmp: Path) -> Path:
    import shutil

    run = tmp / src.name
    shutil.copytree(src, run)
    return run


def _refused(argv: list[str], capsys: pytest.CaptureFixture) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


@pytest.mark.parametrize("what", sorted(WITH_FILES))
def test_no_file_of_a_run_dir_is_an_output(what: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = _copy(WITH_FILES[what], tmp_path)
    before = rm.digest(run)
    files = [p for p in sorted(run.rglob("*")) if p.is_file()]
    assert len(files) >= 2
    for f in files:
        line = _refused(["report", str(run), "-o", str(f)], capsys)
        assert str(f) in line
    assert rm.digest(run) == before


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_a_link_to_a_run_file_is_refused(link: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = _copy(WITH_FILES["compressed tables"], tmp_path / "runs")
    target = run / "samples.csv.gz"
    out = tmp_path / "report.md"
    (os.symlink if link == "symbolic" else os.link)(target, out)
    before = rm.digest(run)
    line = _refused(["report", str(run), "-o", str(out)], capsys)
    assert "input" in line or "inside run dir" in line
    assert rm.digest(run) == before


def test_a_new_file_inside_a_run_dir_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = _copy(WITH_FILES["experiment"], tmp_path)
    line = _refused(["report", str(run), "-o", str(run / "ncu" / ".." / "page.html")], capsys)
    assert "inside run dir" in line and not (run / "page.html").exists()


@pytest.mark.parametrize("what", ["experiment", "step trace"])
def test_report_dot_inside_a_page_run_dir_writes_nothing_there(what: str, tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    run = _copy(WITH_FILES[what], tmp_path)
    before = rm.digest(run)
    monkeypatch.chdir(run)
    line = _refused(["report", "."], capsys)
    assert "inside run dir" in line
    assert rm.digest(run) == before and not (run / "report.html").exists()


def test_a_dangling_link_is_no_output(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = _copy(WITH_FILES["experiment"], tmp_path / "runs")
    out = tmp_path / "report.md"
    out.symlink_to(tmp_path / "nowhere" / "deep" / "report.md")
    line = _refused(["report", str(run), "-o", str(out)], capsys)
    assert "does not exist" in line and not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("argv", [["ladder"], ["sweep", "window"], ["experiment", "time", "x.py:make"]])
def test_a_dangling_link_is_no_folder_of_runs(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "runs"
    out.symlink_to(tmp_path / "gone" / "runs")
    if argv[0] == "experiment":
        script = tmp_path / "x.py"
        script.write_text("import l2attr\nmake = l2attr.Experiment('x', consumer=lambda: None)\n")
        argv = ["experiment", "time", f"{script}:make"]
    line = _refused([*argv, "--out", str(out)], capsys)
    assert "does not exist" in line and not (tmp_path / "gone").exists()
