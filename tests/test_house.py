"""The house's size: every module of l2attr short enough to read whole.

Why: issue 26 found 222 modules for what the code does, many of them small files serving one
neighbour, and held their count under a ceiling; issue 51 gives each run kind a package of its own
(docs/house/README.md), and a package's folders are modules too, so the ceiling is retired for the
layout's own test (tests/test_layers.py: a kind imports no other kind, only the shell reaches a
kind's command, and no import runs up a floor). Read from the tree (no import), so it runs on a CPU
in a moment.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "l2attr"

MAX_LINES = 350          # one module, read whole: above this it holds more than one job


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def too_long(paths: list[Path], root: Path = PACKAGE.parent) -> list[str]:
    """'path: N lines' (relative to `root`) for each module over MAX_LINES lines."""
    out = []
    for p in paths:
        n = len(p.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            out.append(f"{p.relative_to(root)}: {n} lines")
    return out


def test_every_module_is_at_most_max_lines() -> None:
    assert too_long(modules()) == [], f"split by job: no module over {MAX_LINES} lines"


def test_the_checks_see_a_long_module(tmp_path: Path) -> None:
    """The line check on hand-made files whose answer is known (the tree's own pass says nothing
    about whether the check can fail)."""
    short, long = tmp_path / "l2attr" / "short.py", tmp_path / "l2attr" / "long.py"
    short.parent.mkdir()
    short.write_text("x = 1\n" * MAX_LINES)
    long.write_text("x = 1\n" * (MAX_LINES + 1))
    assert too_long([short, long], root=tmp_path) == [f"l2attr/long.py: {MAX_LINES + 1} lines"]
