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
# ladder is a package on top of it (`dlrm`: declarations, inputs, kernels, its measurement and profile
# plan). Producers never import the readers (analysis, report); analysis and report stand on `dlrm`
# only to read its declarations (rung labels, families).
# `distribute` (many GPUs, Dask) splits the ladder's runs into units and writes what its workers
# return: above the ladder, below everything that reads runs. A run kind moved into its own package
# (issue 51, docs/house/README.md: `sweep`) holds its whole flow, from its command to its page
# sections: it stands on the readers and under the verbs, until core/ gathers what it shares.
# `study` (the cross-run study: `analyse`, the families, the README's findings, LadderResult) reads
# the kinds' analyses, so it stands above them and under the report.
# `kinds` (the registry of run kinds) stands above every kind and under the shell that finds a kind
# through it (docs/house/README.md rule 3).
FLOORS: tuple[tuple[str, ...], ...] = (
    ("__init__", "vocab", "errors", "atomic", "source", "safe_read"),
    ("names", "catalog", "schema", "csvfile", "outputs", "typed", "manifest_model"),
    ("rundir", "gpu", "annotation", "flags"),
    ("measure", "profile"),
    ("experiment", "experiment.declare", "experiment.measure", "experiment.profile",
     "steps", "steps.declare", "steps.measure", "ladders"),
    ("dlrm",),
    ("distribute", "ladders.measure", "ladders.table"),
    ("integrity", "experiment.check", "steps.check"),
    ("analysis", "experiment.table", "experiment.analyse", "experiment.result", "steps.table", "steps.analyse",
     "ladders.analyse", "ladders.tuning.table"),
    ("study",),
    ("report", "experiment.section", "steps.section", "ladders.section"),
    ("sweep", "experiment.api"),
    ("kinds",),
    ("api", "commands", "cli", "__main__", "experiment.command", "steps.command", "ladders.command",
     "ladders.tuning.command"),
)
# A kind package (issue 51) holds its flow's stages; each stage stands on the floor of the layer it
# belongs to (declare and measure with the engine, check with integrity, table and analyse with the
# readers, section with the report, command with the commands), so a producer still never imports a
# reader inside the kind.
# The ladder measures the DLRM testbed (`dlrm`) and splits its runs over workers (`distribute`), so
# its measure stands on the distribute floor; its table (samples.csv as each cell ends, then
# cells.csv) is written while it measures, so it stands beside its measure, under the readers.
# A family inside a kind (the ladder's `tuning/`: the fast family's tuning table) has stages of its
# own, each on its layer's floor like the kind's.
STAGED = ("steps", "ladders", "experiment")      # kinds whose stages stand on their layers' floors
FAMILIES = {"ladders": ("tuning",)}
FLOOR = {part: i for i, parts in enumerate(FLOORS) for part in parts}

