"""No new raw manifest read outside the model layer (issue 52: every field a reader uses is typed;
each battery found a field a new feature read before any rule typed it). A ratchet: RAW holds
today's count of raw reads per module; a module's count may fall, never grow, and a module not
listed may hold none.

The rule, read from the code (ast), per function (a nested function sees its parents' names):
  a manifest value is
    - a call `read_manifest(...)`, `load_manifest(...)` or `<anything>.manifest()`;
    - a name bound (`=`, `:=`, annotated) to such a call;
    - a name `manifest` (parameter or variable), or a parameter named `m` / `mf` annotated as a
      dict or Mapping (the house's short name for a run's manifest);
    - an attribute `<x>.manifest` (a run's, an answer's: analysis/load.py Run, sweep/load.py SweepRun,
      steps/analyse/answer.py StepAnswer hold the manifest dict under that name);
  a raw read is a subscript `v[...]` (read, not written) or a call `v.get(...)` whose object is
  such a value. Reads of what those return (`m.get("surgery")["x"]`) are not counted again: the
  first read is the untyped one.
The model layer, where raw reads are the point: integrity/manifest*.py (the rules), typed.py,
rundir.py (the file), schema.py, the ladder's options model (dlrm/measure/options.py), the readers'
models (manifest_model.py: typed, recorded, sections).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "l2attr"
MODEL_LAYER = ("integrity/manifest.py", "integrity/manifest_fields.py", "manifest_model.py", "typed.py",
               "rundir.py", "schema.py", "dlrm/measure/options.py")
SOURCES = {"read_manifest", "load_manifest", "manifest"}
SHORT = {"m", "mf"}

# today's offenders (module -> raw reads); lower a count when a module moves to its model
RAW: dict[str, int] = {
    # `<x>.manifest[...]` / `<x>.manifest.get(...)`, counted since the rule saw a held manifest
}


def _source(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Name) and f.id in SOURCES and f.id != "manifest") or (
        isinstance(f, ast.Attribute) and f.attr in SOURCES)


def _held(node: ast.AST) -> bool:
    """`<x>.manifest`: the manifest a run or an answer holds (SweepRun, StepAnswer, analysis Run)."""
    return isinstance(node, ast.Attribute) and node.attr == "manifest"


def _names(scope: ast.AST) -> set[str]:
    """The names that hold a manifest in this scope (the rule above)."""
    got = {"manifest"}
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = scope.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
            hint = ast.unparse(arg.annotation) if arg.annotation is not None else ""
            if arg.arg in SHORT and ("dict" in hint or "Mapping" in hint):
                got.add(arg.arg)
    binds = [(t.id, n.value) for n in ast.walk(scope) if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name)]
    binds += [(n.target.id, n.value) for n in ast.walk(scope) if isinstance(n, (ast.AnnAssign, ast.NamedExpr))
              and n.value is not None and isinstance(n.target, ast.Name)]

    def holds(v: ast.AST) -> bool:
        if isinstance(v, ast.BoolOp) and isinstance(v.op, ast.Or):
            v = v.values[0]                        # `manifest or {}`
        return _source(v) or (isinstance(v, ast.Name) and v.id in got)
    while True:                                    # `m = manifest or {}`; `mf = m`: to a fixed point
        more = {name for name, value in binds if name not in got and holds(value)}
        if not more:
            return got
        got |= more


def raw_reads(tree: ast.Module) -> int:
    """How many raw manifest reads a module holds (each read node counted once)."""
    seen: set[int] = set()
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        names = _names(scope)

        def raw(x: ast.AST) -> bool:
            return (isinstance(x, ast.Name) and x.id in names) or _source(x) or _held(x)
        for node in ast.walk(scope):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and raw(node.value):
                seen.add(id(node))
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                  and raw(node.func.value)):
                seen.add(id(node))
    return len(seen)


# a module none of whose lines could make a manifest value is not parsed (the scan stays fast)
MAYBE = re.compile(r"manifest(?:\s*[\[(]|\.get\(| or\b)|\bmf?: (?:dict|Mapping)")


def counts() -> dict[str, int]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel, text = path.relative_to(PACKAGE).as_posix(), path.read_text()
        if rel in MODEL_LAYER or not MAYBE.search(text):
            continue
        n = raw_reads(ast.parse(text, str(path)))
        if n:
            out[rel] = n
    return out


def test_no_module_reads_more_of_a_raw_manifest_than_it_did() -> None:
    grown = {f: n for f, n in counts().items() if n > RAW.get(f, 0)}
    assert not grown, ("raw manifest reads outside the model layer grew (read the field through its typed "
                       "model, manifest_model.py's typed / recorded / sections, declaring it there if no model does): "
                       + ", ".join(f"{f}: {n} (ratchet {RAW.get(f, 0)})" for f, n in sorted(grown.items())))


def test_the_rule_sees_each_form() -> None:
    code = '''
def f(manifest, m: dict[str, Any], x, mf: Mapping[str, Any] = None):
    run = RunDir.open(p)
    got = run.manifest()
    n = manifest or {}
    a = n["kind"]; b = m.get("step"); c = got["surgery"]; d = run.manifest()["gpu"]
    e = read_manifest(p).get("kind"); g = mf["x"]
    manifest["written"] = 1          # a write is not a read
    h = x["kind"]; i = x.get("kind")  # not a manifest
    return m.get("step")["repeats"]   # one read: the first
'''
    assert raw_reads(ast.parse(code)) == 7


def test_the_rule_sees_a_manifest_a_run_holds() -> None:
    code = '''
def f(run, ans, runs, opts, obj):
    a = run.manifest.get("kind"); b = ans.manifest["step"]; c = runs[0].manifest.get("gpu")
    run.manifest["x"] = 1                  # a write is not a read
    d = run.manifest                       # held, not read
    e = opts.manifest()                    # the options' section as written: not read here
    g = "step" in run.manifest             # a membership test reads no field
    h = obj.manifests.get("x"); i = run.manifest_path["x"]; j = run.manifest_of("x")   # other names
    return (an.run.manifest.get("step") or {}).get("mode")    # one read: the first
'''
    assert raw_reads(ast.parse(code)) == 4
