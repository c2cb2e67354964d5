"""Every closed value set is spelled once, in l2attr/vocab/: nowhere else may a string literal
equal the value of one of its enums (write `Family.TUNED`, or `Family.TUNED.value` where a plain
str is needed), so a renamed or mistyped value fails at import, not as an empty table.

What counts: every `str` constant in `l2attr/**/*.py` outside vocab/ and names.py (the range
names' grammar: its fixed words are the grammar's), except
- docstrings (prose), and the literal parts of f-strings (prose and format text: a value that an
  f-string shows is an expression inside it, and that expression is checked);
- *names*: a string that names a key, a field or a column rather than being a value, where a name
  stands: a subscript (`m["sweep"]`, `df.loc[mask, "profile"]`), `.get("kernels")`,
  `"control" in manifest`, the first argument of argparse's `add_argument` / `add_argument_group`
  and its `dest=`,
  a column argument of a pandas method (`groupby("pin")`), a dict-literal key (unless every key of
  that dict is a value of one enum: then the dict is keyed by that vocabulary, and its keys are
  values), and one of a literal tuple/list/set of column names (one that also holds a declared
  column name that is no value, such as `("family", "rung", "pin")`).
As a value (`role == "pin"`, `{"kind": "profile"}`, `f(x, "consumer")`) it is flagged.
Files another engineer owns for now are skipped (PENDING); words spelled like a value but meaning
something else are listed in ALLOWED with the reason.
"""

from __future__ import annotations

import ast
from enum import Enum
from functools import lru_cache
from pathlib import Path

from l2attr import schema, vocab
from l2attr.sweep import table as tables
from l2attr.sweep.measure import dram

PACKAGE = Path(__file__).resolve().parents[1] / "l2attr"

# Files not yet held to the rule (none now: add one only with the reason, and remove it once converted).
PENDING: set[str] = set()

