"""What a newcomer meets first when a word is wrong: every mistake one line that says what would
be right (issue 26's newcomer run). A bad experiment baseline, condition or timer lists the valid
words; `report -o x.pdf` is refused instead of writing HTML into a .pdf; a mistyped flag or command
gets the nearest one; `experiment show` prints DRAM bytes in MB and hit rates in %."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from l2attr.cli import main
from l2attr.flags import did_you_mean
from l2attr.errors import UserError
from l2attr.api import Experiment

ROOT = Path(__file__).resolve().parents[1]
KV_RUN = ROOT / "examples" / "experiments" / "20261201T163508Z-kv-pin-sdpa"


@pytest.mark.parametrize("kw, said", [
    ({"baseline": "cold"}, "unknown baseline 'cold'; valid: no_producer, flush_after_producer"),
    ({"conditions": ["natural", "cold"]}, "unknown condition 'cold'; valid: natural, no_producer,"),
    ({"timer": "fast"}, "unknown timer 'fast'; valid: blocking, spin"),
])
def test_bad_declaration_words_list_the_valid_ones(kw: dict, said: str) -> None:
    with pytest.raises(UserError, match=said):
        Experiment("x", consumer=lambda: 0, producer=lambda: 0, **kw)


def test_did_you_mean_by_hand() -> None:
    assert did_you_mean("--famly", ["--family", "--profiles", "-o"]) == "; did you mean --family?"
    assert did_you_mean("--zzzz", ["--family", "--profiles"]) == ""


def test_mistyped_flag_names_the_subcommand_and_the_nearest_flag(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["traces", "stats", "--profle", "random"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("l2attr traces stats: error: unrecognized arguments: --profle")
    assert "did you mean --profile?" in err[0]


def test_mistyped_command_gets_the_nearest_command(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["ladr"])
    err = capsys.readouterr().err.strip()
    assert "invalid choice: 'ladr'; did you mean ladder?" in err and "valid: ladder, profile" in err


def test_report_refuses_an_output_that_is_no_report_format(tmp_path: Path, capsys) -> None:
    out = tmp_path / "x.pdf"
    assert main(["report", str(KV_RUN), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "writes HTML or Markdown, not .pdf; give a .html or .md file name (or say --format html|md)" in err
    assert not out.exists()


def test_report_still_writes_md_and_html(tmp_path: Path) -> None:
    for name in ("x.md", "x.HTML"):
        assert main(["report", str(KV_RUN), "-o", str(tmp_path / name)]) == 0
        assert (tmp_path / name).stat().st_size > 0


def test_experiment_show_prints_human_units(tmp_path: Path, capsys) -> None:
    run = tmp_path / KV_RUN.name
    shutil.copytree(KV_RUN, run)
    assert main(["experiment", "show", str(run)]) == 0
    out = capsys.readouterr().out
    assert "DRAM read / call (median)" in out and "L2 read hit rate" in out
    assert " MB" in out and " %" in out
    assert "134284800" not in out and "0.388707" not in out       # no raw byte count, no bare rate
