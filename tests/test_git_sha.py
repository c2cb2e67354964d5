"""git_sha() always says something: the checkout's sha, the sha recorded at build, or why not."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

from l2attr import source
from l2attr.gpu import device


@pytest.fixture
def no_build_info(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a source copy: no l2attr/_build_info.py to fall back on."""
    monkeypatch.setitem(sys.modules, "l2attr._build_info", None)      # import raises ImportError


def test_unknown_with_reason_without_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_build_info) -> None:
    (tmp_path / "l2attr").mkdir()
    monkeypatch.setattr(device, "PACKAGE", tmp_path / "l2attr")
    assert device.git_sha() == "unknown (no .git next to the package; source_digest identifies the code)"


def test_recorded_build_sha_without_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "l2attr").mkdir()
    monkeypatch.setattr(device, "PACKAGE", tmp_path / "l2attr")
    monkeypatch.setitem(sys.modules, "l2attr._build_info", types.SimpleNamespace(GIT_SHA="0123456789ab"))
    assert device.git_sha() == "0123456789ab"


def test_git_not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_build_info) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "l2attr").mkdir()
    monkeypatch.setattr(device, "PACKAGE", tmp_path / "l2attr")
    monkeypatch.setattr(source.shutil, "which", lambda name: None)
    assert device.git_sha() == "unknown (git is not installed; source_digest identifies the code)"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.skipif(source.shutil.which("git") is None, reason="git not installed")
def test_checkout_sha_and_dirty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_build_info) -> None:
    (tmp_path / "l2attr").mkdir()
    (tmp_path / "l2attr" / "x.py").write_text("A = 1\n")
    (tmp_path / "notes.txt").write_text("n\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "one")
    head = _git(tmp_path, "rev-parse", "--short=12", "HEAD")
    monkeypatch.setattr(device, "PACKAGE", tmp_path / "l2attr")
    assert device.git_sha() == head
    (tmp_path / "notes.txt").write_text("changed, but not code\n")
    assert device.git_sha() == head
    (tmp_path / "l2attr" / "x.py").write_text("A = 2\n")
    assert device.git_sha() == f"{head}-dirty"
