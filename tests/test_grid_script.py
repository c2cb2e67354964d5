"""examples/steps/hf_grid.py as a program a user runs (issue 52, item 5): its readers of files a user
may have damaged or replaced (the call record, the finished runs' manifests, the ncu cache) never
block on a FIFO and never read without bound; its inputs are checked in one line, exit 2."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from l2attr.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "steps" / "hf_grid.py"


def _grid():
    spec = importlib.util.spec_from_file_location("hf_grid_script", SCRIPT)
    grid = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grid)
    return grid


def test_a_fifo_call_record_is_one_line_not_a_wait(tmp_path: Path) -> None:
    grid = _grid()
    os.mkfifo(tmp_path / grid.CALLS)
    with pytest.raises(UserError, match="FIFO"):
        grid.call_lines(tmp_path)
    with pytest.raises(UserError, match="FIFO"):
        grid.record_call(tmp_path, {"models": {"m": {}}}, 1.0, [])


def test_a_fifo_damaged_or_foreign_manifest_is_one_line_or_not_a_grid_run(tmp_path: Path) -> None:
    grid = _grid()
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "manifest.json").write_text('["not", "a", "run"]')
    assert grid.finished([tmp_path]) == {}                      # not a step run: not the grid's
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "manifest.json").write_text('{"status": "complete", "kind": "step", "step": 3}')
    with pytest.raises(UserError, match="manifest.json: step must be"):      # a damaged step run is named
        grid.finished([tmp_path])
    (tmp_path / "b" / "manifest.json").unlink()
    (tmp_path / "c").mkdir()
    os.mkfifo(tmp_path / "c" / "manifest.json")
    with pytest.raises(UserError, match="FIFO"):
        grid.finished([tmp_path])


def test_a_fifo_ncu_cache_is_read_again_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grid = _grid()
    os.mkfifo(tmp_path / "cache.csv")
    assert grid.read_all(tmp_path / "cache.csv") == {}
    assert "the write-back is read again" in capsys.readouterr().err


@pytest.mark.parametrize("argv, said", [
    (["--page", "no/such/folder"], "--page no/such/folder: no such folder"),
    (["--out", "FILE"], "--out FILE: not a folder"),
    (["--repeats", "1"], "--repeats 1 --max-repeats 40: at least 2 repeats"),
    (["--compiled", "llama3-8b:decode:x:1"], "--compiled 'llama3-8b:decode:x:1': give MODEL:decode:BATCH:KV"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, argv: list[str], said: str) -> None:
    (tmp_path / "FILE").write_text("x")
    got = subprocess.run([sys.executable, str(SCRIPT), *argv], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    lines = got.stderr.strip().splitlines()
    assert got.returncode == 2 and said in lines[-1] and "Traceback" not in got.stderr, got.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_full_stdout_is_one_line_and_the_page_is_still_written(tmp_path: Path) -> None:
    """--page on a folder of no grid runs writes its (empty) page atomically, then a stdout that
    refuses the text is one line, exit 1, never a traceback."""
    with open("/dev/full", "w") as full:
        got = subprocess.run([sys.executable, str(SCRIPT), "--page", str(tmp_path)], stdout=full, stderr=subprocess.PIPE,
                             text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert got.returncode == 1 and "Traceback" not in got.stderr, got.stderr
    assert got.stderr.strip().splitlines()[-1].startswith("hf_grid: error: the page is written")
    assert (tmp_path / "README.md").read_text().startswith("# Worth the Bytes?")


def test_without_a_gpu_the_grid_is_one_line_before_anything_is_written(tmp_path: Path) -> None:
    """Without torch, or with a torch that sees no GPU (this machine either way), measuring stops in
    one `l2attr: error: hf_grid: ...` line, exit 1, before ncu runs or --out is made."""
    try:
        import torch
        if torch.cuda.is_available():
            pytest.skip("a GPU answers here")
    except ImportError:
        pass
    got = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "grid")], capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert got.returncode == 1 and "Traceback" not in got.stderr, got.stderr
    assert got.stderr.strip().splitlines()[-1].startswith("l2attr: error: hf_grid: ")
    assert not (tmp_path / "grid").exists()
