"""GPU benchmarks started where they cannot run say so in one line and exit 1, never a traceback."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed here")
@pytest.mark.parametrize("script", ["gather_ceiling.py", "tune_fast.py"])
def test_without_torch_one_line_and_exit_1(script, tmp_path):
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--out", str(tmp_path / "o")],
                         capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})     # this checkout's l2attr, not an installed one
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{script[:-3]}: error: torch is not installed"), res.stderr
