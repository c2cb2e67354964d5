"""`l2attr report DIR` as a user's folders are (issue 52): every folder the walk skips is named with
its reason, a damaged manifest among step runs is named as damaged, links are followed once, and a
foreign manifest.json is "not an l2attr run". Fake run dirs: the walk reads manifests only."""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from l2attr.cli import main
from l2attr.commands.report_pages import expand_run_dirs, page_kind
from l2attr.errors import UserError
from l2attr.rundir import RunDir

STEP = {"schema_version": 2, "kind": "step", "name": "s"}
ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def at_most(seconds: int) -> Iterator[None]:
    """Fail (instead of hanging the suite) when the body runs longer than `seconds`."""
    def alarm(signum: int, frame: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def step_runs(root: Path, n: int = 3) -> list[Path]:
    runs = []
    for i in range(n):
        run = root / f"2026120{i}T000000Z-s{i}"
        run.mkdir(parents=True)
        (run / "manifest.json").write_text(json.dumps(STEP))
        runs.append(run)
    return runs


def damage_missing(m: Path) -> None:
    m.unlink()


def damage_folder(m: Path) -> None:
    m.unlink()
    m.mkdir()


def damage_dangling(m: Path) -> None:
    m.unlink()
    m.symlink_to("nowhere.json")


def damage_fifo(m: Path) -> None:
    m.unlink()
    os.mkfifo(m)


@pytest.mark.parametrize("damage, reason", [
    (damage_missing, "not a run dir (no manifest.json)"),
    (damage_folder, "its manifest.json is a folder, not a file"),
    (damage_dangling, "its manifest.json is a dangling link to nowhere.json, not a file"),
    (damage_fifo, "its manifest.json is a FIFO (named pipe), not a file"),
])
def test_a_run_whose_manifest_is_not_a_file_is_named_with_the_reason(tmp_path: Path, damage, reason: str) -> None:
    """Two of three runs read, and the third named with why: never a page of 2 of 3 without a word."""
    a, b, c = step_runs(tmp_path / "top")
    damage(b / "manifest.json")
    said: list[str] = []
    with at_most(10):
        assert expand_run_dirs([tmp_path / "top"], said.append) == [a, c]
    assert said == [f"skipped {b}: {reason}"]


def test_the_default_is_a_line_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = step_runs(tmp_path, 2)
    (b / "manifest.json").unlink()
    assert expand_run_dirs([tmp_path]) == [a]
    assert capsys.readouterr().err == f"l2attr report: skipped {b}: not a run dir (no manifest.json)\n"


def test_a_lone_run_whose_manifest_is_a_fifo_is_one_line(tmp_path: Path) -> None:
    (run,) = step_runs(tmp_path, 1)
    damage_fifo(run / "manifest.json")
    with at_most(10), pytest.raises(UserError, match="is no readable run dir: its manifest.json is a FIFO"):
        expand_run_dirs([run])


def test_the_skipped_run_is_said_on_stderr_by_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Through the CLI: the line on stderr names the folder (report of the two committed step runs
    left, a third whose manifest.json went missing)."""
    src = ROOT / "examples" / "steps" / "runs"
    names = ("20261201T170613Z-selfcheck-quarter-l2-marked", "20261201T201913Z-selfcheck-quarter-l2-graph-marked")
    for n in names:
        shutil.copytree(src / n, tmp_path / "top" / n)
    (tmp_path / "top" / "20261201T201999Z-lost").mkdir()
    assert main(["report", str(tmp_path / "top"), "--format", "text"]) == 0
    out, err = capsys.readouterr()
    assert err == f"l2attr report: skipped {tmp_path / 'top' / '20261201T201999Z-lost'}: not a run dir (no manifest.json)\n"
    assert all(n in out for n in names)


def test_two_links_from_a_folder_to_itself_are_walked_once(tmp_path: Path) -> None:
    """The walk ended only after a minute and more (each level doubled); a real path seen is not
    entered again, and each link is named."""
    loop = tmp_path / "top" / "a"
    loop.mkdir(parents=True)
    (loop / "x").symlink_to(".")
    (loop / "y").symlink_to("..")
    (run,) = step_runs(tmp_path / "top" / "b" / "c" / "d", 1)
    said: list[str] = []
    with at_most(10):
        assert expand_run_dirs([tmp_path / "top"], said.append) == [run]
    assert f"skipped {loop / 'x'}: a link to {loop}, a folder already walked" in said
    assert f"skipped {loop / 'y'}: a link to {tmp_path / 'top'}, a folder already walked" in said
    (tmp_path / "only").mkdir()
    for name in ("x", "y"):
        (tmp_path / "only" / name).symlink_to(".")
    with at_most(10), pytest.raises(UserError, match="holds none"):
        expand_run_dirs([tmp_path / "only"], said.append)


def test_one_run_reached_through_a_link_is_read_once(tmp_path: Path) -> None:
    (run,) = step_runs(tmp_path / "top", 1)
    (tmp_path / "alias").symlink_to(run)
    assert expand_run_dirs([run, tmp_path / "alias"], print) == [run]


def test_a_damaged_manifest_among_step_runs_is_named_damaged(tmp_path: Path) -> None:
    """Not "X is not a step run": the manifest's own damage, naming its file."""
    a, b, c = step_runs(tmp_path)
    (b / "manifest.json").write_text('{"schema_version": 2, "kind": "st')
    with pytest.raises(UserError, match=f"{b / 'manifest.json'}: not valid JSON"):
        page_kind([a, b, c])


def test_a_foreign_manifest_is_not_an_l2attr_run(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"name": "my-app", "version": "1.0"}')
    with pytest.raises(UserError) as err:
        RunDir.open(tmp_path)
    assert str(err.value).startswith(f"{tmp_path / 'manifest.json'}: not an l2attr run")
    assert "schema version None" not in str(err.value)
