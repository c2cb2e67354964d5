"""The front door's result objects: l2attr.ladder judges its run as the report does; the run dir
it returns is the one the command made."""

from __future__ import annotations

from pathlib import Path

import pytest

import l2attr
import l2attr.cli
from helpers_rundirs import write_ladder_run
from l2attr.analysis import analyse, load_runs
from l2attr.analysis.answer import headline, pin_answer
from l2attr.analysis.result import LadderResult
from l2attr.errors import UserError


def test_ladder_result_reads_a_run_as_the_report_does(tmp_path: Path) -> None:
    run = write_ladder_run(tmp_path)
    res = LadderResult.from_run(run)
    an = analyse(load_runs([run]))
    assert res.verdict.equals(an.verdict) and res.cells.equals(an.ladder) and res.run_dir == Path(run)
    line = headline(pin_answer(an.verdict), an.verdict)
    assert line and line in repr(res) and str(run) in repr(res)


def test_ladder_returns_the_run_dir_the_command_made(tmp_path: Path, monkeypatch) -> None:
    seen: list[list[str]] = []

    def fake_main(argv: list[str]) -> int:       # the command writes one new run dir under --out
        seen.append(argv)
        write_ladder_run(Path(argv[argv.index("--out") + 1]), name="20261202T000000Z-ladder")
        return 0

    write_ladder_run(tmp_path, name="20261201T000000Z-ladder")      # an older run beside it
    monkeypatch.setattr(l2attr.cli, "main", fake_main)
    res = l2attr.ladder("--family", "artifact", out=tmp_path)
    assert seen[0][:3] == ["ladder", "--family", "artifact"]
    assert res.run_dir.name == "20261202T000000Z-ladder"
    monkeypatch.setattr(l2attr.cli, "main", lambda argv: 2)
    with pytest.raises(UserError, match="exit status 2"):
        l2attr.ladder("--bogus", out=tmp_path)
