"""The git commit of a source tree, with the standard library only.

Used at run time (`gpu.device.git_sha`, for the run manifest) and at build time by the hatch
hook in `hatch_build.py`, which loads this file by path to record the sha in the wheel.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

# The folders whose tracked files make the code that runs (the rest do not change a number).
SOURCE_FOLDERS = ("l2attr", "kernels", "metrics")


def _git(repo: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def checkout_sha(repo: Path) -> tuple[str | None, str]:
    """(HEAD's short sha, with `-dirty` when the tracked sources differ from it, so never a sha that
    claims code which did not run; '') or (None, why there is none)."""
    if not (repo / ".git").exists():
        return None, "no .git next to the package"
    if shutil.which("git") is None:
        return None, "git is not installed"
    sha = _git(repo, "rev-parse", "--short=12", "HEAD")
    if not sha:
        return None, f"git rev-parse HEAD failed in {repo}"
    dirty = _git(repo, "status", "--porcelain", "--untracked-files=no", "--", *SOURCE_FOLDERS)
    return (f"{sha}-dirty" if dirty else sha), ""
