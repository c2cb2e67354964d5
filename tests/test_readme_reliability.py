"""The reliability table (docs/reliability.md), row by row: each command runs here as a user would run it.

make_inputs() builds the files the rows name (in a scratch folder that is the working
directory); every row's command runs through bash with the real `l2attr` entry point, and its
exit status and first line of output (stderr when it fails, stdout when it succeeds) must be
the ones the table shows. In the table, `…` stands for a part that depends on the machine.

A row that is one plain `l2attr ARGS` (no pipe, redirection or Ctrl-C) runs in this process as
well, through `l2attr.cli.main` (the entry point's one call), with the same checks: that is the
README's test command (the start of ~40 interpreters took a minute of its two). Through bash,
every row carries the `slow` mark (tests/conftest.py SLOW; .ci/run runs them right after the
README's command): the rows about pipes, devices and signals run there only.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from conftest import FIXTURES, MEDIUM_CUT, REPO
from helpers_rundirs import ladder_cells, write_ladder_run, write_profile_run
from helpers_sweep import write_sweep_run

README = REPO / "docs" / "reliability.md"      # the reliability page: the table and its rows
APP_REPORT = FIXTURES / "ncu" / "pin_consume_app_replay_h200.ncu-rep"
TUNING = REPO / "examples" / "tuning" / "fast_tuning.csv"
CTRL_C = " + Ctrl-C"        # a row whose command is interrupted once it has said what it writes


@dataclass(frozen=True)
class Row:
    what: str
    command: str
    code: int
    message: str             # "" for a row that must print nothing on stderr


def table_rows(text: str) -> list[Row]:
    if not text.startswith("# Reliability\n"):
        return []
    section = text.split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 4 or not cells[1].startswith("`"):
            continue
        command, message = (c.strip("`").replace("\\|", "|") for c in (cells[1], cells[3]))
        rows.append(Row(cells[0], command, int(cells[2]), "" if message == "(nothing)" else message))
    return rows


ROWS = table_rows(README.read_text())


def _cut(run: Path, table: str, keep: slice | None = None, drop_bytes: int = 0) -> None:
    f = run / table
    if keep is not None:
        f.write_text("".join(f.read_text().splitlines(keepends=True)[keep]))
    if drop_bytes:
        f.write_bytes(f.read_bytes()[:-drop_bytes])


def make_inputs(root: Path) -> None:
    """Every file a row names, relative to `root`."""
    shutil.copy(MEDIUM_CUT, root / "med.txt")                            # 4,000 ids, 1,297 unique
    (root / "bad.txt").write_text("1234567890123456789\nx\n")
    (root / "bad.toml").write_bytes(b"\x80rows = 1\n")
    (root / "app.ncu-rep").write_bytes(APP_REPORT.read_bytes())
    (root / "cut444.ncu-rep").write_bytes(APP_REPORT.read_bytes()[:444_000])
    (root / "cut100.ncu-rep").write_bytes(APP_REPORT.read_bytes()[:100_000])
    write_ladder_run(root, "ladder")
    write_profile_run(root, "profile")
    _cut(write_ladder_run(root, "cut-cells"), "cells.csv", drop_bytes=10)
    _cut(write_ladder_run(root, "header-only"), "cells.csv", keep=slice(0, 1))
    _cut(write_ladder_run(root, "lost-samples"), "samples.csv", keep=slice(0, -2))
    cells = ladder_cells()
    cells.loc[7, "median_us"] = -1.12
    write_ladder_run(root, "neg-median", cells=cells)
    write_ladder_run(root, "dup-cells", cells=pd.concat([ladder_cells(), ladder_cells().iloc[[3]]], ignore_index=True))
    _cut(write_profile_run(root, "cut-metrics"), "metrics.csv", drop_bytes=7)
    _cut(write_profile_run(root, "lost-kernel"), "metrics.csv", keep=slice(0, -9))
    damaged = bytearray(APP_REPORT.read_bytes())
    damaged[400_000:402_000] = b"\xab" * 2_000                   # inside the 4th kernel's result
    (root / "mid2k.ncu-rep").write_bytes(bytes(damaged))
    lines = TUNING.read_text().splitlines(keepends=True)
    (root / "cut_tuning.csv").write_text("".join(lines[:-150]))  # head -n -150
    no_gpu = write_ladder_run(root, "no-gpu")
    manifest = json.loads((no_gpu / "manifest.json").read_text())
    del manifest["gpu"]
    (no_gpu / "manifest.json").write_text(json.dumps(manifest))
    sweep = write_sweep_run(root / "sweeps", "pollution", profiles=("random",), pollution_mib=[0.0, 30.0])
    sweep = sweep.rename(root / "sweep-doubled")
    points = pd.read_csv(sweep / "sweep_points.csv")
    spread = ["median_us", "p10_us", "p90_us", "ci95_lo_us", "ci95_hi_us"]
    points.loc[3, spread] = points.loc[3, spread] * 2                 # still ordered: only the samples tell
    points.to_csv(sweep / "sweep_points.csv", index=False)
    (write_ladder_run(root, "list-manifest") / "manifest.json").write_text("[1, 2]\n")
    (root / "dangling.md").symlink_to(Path("nowhere") / "x.md")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reliability")
    make_inputs(root)
    return root


@pytest.fixture(scope="module")
def scratch_here(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same inputs for the rows run in this process (their outputs land apart)."""
    root = tmp_path_factory.mktemp("reliability-in-process")
    make_inputs(root)
    return root