# (file, literal): the same spelling with another meaning.
ALLOWED: dict[tuple[str, str], str] = {
    # column and field names of the engine's tables and declarations
    ("experiment/analyse/dram.py", "call"): "exp_metrics' call-index column",
    ("experiment/analyse/dram.py", "kernels"): "the call table's kernels-per-call column",
    ("experiment/declare.py", "producer"): "the declaration's attribute name",
    ("experiment/declare.py", "reference"): "the declaration's attribute name",
    ("steps/measure/trace.py", "kernel"): "kineto's event category of a GPU kernel (its word)",
    ("report/html_layer_b.py", "cold"): "a column header: the cold (random) profile, not the step condition",
    ("integrity/manifest.py", "sweep"): "the manifest field sweep (the sweep's settings)",
    ("integrity/runs.py", "name"): "the manifest field gpu.name",
    ("integrity/manifest.py", "name"): "the manifest field name (the run's name)",
    ("steps/declare.py", "name"): "the step options' field name (the run's name)",
    ("report/provenance.py", "memory"): "the label of the GPU's memory size in the provenance table",
    ("ladders/tuning/table.py", "profile"): "the tuning table's profile column",
    ("integrity/tables.py", "profile"): "the samples' and cells' profile column (filled)",
    ("steps/check/rules.py", "kernel"): "step_kernels' and step_dram's kernel-name column (filled)",
    ("steps/check/rules.py", "producer"): "step_edges' producer column (an op index)",
    ("steps/check/rules.py", "consumer"): "step_edges' consumer column (an op index)",
    ("integrity/runs.py", "ladder"): "the first word of a ladder unit's id in units.csv (distribute/units.py)",
    ("analysis/caveats.py", "info"): "a caveat's level (LEVELS: error, warn, info), not `l2attr cache info`",
    ("study/study.py", "info"): "a caveat's level (LEVELS: error, warn, info), not `l2attr cache info`",
    # other tools' words
    ("gpu/runtime.py", "torch"): "the Python module torch",
    ("gpu/device.py", "torch"): "the Python module torch (and its distribution name)",
    ("commands/doctor.py", "torch"): "the Python module torch",
    ("report/provenance.py", "torch"): "the software version of the Python module torch",
    ("profile/nsys.py", "profile"): "nsys's own subcommand (`nsys profile`)",
    ("report/charts.py", "none"): "plotly's template name",
    ("report/charts.py", "line"): "plotly's shape type",
    ("sweep/section/chart.py", "line"): "plotly's shape type",
    # names l2attr gives to other things
    ("source.py", "kernels"): "the kernels/ folder; this file runs standalone at build time (hatch_build.py)",
    ("dlrm/config.py", "artifact"): "the workload preset named after the artifact's shape (a PRESETS key)",
    ("schema.py", "timeline"): "the name of the timeline.csv table",
    ("dlrm/declare.py", "all"): "`--family all` (ALL_FAMILIES): every family, not ncu's `all`",
    ("report/registry.py", "ladder"): "a report section's key (its template and anchor)",
    ("report/registry.py", "amortisation"): "a report section's key (its template and anchor)",
    ("report/registry.py", "timeline"): "a report section's key (its template and anchor)",
    ("sweep/section/html.py", "sweep"): "the report section key of a sweep chapter",
    ("dlrm/workload/__init__.py", "top_k"): "the function top_k in __all__",
    ("dlrm/workload/stats.py", "trace"): "a trace's default display name",
    ("report/provenance.py", "trace"): "the label of the manifest's measure.trace fact",
    ("report/provenance.py", "control"): "the manifest field `control` and the judgement of that name",
    ("report/provenance.py", "kernel"): "the variant table's kernel column (a function name)",
    ("analysis/calls.py", "kernels"): "the call table's column: kernels per call",
    ("analysis/calls.py", "kernel"): "metrics.csv's kernel column, the launch key where no launch column is",
    ("commands/profile.py", "kernels"): "the header of the call table's kernels column",
    ("report/html_layer_b.py", "gap"): "the header of the hot-minus-random hit-rate gap",
    ("report/html_study.py", "name"): "a column header, not ncu's --app-replay-match name",
    # the `profile` column (the reuse profile) by name or header, not a run kind
    ("report/html_layer_b.py", "profile"): "the profile column",
    ("report/columns.py", "profile"): "the profile column (the default key of a grouped table)",
    ("report/html_sections.py", "profile"): "the profile column",
    ("report/results_table.py", "profile"): "the profile column: its header and the record field it is read from",
    ("report/provenance.py", "profile"): "the manifest field `profile` of a timeline run",
    ("sweep/axes/declare.py", "profile"): "the profile column of every sweep table and its header",
    # manifest section and field names read through the model layer (recorded / sections), not vocabulary
    ("experiment/table.py", "experiment"): "the manifest's `experiment` section (the declaration)",
    ("integrity/manifest_fields.py", "cold"): "the graph step's manifest field `cold` (the cold arm's words)",
    ("integrity/manifest_fields.py", "natural"): "the graph step's manifest field `natural`",
    ("manifest_model.py", "model"): "step.facts' `model` (the LLM grid's model name)",
    ("manifest_model.py", "natural"): "the manifest fields `natural` of a graph step and of its surgery",
    ("steps/section/html.py", "cold"): "the step manifest's field `cold` (the cold arm, printed)",
    ("steps/section/text.py", "name"): "the manifest's gpu.name",
    ("sweep/declare.py", "sweep"): "the manifest's `sweep` section",
    ("sweep/load.py", "sweep"): "the manifest's `sweep` section",
}


def _values() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name in dir(vocab):
        enum = getattr(vocab, name)
        if isinstance(enum, type) and issubclass(enum, Enum) and enum.__module__.startswith(vocab.__name__ + "."):
            for member in enum:
                out.setdefault(member.value, []).append(f"{name}.{member.name}")
    return out


def _columns() -> set[str]:
    declared = [t for m in (schema, tables, dram) for t in vars(m).values() if isinstance(t, schema.Table)]
    return {c for t in declared for c in (*t.columns, *t.optional)}


