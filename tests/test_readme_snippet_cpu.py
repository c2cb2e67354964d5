"""The README's `Experiment` snippet on a machine without a GPU: it builds no CUDA tensor at import
and ends in one l2attr line with a non-zero exit, never a traceback (torch and cupy are stand-ins
that report no GPU, so the answer is known whatever this machine has)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NO_GPU_TORCH = """
class _Cuda:
    @staticmethod
    def is_available():
        return False
cuda = _Cuda()
bfloat16 = "bfloat16"
def randn(*a, **k):
    raise AssertionError("a CUDA tensor was built at import")
empty_like = randn
"""
NO_GPU_CUPY = """
class _Runtime:
    @staticmethod
    def getDeviceCount():
        return 0
class cuda:
    runtime = _Runtime()
"""


def _snippet() -> str:
    spec = importlib.util.spec_from_file_location("readme_snippet", ROOT / "tools" / "docgen" / "snippet.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.snippet((ROOT / "README.md").read_text())


def _run(script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    for name, body in (("torch", NO_GPU_TORCH), ("cupy", NO_GPU_CUPY)):
        (tmp_path / "stub" / name).mkdir(parents=True)
        (tmp_path / "stub" / name / "__init__.py").write_text(body)
    (tmp_path / "my_pair.py").write_text(script)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "stub"), str(ROOT)])}
    return subprocess.run([sys.executable, "my_pair.py"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)


def test_snippet_without_a_gpu_ends_in_one_l2attr_line(tmp_path: Path) -> None:
    done = _run(_snippet(), tmp_path)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("l2attr: error: no CUDA GPU found"), done.stderr
    assert not (tmp_path / "runs").exists(), "no run dir without a GPU"


def test_other_exceptions_keep_their_traceback(tmp_path: Path) -> None:
    """The hook shortens only l2attr's own errors: a bug in the user's script still shows where."""
    done = _run("import l2attr\nl2attr.Experiment\nraise KeyError('mine')\n", tmp_path)
    assert done.returncode != 0 and "Traceback" in done.stderr and "KeyError: 'mine'" in done.stderr


def test_the_step_snippet_without_nsight_compute_ends_in_one_l2attr_line(tmp_path: Path) -> None:
    """The README's `l2attr.step` snippet where no ncu is on PATH (this machine's PATH cut to an
    empty folder): its first l2attr call says what is missing and what to do, in one line, before
    any tensor is built; nothing is written."""
    spec = importlib.util.spec_from_file_location("readme_snippet", ROOT / "tools" / "docgen" / "snippet.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    script = mod.snippet((ROOT / "README.md").read_text(), "own-step")
    assert "l2attr.write_back(" in script and "l2attr.step(" in script
    (tmp_path / "stub" / "torch").mkdir(parents=True)
    (tmp_path / "stub" / "torch" / "__init__.py").write_text(NO_GPU_TORCH)
    (tmp_path / "no-tools").mkdir()
    (tmp_path / "my_step.py").write_text(script)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "stub"), str(ROOT)]),
           "PATH": str(tmp_path / "no-tools")}
    done = subprocess.run([sys.executable, "my_step.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("l2attr: error: write_back: Nsight Compute (ncu) is not on PATH"), lines
    assert not (tmp_path / "runs").exists()