# Parts that must never reach each other, whatever the floors say.
NEVER = (
    ("analysis", "profile", "the metric catalog is l2attr.catalog: analysis never imports the profiler"),
    ("profile", "analysis", "profile/ records inputs; judging is analysis's"),
    ("profile", "report", "profile/ prints nothing and renders nothing"),
    ("measure", "dlrm", "the engine's cell protocol and timers know no workload"),
    ("profile", "dlrm", "the engine's Nsight Compute layer knows no workload"),
    ("experiment", "dlrm", "a user's experiment never reaches into the EmbeddingBag ladder"),
    ("steps.measure", "dlrm", "the step engine knows no workload"),
    ("steps.declare", "dlrm", "the step engine knows no workload"),
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
    if len(parts) > 3 and parts[1] in STAGED and parts[2] in FAMILIES.get(parts[1], ()):
        return ".".join(parts[1:4])
    if len(parts) == 3 and parts[2] in FAMILIES.get(parts[1], ()):
        return parts[1]          # a family's __init__ stands with its kind's
    if len(parts) > 2 and parts[1] in STAGED:
        return f"{parts[1]}.{parts[2]}"
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
    found = [f"{_rel(a)} -> {b}" for a, targets in _graph().items()
             if _part(a) == low or ("." not in low and _part(a).startswith(f"{low}."))
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
    """Issue 51: the command layer (cli.py, commands/, a kind's command.py) turns flags into each
    kind's typed options; nothing below it takes or rewrites an argparse Namespace."""
    below = [p for p in sorted(PACKAGE.rglob("*.py"))       # flags.py: the parser the command layer uses
             if p.name != "cli.py" and _module_of(p) != "l2attr.flags"
             and "commands" not in p.relative_to(PACKAGE).parts
             and _module_of(p) not in _command_modules(_graph())]
    assert [str(p.relative_to(PACKAGE)) for p in below if "Namespace" in p.read_text()] == []


# -- the kinds (issue 51, docs/house/README.md): one package per run kind --------------------------
# The house's layout test, in place of a ceiling on the module count: a kind imports no other kind,
# and only the shell (the CLI, the verbs of no kind, the API) reaches a kind's command module.
# The kinds that have a package today (`steps` and `ladders` keep their plural: `l2attr.step` and
# `l2attr.ladder` are verbs).
KINDS = ("sweep", "experiment", "steps", "ladders")
SHELL = ("cli", "commands", "api", "__main__")
# (importing file, imported module): a crossing held until its owner moves it (none today: the
# shared pieces the step kind used from the experiment's package are below the kinds, in
# annotation.py, measure/verbs.py and profile/runner.py).
PENDING_KINDS: set[tuple[str, str]] = set()


def _kind(module: str) -> str:
    """The top-level package a module is in (its kind, where it is one)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _command_modules(graph: dict[str, set[str]]) -> set[str]:
    """Each kind's command: commands/<verb>.py, or <kind>/command.py once the kind has its package
    (and <kind>/<family>/command.py for a family of its own verb: `l2attr tuning`)."""
    return {m for m in graph if m.startswith("l2attr.commands.")
            or (_kind(m) in KINDS and m == f"l2attr.{_kind(m)}.command")
            or (_kind(m) in KINDS and any(m == f"l2attr.{_kind(m)}.{f}.command" for f in FAMILIES.get(_kind(m), ())))}


def kind_crossings(graph: dict[str, set[str]], kinds: tuple[str, ...] = KINDS) -> list[str]:
    """'a -> b' for each import from one kind's package into another's."""
    return [f"{a} -> {b}" for a, targets in sorted(graph.items()) for b in sorted(targets)
            if _kind(a) in kinds and _kind(b) in kinds and _kind(a) != _kind(b)]


def command_reaches(graph: dict[str, set[str]]) -> list[str]:
    """'a -> b' for each import of a command module from outside the shell (a kind's own stages
    included: its command stands on them, never under them)."""
    commands = _command_modules(graph)
    return [f"{a} -> {b}" for a, targets in sorted(graph.items()) for b in sorted(targets & commands)
            if _kind(a) not in SHELL]


def test_a_kind_imports_no_other_kind() -> None:
    pending = {f"{_module_of(PACKAGE / f)} -> {m}" for f, m in PENDING_KINDS}
    assert [c for c in kind_crossings(_graph()) if c not in pending] == []


def test_pending_kind_crossings_still_exist() -> None:
    """A crossing its owner has removed must leave PENDING_KINDS."""
    assert [(f, m) for f, m in PENDING_KINDS if m not in _graph()[_module_of(PACKAGE / f)]] == []


def test_only_the_shell_imports_a_kinds_command() -> None:
    assert command_reaches(_graph()) == []


def test_the_kind_checks_see_a_break() -> None:
    """The two rules on a hand-made graph whose answer is known (the tree's own pass says nothing
    about whether the checks can fail)."""
    graph = {"l2attr.sweep.declare": {"l2attr.experiment.declare", "l2attr.typed"},
             "l2attr.sweep.measure.run": {"l2attr.sweep.command"}, "l2attr.sweep.command": {"l2attr.sweep.declare"},
             "l2attr.experiment.declare": set(), "l2attr.typed": set(),
             "l2attr.report.html": {"l2attr.commands.report"}, "l2attr.commands.report": set(),
             "l2attr.cli": {"l2attr.sweep.command"}}
    assert kind_crossings(graph) == ["l2attr.sweep.declare -> l2attr.experiment.declare"]
    assert command_reaches(graph) == ["l2attr.report.html -> l2attr.commands.report",
                                      "l2attr.sweep.measure.run -> l2attr.sweep.command"]


def shadowed(api: dict[str, str], packages: set[str]) -> list[str]:
    """The API's lazy names that a subpackage of the same name would replace: importing
    `l2attr.X.anything` sets `l2attr.X` to the package, and `l2attr.X(...)` is then a module."""
    return sorted(set(api) & packages)


def test_no_package_shadows_a_verb_of_the_api() -> None:
    """Why the step kind's package is `steps` and the ladder's `ladders`: `l2attr.step` and
    `l2attr.ladder` are verbs (l2attr/__init__.py _API); and why `l2attr.annotate` lives in
    annotation.py: a module l2attr/annotate.py would replace the verb once anything imported it."""
    import l2attr

    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")} | {p.stem for p in PACKAGE.glob("*.py")}
    assert shadowed(l2attr._API, packages) == []
    assert shadowed({"step": "l2attr.api", "sweep": "x"}, {"steps", "step", "dlrm"}) == ["step"]
