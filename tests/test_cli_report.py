"""`l2attr report` from the command line: outputs, and bad input as one line + exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers_rundirs import default_config, ladder_cells, write_ladder_run, write_profile_run

from l2attr.cli import main


def one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert err.startswith("l2attr report: error: ")
    return err


def test_html_report_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(write_ladder_run(tmp_path)), str(write_profile_run(tmp_path)), "-o", str(out)]) == 0
    assert out.is_file() and out.stat().st_size > 1_000_000
    assert f"wrote {out}" in capsys.readouterr().out


def test_html_default_path_is_the_current_folder_never_a_run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    run = write_ladder_run(tmp_path / "runs")
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    assert main(["report", str(run)]) == 0
    assert (here / "report.html").is_file() and not (run / "report.html").exists()
    assert f"wrote {here / 'report.html'}" in capsys.readouterr().out
    monkeypatch.chdir(run)       # inside the run dir: refused, nothing written there
    assert main(["report", str(run)]) == 2
    assert not (run / "report.html").exists()


def test_markdown_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(write_ladder_run(tmp_path)), "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert "**Verdict — artifact kernels" in out and "| reuse_medium | 0.90× | 0.79× | 0.83× | 1.19× | 1.23× |" in out


def test_markdown_to_file(tmp_path: Path) -> None:
    out = tmp_path / "s.md"
    assert main(["report", str(write_ladder_run(tmp_path)), "--format", "md", "-o", str(out)]) == 0
    assert "**Latency ladder — artifact kernels" in out.read_text()


def test_missing_run_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "run dir not found" in one_line_error(capsys, ["report", str(tmp_path / "nope")])


def test_dir_without_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "no manifest.json" in one_line_error(capsys, ["report", str(tmp_path)])


def test_wrong_schema_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_ladder_run(tmp_path)
    m = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps({**m, "schema_version": 99}))
    assert "schema version 99" in one_line_error(capsys, ["report", str(run)])


def test_table_with_wrong_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_ladder_run(tmp_path)
    (run / "cells.csv").write_text("rung,profile\nbaseline,random\n")
    assert "not an l2attr 'cells' table" in one_line_error(capsys, ["report", str(run)])


def test_ladder_run_without_cells(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_ladder_run(tmp_path)
    (run / "cells.csv").unlink()
    assert "without cells.csv" in one_line_error(capsys, ["report", str(run)])


def test_mixed_configs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_ladder_run(tmp_path)
    b = write_profile_run(tmp_path, config=default_config(rows=100_000))
    err = one_line_error(capsys, ["report", str(a), str(b)])
    assert "rows: 500000 vs 100000" in err and "--allow-mixed" in err
    assert main(["report", str(a), str(b), "--allow-mixed", "--format", "md"]) == 0


def test_unmeasured_l2_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_error(capsys, ["report", str(write_ladder_run(tmp_path)), "--l2-state", "flush"])
    assert "not measured" in err


def test_output_is_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "is a directory" in one_line_error(capsys, ["report", str(write_ladder_run(tmp_path)), "-o", str(tmp_path)])


@pytest.mark.parametrize("name, fmt, marker", [
    ("r.md", None, "**Verdict — "), ("r.markdown", None, "**Verdict — "),
    ("r.html", None, "<!DOCTYPE html>"), ("r.HTM", None, "<!DOCTYPE html>"),
    ("r.txt", "html", "<!DOCTYPE html>"), ("r.txt", "md", "**Verdict — "),
    ("r.md", "md", "**Verdict — "),
])
def test_format_follows_the_extension(tmp_path: Path, name: str, fmt: str | None, marker: str) -> None:
    out = tmp_path / name
    argv = ["report", str(write_ladder_run(tmp_path)), "-o", str(out)] + (["--format", fmt] if fmt else [])
    assert main(argv) == 0
    assert out.read_text().lstrip().startswith(marker) or marker in out.read_text()[:2000]


@pytest.mark.parametrize("fmt, name", [("html", "x.md"), ("md", "x.html")])
def test_format_contradicting_the_extension_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       fmt: str, name: str) -> None:
    err = one_line_error(capsys, ["report", str(write_ladder_run(tmp_path)), "--format", fmt,
                                  "-o", str(tmp_path / name)])
    assert f"--format {fmt} contradicts -o" in err
    assert not (tmp_path / name).exists()


@pytest.mark.parametrize("victim", ["cells.csv", "manifest.json", "samples.csv"])
def test_report_never_writes_over_a_run_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             victim: str) -> None:
    run = write_ladder_run(tmp_path)
    before = (run / victim).read_bytes()
    err = one_line_error(capsys, ["report", str(run), "-o", str(run / victim), "--format", "md"])
    assert "is an input of this command" in err
    assert (run / victim).read_bytes() == before


def test_report_output_folder_must_exist(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_error(capsys, ["report", str(write_ladder_run(tmp_path)), "-o", str(tmp_path / "new" / "r.html")])
    assert "does not exist (create it first)" in err and not (tmp_path / "new").exists()


def test_folder_of_runs_and_glob_leftovers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`report examples/` takes the run dirs inside; `report examples/*` skips report.html and
    logs/ with a line each (and may then write report.html, no longer an input)."""
    root = tmp_path / "ex"
    write_ladder_run(root)
    write_profile_run(root)
    (root / "logs").mkdir()
    (root / "report.html").write_text("old")
    out = root / "report.md"
    assert main(["report", str(root), "-o", str(out)]) == 0
    text = out.read_text()
    assert "20261129T200000Z-ladder" in text and "20261129T210000Z-profile" in text
    capsys.readouterr()
    args = sorted(str(p) for p in root.iterdir())
    assert main(["report", *args, "-o", str(root / "report.html")]) == 0
    err = capsys.readouterr().err
    assert f"skipped {root / 'logs'}: not a run dir" in err and f"skipped {root / 'report.md'}" in err
    assert (root / "report.html").read_text() != "old"


