"""The house's size: every module of l2attr short enough to read whole, and no more modules than
issue 26's house left.

Why: issue 26 found 222 modules for what the code does, many of them small files serving one
neighbour; they were folded by job (a module per job, not per function) until there were
MODULE_CEILING. A new job may still need a new module: fold or retire one first. Read from the
tree (no import), so it runs on a CPU in a moment.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "l2attr"

MAX_LINES = 350          # one module, read whole: above this it holds more than one job
# Issue 26's house: the module count it reached. It may only go down (a fold lowers it here); a
# change that needs another module folds one first, so the house does not grow back into 222
# (204 once package markers stopped counting: the kind packages add folders, not jobs).
MODULE_CEILING = 204          # modules with a job: a package marker (docstring only) is not counted


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


def marker(p: Path) -> bool:
    """A package's `__init__.py` that holds only its docstring: it names a folder, it has no job."""
    import ast

    body = ast.parse(p.read_text(encoding="utf-8")).body if p.name == "__init__.py" else [None]
    return all(isinstance(x, ast.Expr) and isinstance(x.value, ast.Constant) for x in body)


def test_the_module_count_is_at_most_the_ceiling() -> None:
    n = len([p for p in modules() if not marker(p)])
    assert n <= MODULE_CEILING, (f"{n} modules under l2attr/, the ceiling is {MODULE_CEILING} (issue 26): "
                                 "fold a module into the neighbour it serves before adding one")


def test_the_checks_see_a_long_module(tmp_path: Path) -> None:
    """The line check on hand-made files whose answer is known (the tree's own pass says nothing
    about whether the check can fail)."""
    short, long = tmp_path / "l2attr" / "short.py", tmp_path / "l2attr" / "long.py"
    short.parent.mkdir()
    short.write_text("x = 1\n" * MAX_LINES)
    long.write_text("x = 1\n" * (MAX_LINES + 1))
    assert too_long([short, long], root=tmp_path) == [f"l2attr/long.py: {MAX_LINES + 1} lines"]
