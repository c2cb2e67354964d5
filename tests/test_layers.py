"""The house's floors: which part of l2attr may import which, and no module in a circle.

Read from the code's own import statements (those inside functions too: a lazy import is still
a dependency), so a change that breaks a rule fails here, on a CPU, before anyone draws the
structure. A part is a top-level module or package of l2attr; each stands on a floor and may
import only parts on its own floor or below.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "l2attr"

# Lowest first. The engine (measure, profile, experiment) knows no workload: the DLRM EmbeddingBag
# ladder is a package on top of it (`dlrm`: declarations, inputs, kernels, its measurement, profile
# plan and sweeps). Producers never import the readers (analysis, report); analysis and report stand on
# `dlrm` only to read its declarations (rung labels, families) and its sweep tables' schemas.
# `distribute` (many GPUs, Dask) splits the ladder's runs into units and writes what its workers
# return: above the ladder, below everything that reads runs.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("__init__", "vocab", "errors", "atomic", "source", "safe_read"),
    ("names", "catalog", "schema", "csvfile", "outputs", "typed", "manifest_model"),
    ("rundir", "gpu"),
    ("measure", "profile"),
    ("experiment", "steps"),
    ("dlrm",),
    ("distribute",),
    ("integrity",),
    ("analysis",),
    ("report",),
    ("api", "commands", "cli", "__main__"),
)
FLOOR = {part: i for i, parts in enumerate(FLOORS) for part in parts}

# Parts that must never reach each other, whatever the floors say.
NEVER = (
    ("analysis", "profile", "the metric catalog is l2attr.catalog: analysis never imports the profiler"),
    ("profile", "analysis", "profile/ records inputs; judging is analysis's"),
    ("profile", "report", "profile/ prints nothing and renders nothing"),
    ("measure", "dlrm", "the engine's cell protocol and timers know no workload"),
    ("profile", "dlrm", "the engine's Nsight Compute layer knows no workload"),
    ("experiment", "dlrm", "a user's experiment never reaches into the EmbeddingBag ladder"),
    ("steps", "dlrm", "the step engine knows no workload"),
)
# (importing file, imported module): held until its owner moves it. analysis/load.py is being split
# by issue 20; its one import of the catalog should then read `from l2attr.catalog.sets import ...`.
PENDING: set[tuple[str, str]] = set()


def _module_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@lru_cache(maxsize=None)     # the tree is read once per test process: every test asks
def _modules() -> dict[str, Path]:
    return {_module_of(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The l2attr modules `path` imports (a `from pkg import name` that names a submodule counts
    as importing the submodule)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "l2attr"}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "l2attr":
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                out.add(sub if sub in modules else node.module)
    return {m for m in out if m in modules}


@lru_cache(maxsize=None)
def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, modules) - {name} for name, path in modules.items()}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _rel(module: str) -> str:
    return str(_modules()[module].relative_to(PACKAGE))


def test_every_part_has_a_floor() -> None:
    assert sorted({_part(m) for m in _graph()} - set(FLOOR)) == []


def test_no_import_runs_up_a_floor() -> None:
    up = [f"{_rel(a)} -> {b} ({_part(a)} floor {FLOOR[_part(a)]}, {_part(b)} floor {FLOOR[_part(b)]})"
          for a, targets in _graph().items() for b in sorted(targets)
          if FLOOR[_part(b)] > FLOOR[_part(a)] and (_rel(a), b) not in PENDING]
    assert up == []


@pytest.mark.parametrize("low, high, why", NEVER)
def test_never(low: str, high: str, why: str) -> None:
    found = [f"{_rel(a)} -> {b}" for a, targets in _graph().items() if _part(a) == low
             for b in sorted(targets) if _part(b) == high and (_rel(a), b) not in PENDING]
    assert found == [], why


def test_pending_entries_still_exist() -> None:
    """An entry the owner has fixed must leave the list."""
    graph = _graph()
    stale = [(f, m) for f, m in PENDING if m not in graph[_module_of(PACKAGE / f)]]
    assert stale == []


def test_no_module_imports_itself_through_others() -> None:
    """No circle of modules (Tarjan's strongly connected components of the import graph)."""
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert circles == []


def test_no_argparse_namespace_below_the_command_layer() -> None:
    """Issue 51: the command layer (cli.py, commands/) turns flags into each kind's typed options;
    nothing below it takes or rewrites an argparse Namespace."""
    below = [p for p in sorted(PACKAGE.rglob("*.py"))
             if p.name != "cli.py" and "commands" not in p.relative_to(PACKAGE).parts]
    assert [str(p.relative_to(PACKAGE)) for p in below if "Namespace" in p.read_text()] == []
