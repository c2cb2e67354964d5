"""Find the shipped data folders (kernels/, metrics/, reports/) in a wheel or a source checkout."""

from __future__ import annotations

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