def test_a_typo_among_runs_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_ladder_run(tmp_path)
    assert "run dir not found" in one_line_error(capsys, ["report", str(run), str(tmp_path / "nope")])


def test_allow_partial_keeps_intact_rows_and_leads_with_the_damage(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """cells.csv cut 10 bytes short: strict refuses; partial drops exactly the cut row, says so on
    stderr and as the first thing after the report's title block."""
    run = write_ladder_run(tmp_path)
    whole = (run / "cells.csv").read_text().count("\n") - 1
    (run / "cells.csv").write_bytes((run / "cells.csv").read_bytes()[:-10])
    assert "the last row is cut off" in one_line_error(capsys, ["report", str(run), "-o", str(tmp_path / "s.md")])
    from l2attr.analysis import load_runs
    assert len(load_runs([run], allow_partial=True).cells) == whole - 1
    assert main(["report", str(run), "--allow-partial", "-o", str(tmp_path / "p.md")]) == 0
    err = capsys.readouterr().err
    assert err.startswith("l2attr report: warning: partial data: ") and "the last row is cut off" in err
    text = (tmp_path / "p.md").read_text()
    assert text.index("> **Warning:** Partial data") < text.index("**Verdict")


def test_allow_partial_drops_only_bad_values(tmp_path: Path) -> None:
    """Two negative medians: both rows go, every other row stays; both lines are named."""
    cells = ladder_cells()
    cells.loc[[3, 7], "median_us"] = -1.0
    run = write_ladder_run(tmp_path, cells=cells)
    from l2attr.analysis import load_runs
    study = load_runs([run], allow_partial=True)
    assert len(study.cells) == len(cells) - 2 and (study.cells["median_us"] >= 0).all()
    assert study.damage == [f"{run}/cells.csv:5: column median_us has a negative value (-1) (and 1 more rows)"]


def test_cells_missing_at_a_row_boundary_are_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The manifest declares 6 variants x 4 profiles; cells.csv lost every row of the last cell
    (random, torch) at a row boundary: strict names it, partial reads the rest."""
    from helpers_rundirs import PROFILES, TIMINGS, family_of, pin_of

    from l2attr.analysis import load_runs
    cells = ladder_cells()
    last = (cells["profile"] == "random") & (cells["rung"] == "torch")
    measure = {"rungs": list(TIMINGS["random"]), "profiles": list(PROFILES), "l2_state": "natural", "spin_us": 50.0,
               "variants": [[family_of(r), r, pin_of(r)] for r in TIMINGS["random"]]}
    run = write_ladder_run(tmp_path, cells=cells[~last], measure=measure)
    err = one_line_error(capsys, ["report", str(run), "-o", str(tmp_path / "s.md")])
    assert "1 of the 24 cells manifest.json declares are missing, first reference/torch/none/random/natural" in err
    assert len(load_runs([run], allow_partial=True).damage) == 1
    whole = write_ladder_run(tmp_path, "whole", cells=cells, measure=measure)
    assert load_runs([whole]).damage == []


def test_a_folder_reports_the_run_dirs_of_its_shallowest_level_that_holds_any(tmp_path: Path) -> None:
    """`report examples/steps` (runs in runs/ and surgery/) finds runs two levels down, and deeper;
    a folder with run dirs of its own keeps to them (so `report examples/` is the study's runs, not
    the step and experiment runs in its subfolders); a run dir's own folders are never searched."""
    from l2attr.commands.report import expand_run_dirs

    a = write_ladder_run(tmp_path / "top" / "x" / "deep" / "er")
    b = write_profile_run(tmp_path / "top" / "y")
    (a / "inner").mkdir()
    write_ladder_run(a / "inner", name="not-searched")
    (tmp_path / "top" / ".hidden").mkdir()
    write_ladder_run(tmp_path / "top" / ".hidden", name="hidden")
    assert expand_run_dirs([tmp_path / "top"]) == [b]                    # y/ is one level up from x/deep/er/
    assert expand_run_dirs([tmp_path / "top" / "x"]) == [a]
    shallow = write_ladder_run(tmp_path / "top", name="20261129T190000Z-ladder")
    assert expand_run_dirs([tmp_path / "top"]) == [shallow]


ROOT = Path(__file__).resolve().parents[1]


def test_nested_step_folders_make_one_page_with_the_index_first(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A folder of step runs in two subfolders, as examples/steps is (per-op runs in runs/, graph
    surgery in surgery/, a README and a report beside them): one page, the index first, one row
    per run of either folder. Two small committed runs of each, copied; the whole of
    examples/steps is the slow test below."""
    import shutil

    picked = {"runs": ("20261201T170613Z-selfcheck-quarter-l2-marked",
                       "20261201T201913Z-selfcheck-quarter-l2-graph-marked"),
              "surgery": ("20261202T160528Z-selfcheck-quarter-l2", "20261202T160529Z-selfcheck-4x-l2")}
    steps = tmp_path / "steps"
    for sub, names in picked.items():
        for name in names:
            shutil.copytree(ROOT / "examples" / "steps" / sub / name, steps / sub / name)
        (steps / sub / "README.md").write_text("not a run\n")
    out = tmp_path / "steps.md"
    assert main(["report", str(steps), "-o", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"wrote {out}" and len(printed) == 1 + 2 + 4                  # the index on the console
    assert printed[1].startswith("share of: ") and printed[2].startswith("step ")   # one denominator: said once
    assert sum(x.endswith(name) for x in printed for name in picked["surgery"]) == 2
    assert sum(x.endswith(name) for x in printed for name in picked["runs"]) == 2
    text = out.read_text().splitlines()
    assert text[2].startswith("Share of: ") and text[4].startswith("| step | share [95 % CI] |")
    assert all(x.startswith("| [") for x in text[6:10]) and text[10] == ""


def test_nested_step_runs_make_one_page_with_the_index_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`l2attr report examples/steps` was refused (the runs are nested); now it is one page: the
    index's rows are the 19 per-op runs of runs/, the 23 graph-surgery runs of surgery/, the 22 runs of
    the toy HuggingFace grid (hf_grid/) and the full-width grid's run (hf_full/), whose shares are of the
    eager step: the denominators differ, so each row names its own, and the grids' rows carry the
    activations' share. (Slow: it analyses every committed step run; the fast test above is the same
    page of four.)"""
    out = tmp_path / "steps.md"
    assert main(["report", str(ROOT / "examples" / "steps"), "-o", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    runs = 19 + 23 + 22 + 1
    assert printed[0] == f"wrote {out}" and len(printed) == 1 + 1 + runs          # the index on the console
    assert printed[1].startswith("step ") and "share of" in printed[1]           # denominators differ: per row
    assert sum(x.endswith(p.name) for x in printed for p in (ROOT / "examples/steps/surgery").iterdir()) == 23
    assert sum(x.endswith(p.name) for x in printed for p in (ROOT / "examples/steps/hf_grid").glob("2026*")) == 22
    assert sum(x.endswith(p.name) for x in printed for p in (ROOT / "examples/steps/hf_full").glob("2026*")) == 1
    text = out.read_text().splitlines()
    assert text[2].startswith("GPU: NVIDIA H100 80GB HBM3. Models: ")           # the study's first screen, per GPU
    assert text[4].startswith("On NVIDIA H100 80GB HBM3, the activations' share") and "of the graph replay" in text[4]
    assert text[6].startswith("| step | share [95 % CI] | share of | activations' share")
    assert all(x.startswith("| [") for x in text[8:8 + runs]) and text[8 + runs] == ""


def test_one_step_run_prints_its_headline_and_has_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from l2attr.steps.analyse.answer import StepAnswer

    run = ROOT / "examples/steps/surgery/20261202T160529Z-bert-layer-fastpath"
    head = StepAnswer.from_run(run).headline()
    assert main(["report", str(run), "-o", str(tmp_path / "one.html")]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == head.splitlines()
    assert main(["report", str(run), "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("bert-layer-fastpath  +2.29 % [+1.69, +3.35]") and out.endswith(head + "\n")


def test_experiment_runs_print_their_headlines_and_have_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from l2attr.experiment.table import analyse_experiment, load_experiment

    folder = ROOT / "examples" / "experiments"
    runs = sorted(p for p in folder.iterdir() if (p / "manifest.json").is_file())
    heads = [h for p in runs for h in analyse_experiment(load_experiment(p)).verdict["headline"]]
    assert len(heads) == 4
    assert main(["report", str(folder), "-o", str(tmp_path / "e.html")]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == heads
    assert main(["report", str(folder), "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert all(h in out for h in heads) and out.count("condition  ") == 4 and "|" not in out