VALUES = _values()
COLUMNS = _columns()
NAMES_ONLY = COLUMNS - set(VALUES)          # column names that are no value: `family`, `rung`, ...
KEY_METHODS = {"get", "pop", "setdefault", "add_argument", "add_argument_group"}   # first argument: a name
COLUMN_METHODS = {"set_index", "groupby", "sort_values", "insert", "drop", "pivot_table", "reindex"}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _keyed_by_vocabulary(d: ast.Dict) -> bool:
    """Two keys or more, every one a constant that is a value of one and the same enum."""
    keys = [k.value if isinstance(k, ast.Constant) else None for k in d.keys]
    if len(keys) < 2 or not all(isinstance(k, str) and k in VALUES for k in keys):
        return False
    enums = [{e.split(".")[0] for e in VALUES[k]} for k in keys]
    return bool(set.intersection(*enums))


def _is_name(node: ast.Constant, parent: ast.AST | None, grand: ast.AST | None) -> bool:
    if isinstance(parent, ast.Subscript) and parent.slice is node:
        return True
    if isinstance(parent, ast.Tuple) and isinstance(grand, ast.Subscript) and grand.slice is parent:
        return True                                  # `df.loc[mask, "profile"]`
    if isinstance(parent, ast.Dict) and any(k is node for k in parent.keys):
        return not _keyed_by_vocabulary(parent)
    if isinstance(parent, ast.Compare) and parent.left is node and isinstance(parent.ops[0], (ast.In, ast.NotIn)):
        return True                                  # `"control" in manifest`
    if isinstance(parent, ast.keyword) and parent.arg == "dest":
        return True                                  # argparse's `dest="control"`
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute):
        if parent.func.attr in KEY_METHODS and parent.args and parent.args[0] is node:
            return True
        if parent.func.attr in COLUMN_METHODS and node.value in COLUMNS and any(a is node for a in parent.args):
            return True                              # pandas methods that take column names
    if isinstance(parent, (ast.Tuple, ast.List, ast.Set)) and node.value in COLUMNS:
        return any(isinstance(e, ast.Constant) and e.value in NAMES_ONLY for e in parent.elts)
    return False


@lru_cache(maxsize=None)     # both rules read every file: parse each once per test process
def vocabulary_literals(path: Path) -> list[tuple[int, str]]:
    """(line, literal) of every string constant in `path` that spells a vocab value."""
    tree = ast.parse(path.read_text())
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    skip = _docstrings(tree) | {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in VALUES
                and id(node) not in skip
                and not _is_name(node, parents.get(id(node)), parents.get(id(parents.get(id(node)))))):
            found.append((node.lineno, node.value))
    return sorted(found)


def test_no_vocabulary_value_is_spelled_outside_vocab() -> None:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("vocab/") or rel == "names.py" or rel in PENDING:
            continue
        bad += [f"l2attr/{rel}:{line}: {value!r} is {' or '.join(VALUES[value])}"
                for line, value in vocabulary_literals(path) if (rel, value) not in ALLOWED]
    assert bad == [], f"{len(bad)} literals:\n" + "\n".join(bad)


def test_every_allowed_entry_is_still_needed() -> None:
    """An entry whose literal has gone leaves the list (it would hide a new one)."""
    stale = [key for key in ALLOWED if key[1] not in {v for _, v in vocabulary_literals(PACKAGE / key[0])}]
    assert stale == []


def test_pending_files_exist() -> None:
    assert all((PACKAGE / rel).is_file() for rel in PENDING)


def test_the_rule_sees_what_it_should(tmp_path: Path) -> None:
    """A value is flagged in a comparison or a call; a column name is not, where a name stands."""
    sample = tmp_path / "sample.py"
    sample.write_text('"""doc: tuned"""\n'
                      'a = df[df["role"] == "pin"]\n'        # a value: flagged
                      'b = row["pin"]\n'                     # the pin column: a name
                      'c = ("family", "rung", "pin")\n'      # column names
                      'd = ("consumer", "pin")\n'            # values
                      'e = f"{x} tuned"\n'                   # f-string text: prose
                      'g = {"pin": 1, "kind": "tuned"}\n'   # a key, then a value
                      'h = {"pin": "x", "consumer": "y"}\n')  # keyed by Role: values
    assert vocabulary_literals(sample) == [(2, "pin"), (5, "consumer"), (5, "pin"), (7, "tuned"),
                                           (8, "consumer"), (8, "pin")]
