"""Every import of l2attr names a module and a name that exist, the lazy ones inside functions too.

Why: much of l2attr's GPU code imports inside functions (so `import l2attr` and the CLI stay cheap
on a CPU), and those lines run only on a GPU. A module moved or a name renamed would break them
where no CPU test reaches; this reads the imports from the source (no import is executed) and
checks each against the tree, so a move shows here, on a CPU, before the next device call.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("l2attr", "tools", "benchmarks", "examples", "tests")


def module_file(name: str, root: Path = ROOT) -> Path | None:
    """The source of a dotted l2attr module (a package's __init__.py), or None."""
    base = root.joinpath(*name.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


@lru_cache(maxsize=None)
def defined(path: Path) -> tuple[frozenset[str], bool]:
    """The names a module defines at its top level (assignments, defs, classes, imports), and
    whether it has a module __getattr__ (then any name may resolve)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    dynamic = False
    for node in tree.body:
        for sub in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(sub.name)
                dynamic |= sub.name == "__getattr__"
            elif isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                for t in targets:
                    names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in sub.names}
            elif isinstance(sub, (ast.For, ast.With)):
                names |= {n.id for n in ast.walk(sub) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return frozenset(names), dynamic


def broken_imports(path: Path, root: Path = ROOT) -> list[str]:
    """'file:line: what' for each l2attr import in `path` that names no module or no name."""
    out = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rel = path.relative_to(root) if path.is_relative_to(root) else path
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "l2attr" and module_file(a.name, root) is None:
                    out.append(f"{rel}:{node.lineno}: no module {a.name}")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "l2attr":
            src = module_file(node.module, root)
            if src is None:
                out.append(f"{rel}:{node.lineno}: no module {node.module}")
                continue
            names, dynamic = defined(src)
            for a in node.names:
                if a.name == "*" or a.name in names or dynamic or module_file(f"{node.module}.{a.name}", root):
                    continue
                out.append(f"{rel}:{node.lineno}: {node.module} has no {a.name}")
    return out


def test_the_checker_by_hand(tmp_path: Path) -> None:
    pkg = tmp_path / "l2attr"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("def __getattr__(name): ...\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "mod.py").write_text("A = 1\ndef f(): ...\nif True:\n    B = 2\n")
    user = tmp_path / "user.py"
    user.write_text("def g():\n    from l2attr.sub.mod import A, B, f, C\n    from l2attr.sub import mod\n"
                    "    import l2attr.sub.gone\n    from l2attr.moved import x\n    from l2attr import anything\n")
    assert broken_imports(user, tmp_path) == ["user.py:2: l2attr.sub.mod has no C", "user.py:4: no module l2attr.sub.gone",
                                              "user.py:5: no module l2attr.moved"]


@pytest.mark.parametrize("top", SCANNED)
def test_every_l2attr_import_resolves(top: str) -> None:
    found = [line for p in sorted((ROOT / top).rglob("*.py")) for line in broken_imports(p)]
    assert not found, "imports that name nothing (a moved module or a renamed name): " + "; ".join(found)
