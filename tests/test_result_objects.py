"""The front door's result objects: l2attr.ladder judges its run as the report does; the run dir
it returns is the one the command made, in this process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import l2attr
from helpers_rundirs import write_ladder_run
from l2attr.study import analyse, load_runs
from l2attr.ladders.analyse.answer import headline, pin_answer
from l2attr.study.result import LadderResult
from l2attr.errors import UserError
from l2attr.vocab import Family


def test_ladder_result_reads_a_run_as_the_report_does(tmp_path: Path) -> None:
    run = write_ladder_run(tmp_path)
    res = LadderResult.from_run(run)
    an = analyse(load_runs([run]))
    assert res.verdict.equals(an.verdict) and res.cells.equals(an.ladder) and res.run_dir == Path(run)
    line = headline(pin_answer(an.verdict), an.verdict)
    assert line and line in repr(res) and str(run) in repr(res)


def test_ladder_runs_the_command_in_this_process_with_flags_or_keywords(tmp_path: Path, monkeypatch) -> None:
    from l2attr.ladders import command as ladder_cmd
    from l2attr.ladders.command import options_from_args
    from l2attr.rundir import RunDir

    seen: list[Any] = []

    def fake_measure(args: Any) -> RunDir:       # the command's run: one new run dir under args.out
        if args.resume is not None:
            assert args.out == Path("runs")        # out= is not the resumed run's
            return RunDir.open(args.resume)
        seen.append(options_from_args(args))
        return RunDir.open(write_ladder_run(args.out, name="20261202T000000Z-ladder"))

    write_ladder_run(tmp_path, name="20261201T000000Z-ladder")      # an older run beside it
    monkeypatch.setattr(ladder_cmd, "measure", fake_measure)
    res = l2attr.ladder("--family", "artifact", out=tmp_path)
    assert res.run_dir.name == "20261202T000000Z-ladder"
    l2attr.ladder(out=tmp_path / "k", families="artifact", repeats=3, rungs=["baseline", "torch"])
    assert [o.families for o in seen] == [[Family.ARTIFACT]] * 2
    assert (seen[1].repeats, seen[1].target_rel, [r.name for r in seen[1].rungs]) == (3, None, ["baseline", "torch"])
    resumed = l2attr.ladder(out=tmp_path / "elsewhere", resume=tmp_path / "20261201T000000Z-ladder")
    assert resumed.run_dir.name == "20261201T000000Z-ladder"
    with pytest.raises(UserError, match="unrecognized arguments: --bogus"):
        l2attr.ladder("--bogus", out=tmp_path)
    with pytest.raises(UserError, match="no option turbo"):
        l2attr.ladder(out=tmp_path, turbo=True)
    with pytest.raises(UserError, match=r"--repeats must be a whole number >= 1 .* \(got 0\)"):
        seen.clear() or options_from_args(ladder_cmd.namespace((), tmp_path, {"repeats": 0}))
