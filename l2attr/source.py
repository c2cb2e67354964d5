"""Where the code that runs comes from: the shipped data folders (kernels/, metrics/, reports/) in a
wheel or a source checkout, and the checkout's git commit.

Why one module, with the standard library only: both answer "which sources are these" from the
files beside the package, at run time (`gpu.device.git_sha` and `source_digest`, for the run
manifest) and at build time, where the hatch hook in `hatch_build.py` loads this file by path to
record the sha in the wheel (no l2attr import works there).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

_PKG = Path(__file__).resolve().parent
KERNELS_DIR, METRICS_DIR, REPORTS_DIR = "kernels", "metrics", "reports"   # the folders' names


def data_dir(name: str) -> Path:
    """Return the folder `name` (kernels, metrics or reports).

    An installed wheel carries them under l2attr/_data/; a source checkout (editable install,
    PYTHONPATH) has them beside the package at the repository root.
    """
    for candidate in (_PKG / "_data" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"l2attr data folder '{name}' not found next to {_PKG}")


# The folders whose tracked files make the code that runs (the rest do not change a number).
SOURCE_FOLDERS = ("l2attr", "kernels", "metrics")


def _git(repo: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def checkout_sha(repo: Path, folders: tuple[str, ...] = SOURCE_FOLDERS) -> tuple[str | None, str]:
    """(HEAD's short sha, with `-dirty` when the tracked files under `folders` (the sources by
    default) differ from it, so never a sha that claims code which did not run; '') or (None, why
    there is none)."""
    if not (repo / ".git").exists():
        return None, "no .git next to the package"
    if shutil.which("git") is None:
        return None, "git is not installed"
    sha = _git(repo, "rev-parse", "--short=12", "HEAD")
    if not sha:
        return None, f"git rev-parse HEAD failed in {repo}"
    dirty = _git(repo, "status", "--porcelain", "--untracked-files=no", "--", *folders)
    return (f"{sha}-dirty" if dirty else sha), ""