def _env() -> dict[str, str]:
    """`l2attr` on PATH as this interpreter's entry point, importing this checkout."""
    bin_dir = Path(sys.executable).parent
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": str(REPO), "COLUMNS": "200"}


def run_row(root: Path, command: str) -> tuple[int, str, str]:
    """(exit status of l2attr, stdout, stderr) of one table command, run in `root`."""
    interrupt = command.endswith(CTRL_C)
    command = command.removesuffix(CTRL_C)
    script = f"{command}\nexit ${{PIPESTATUS[0]}}"           # l2attr's status, not head's
    proc = subprocess.Popen(["bash", "-c", script], cwd=root, env=_env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=interrupt)
    if interrupt:
        first = proc.stdout.readline()                     # "writing ..." : now it is working
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        return proc.returncode, first + out, err
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


SHELL = ("|", ">", "<", "&", ";", "$", "`")


def in_process_argv(command: str) -> list[str] | None:
    """The arguments of a row that is one plain `l2attr ARGS`; None for a shell command line."""
    if command.endswith(CTRL_C) or any(c in command for c in SHELL):
        return None
    words = shlex.split(command)
    return words[1:] if words[0] == "l2attr" else None


def run_row_in_process(root: Path, argv: list[str], capsys: pytest.CaptureFixture[str],
                       monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `l2attr ARGS` as the entry point runs it: sys.exit(main())."""
    from l2attr.cli import main

    monkeypatch.chdir(root)
    monkeypatch.setenv("COLUMNS", "200")
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exc:              # argparse's usage errors, as sys.exit would end them
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out, err = capsys.readouterr()
    return code, out, err


def _pattern(message: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if part == "…" else re.escape(part) for part in re.split("(…)", message)))


def test_the_table_is_there() -> None:
    assert len(ROWS) >= 20


PLAIN = [r for r in ROWS if in_process_argv(r.command) is not None]


@pytest.mark.parametrize("row", [pytest.param(r, marks=pytest.mark.slow) if r in PLAIN else r for r in ROWS],
                         ids=[r.what for r in ROWS])
def test_row(scratch: Path, row: Row) -> None:
    check_row(scratch, row, *run_row(scratch, row.command))


@pytest.mark.parametrize("row", PLAIN, ids=[r.what for r in PLAIN])
def test_row_in_process(scratch_here: Path, row: Row, capsys: pytest.CaptureFixture[str],
                        monkeypatch: pytest.MonkeyPatch) -> None:
    check_row(scratch_here, row, *run_row_in_process(scratch_here, in_process_argv(row.command), capsys, monkeypatch))


def test_the_shell_rows_stay_shell_rows() -> None:
    """The rows about pipes, devices and Ctrl-C never run in process (and there are some)."""
    shell = [r for r in ROWS if r not in PLAIN]
    assert len(shell) >= 5 and len(PLAIN) >= 20
    assert all(r.command.endswith(CTRL_C) or any(c in r.command for c in SHELL) for r in shell)
    assert in_process_argv("l2attr traces stats med.txt > /dev/full") is None
    assert in_process_argv("l2attr report a --profiles ''") == ["report", "a", "--profiles", ""]


def check_row(scratch: Path, row: Row, code: int, out: str, err: str) -> None:
    assert code == row.code, (out, err)
    assert "Traceback" not in err and "Exception ignored" not in err
    if row.message == "":
        assert err == ""
        return
    lines = (out if code == 0 else err).splitlines()
    assert lines, (out, err)
    assert _pattern(row.message).fullmatch(lines[0]), lines[0]
    if code != 0 and code != 130:
        assert len(err.splitlines()) == 1, err                 # exactly one line
    assert not list(scratch.glob(".*.tmp"))                     # no half-written file left
