"""Damage any committed run dir the way an editor, a cut or a bad disk would, and read it back.

Shared by tests/test_properties_runs.py (Hypothesis draws the damage) and its kept regression
cases (tests/test_runs_mutated.py). One small committed run of each kind is copied into a fresh
folder per example; the mutation is applied there; the readers (`l2attr report --format md` and,
where the kind has one, its `show`) run in-process; and the outcome is classed: refused (non-zero
exit, one line naming a file of the run and the rule), unchanged (exit 0, output as the intact
run's), or caveated (exit 0 with a warning line). Anything else is a finding.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from hypothesis import strategies as st

from l2attr.cli import main

REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples"

# one small committed run of each kind (the smallest that kind has)
RUNS: dict[str, Path] = {
    "ladder": EX / "20261130T232557Z-fast-pin-element",
    "profile": EX / "session4" / "20261202T004856Z-profile-small",
    "timeline": EX / "reproduction" / "20261201T173405Z-timeline",
    "sweep": EX / "20261130T215547Z-bench-window",
    "experiment": EX / "experiments" / "20261201T163314Z-my-pair",
    "step": EX / "steps" / "runs" / "20261201T170613Z-selfcheck-quarter-l2-marked",
    "step-surgery": EX / "steps" / "surgery" / "20261202T160528Z-selfcheck-quarter-l2",   # graph surgery, kernel-level edges
    "distributed": EX / "distribute" / "20261201T205742Z-workers1",
}

# further runs the kept regression cases damage (not drawn from by the property test)
EXTRA: dict[str, Path] = {"step-edges": EX / "steps" / "runs" / "20261201T201821Z-selfcheck-quarter-l2",
                          "hotset": EX / "20261130T220503Z-hotset-dram",
                          "step-graph": EX / "steps" / "runs" / "20261201T201822Z-selfcheck-quarter-l2-graph",
                          # a surgery run with the matched arm, the eager loop and the control (issue 52)
                          "step-matched": EX / "steps" / "hf_grid" / "20261205T185755Z-llama-decode-b1-kv512"}

# what `show` each kind has (argv before the run dir)
SHOW: dict[str, list[str]] = {"experiment": ["experiment", "show"], "step": ["step", "--show"]}

# free-text names no contract can check (nothing else in the run repeats them): not drawn
FREE_TEXT = {"step_ops.csv": ("op", "module")}

# cell values no writer writes: other types, signs, magnitudes, NaN
# (no plausible value: a finite positive number in range is a measurement no contract can tell
# from the one it replaced; 1.5 only where a whole number is due)
HOSTILE = ("", "nan", "NaN", "inf", "-inf", "-5", "-1", "1e300", "-1e300", "1e19", "abc", "True",
           '{"a": 1}', "[1, 2]", "0x10", " ", "9" * 400)
# JSON values of every type, for manifest fields
JSON_VALUES: tuple[Any, ...] = (None, True, False, 0, -1, 1.5, -1e300, 1e308, 10 ** 30, "", "x", "-5",
                                [], [1, "a"], {}, {"a": 1}, [[[]]])


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


def read_table(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False, compression="infer")


def write_table(path: Path, df: pd.DataFrame) -> None:
    text = df.to_csv(index=False)
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode(), compresslevel=1, mtime=0))   # level 1: fast, read the same
    else:
        path.write_text(text)


def tables(run: Path) -> list[Path]:
    return sorted(p for p in run.iterdir() if p.name.endswith((".csv", ".csv.gz")))


def digest(run: Path) -> dict[str, str]:
    return {str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(run.rglob("*")) if p.is_file()}


def copy_run(kind: str, into: Path) -> Path:
    src = RUNS.get(kind) or EXTRA[kind]
    run = into / src.name
    shutil.copytree(src, run)
    return run


def fields(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into a JSON value (dict keys and list positions), the root's children first."""
    out: list[tuple] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        out.append((*prefix, k))
        out.extend(fields(v, (*prefix, k)))
    return out


def set_field(manifest: dict, path: tuple, value: Any, delete: bool = False) -> None:
    node: Any = manifest
    for part in path[:-1]:
        node = node[part]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value


def same_type(a: Any, b: Any) -> bool:
    number = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b)
    return (isinstance(a, number) and isinstance(b, number)) or type(a) is type(b)


def read(argv: list[str]) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return Outcome(code, out.getvalue(), err.getvalue())


def readers(kind: str, run: Path, output: Path) -> list[list[str]]:
    argv = [["report", str(run), "--format", "md", "-o", str(output)]]
    if kind.split("-")[0] in SHOW:
        argv.append([*SHOW[kind.split("-")[0]], str(run)])
    return argv


def normal(text: str, run: Path) -> str:
    return text.replace(str(run.parent), "<RUNS>")


def run_readers(kind: str, run: Path) -> list[tuple[Outcome, str]]:
    """Each reader's outcome and (for report) the file it wrote, paths made relative."""
    results = []
    for argv in readers(kind, run, run.parent / "out.md"):
        out = run.parent / "out.md"
        out.unlink(missing_ok=True)
        o = read(argv)
        written = out.read_text() if out.is_file() else ""
        results.append((Outcome(o.code, normal(o.out, run), normal(o.err, run)), normal(written, run)))
    return results


def judge(kind: str, run: Path, intact: list[tuple[Outcome, str]], got: list[tuple[Outcome, str]],
          mutated: str) -> None:
    """Assert the three allowed outcomes for each reader."""
    names = {p.name for p in run.rglob("*")} | {run.name, "manifest.json"}
    for (want, want_file), (o, written) in zip(intact, got):
        lines = [x for x in o.err.splitlines() if x.strip()]
        if o.code != 0:
            assert "Traceback" not in o.err, o.err
            errors = [x for x in lines if ": error: " in x]
            assert len(errors) == 1, f"{mutated}: expected one error line, got {lines}"
            assert any(n in errors[0] for n in names), f"{mutated}: the line names no file of the run: {errors[0]}"
            continue
        caveat = any("warning" in x or "caveat" in x for x in lines) or said(want.out, o.out)
        same = (o.out == want.out and written == want_file)
        assert same or caveat, (f"{mutated}: exit 0, output differs from the intact run's and no caveat\n"
                                f"{_diff(want.out + want_file, o.out + written)}")


# what an answer that lost a piece of its run opens with (steps/analyse/split.py losses)
SAID = ("no eager loop recorded", "no control kernel recorded", "no rewarmed arms recorded")


def said(intact: str, got: str) -> bool:
    """The damaged run's output opens its answer with a loss the intact one does not say."""
    new = set(got.splitlines()) - set(intact.splitlines())
    return any(x.startswith(SAID) for x in new)


def _diff(a: str, b: str) -> str:
    import difflib
    return "\n".join(list(difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0))[:12])


def is_number_text(s: str) -> bool:
    try:
        return math.isfinite(float(s))
    except ValueError:
        return False


def dump(manifest: dict) -> str:
    return json.dumps(manifest, indent=2)


# -- the property (tests/test_properties_runs*.py) ------------------------------------------------

INTACT: dict[str, tuple[Path, list]] = {}


def intact(kind: str, root: Path) -> tuple[Path, list]:
    """The kind's run copied once, with its readers' intact answers (paths made relative)."""
    if kind not in INTACT:
        run = copy_run(kind, root)
        got = run_readers(kind, run)
        assert all(o.code == 0 for o, _ in got), [o.err for o, _ in got]
        INTACT[kind] = (run, got)
    return INTACT[kind]


def key_columns(table: Path) -> list[str]:
    """The key columns of a table file (schema.TABLES and the sweep tables)."""
    from l2attr.sweep.measure.dram import SWEEP_DRAM
    from l2attr.sweep.table import SWEEP_TABLES
    from l2attr.schema import TABLES

    name = table.name.split(".")[0]
    for t in (*TABLES.values(), *SWEEP_TABLES, SWEEP_DRAM):
        if t.name == name:
            return list(t.key)
    return []


@st.composite
def damage(draw: st.DrawFn, kind: str) -> tuple[str, object]:
    """(what, how): a description and the change, drawn against the committed run's files."""
    run = RUNS[kind]
    what = draw(st.sampled_from(["cell", "key", "manifest", "escape", "arm", "cut"]), label="what")
    if what == "escape":           # issue 38: a lone surrogate in any string of the manifest
        manifest = json.loads((run / "manifest.json").read_text())
        strings = [p for p in fields(manifest) if isinstance(_at(manifest, p), str)]
        path = draw(st.sampled_from(strings), label="field")
        return f"manifest {path} -> a lone surrogate", ("manifest", path, "x\ud800y", False)
    grouped = [t for t in tables(run) if {"condition"} <= set(read_table(t).columns)
               and ({"step"} | {"repeat"}) & set(read_table(t).columns)]
    if what in ("arm", "cut") and grouped:
        # issue 38: the rows of one arm relabelled or gone, or one repeat gone from every arm
        table = draw(st.sampled_from(grouped), label="table")
        df = read_table(table)
        index = "step" if "step" in df.columns else "repeat"
        if what == "cut":
            value = draw(st.sampled_from(sorted(set(df[index]))), label=index)
            return f"{table.name}: {index} {value} removed from every arm", ("drop", table.name, index, value)
        arm = draw(st.sampled_from(sorted(set(df["condition"]))), label="arm")
        to = draw(st.sampled_from([None, *sorted(set(df["condition"]) - {arm}), "cold_start", "no_producer"]),
                  label="to")
        return f"{table.name}: arm {arm} -> {to}", ("arm", table.name, arm, to)
    if what in ("arm", "cut", "escape"):
        what = "cell"
    if what == "manifest":
        manifest = json.loads((run / "manifest.json").read_text())
        path = draw(st.sampled_from(fields(manifest)), label="field")
        node = manifest
        for part in path:
            node = node[part]
        if draw(st.booleans(), label="remove"):
            return f"manifest {path} removed", ("manifest", path, None, True)
        value = draw(st.sampled_from([v for v in JSON_VALUES if not same_type(v, node)]), label="value")
        return f"manifest {path} {node!r:.40} -> {value!r}", ("manifest", path, value, False)
    table = draw(st.sampled_from(tables(run)), label="table")
    df = read_table(table)
    row = draw(st.integers(0, len(df) - 1), label="row")
    if what == "key" and draw(st.booleans(), label="repeat"):
        return f"{table.name}:{row + 2} repeated", ("repeat", table.name, row, None)
    key = key_columns(table) if what == "key" else []
    columns = [c for c in df.columns if c not in FREE_TEXT.get(table.name, ())]
    column = draw(st.sampled_from(key or columns), label="column")
    others = df[column].sample(3, random_state=row, replace=True)       # a key made another row's
    pool = HOSTILE if what == "cell" or not key else ("zzz", "999", "-1", *others)
    value = draw(st.sampled_from(list(pool)), label="value")
    return f"{table.name}:{row + 2}:{column} {df.at[row, column]!r} -> {value!r}", ("cell", table.name, row, (column, value))


def _at(value: Any, path: tuple) -> Any:
    for part in path:
        value = value[part]
    return value


def apply(run: Path, how: tuple) -> None:
    kind, where, row, change = how
    if kind in ("drop", "arm"):
        table = run / where
        df = read_table(table)
        if kind == "drop":
            df = df[df[row] != change]
        elif change is None:
            df = df[df["condition"] != row]
        else:      # the first half of the arm's rows relabelled (whole rows, so keys may clash: refused too)
            idx = df.index[df["condition"] == row]
            df.loc[idx[: max(1, len(idx) // 2)], "condition"] = change
        write_table(table, df)
        return
    if kind == "manifest":
        manifest = json.loads((run / "manifest.json").read_text())
        set_field(manifest, where, row, delete=change)
        (run / "manifest.json").write_text(dump(manifest))
        return
    table = run / where
    df = read_table(table)
    if kind == "repeat":
        df = pd.concat([df, df.iloc[[row]]], ignore_index=True)
    else:
        df.at[row, change[0]] = change[1]
    write_table(table, df)


def check(kind: str, tmp: Path, data: st.DataObject) -> None:
    base, want = intact(kind, tmp / "intact")
    what, how = data.draw(damage(kind), label="damage")
    run = tmp / "damaged" / base.name
    shutil.rmtree(run.parent, ignore_errors=True)
    run.parent.mkdir(parents=True)
    shutil.copytree(RUNS[kind], run)
    apply(run, how)
    before = digest(run)
    # the intact answers name the intact copy's folder; the damaged copy's is normalised the same way
    got = run_readers(kind, run)
    judge(kind, run, want, got, what)
    assert digest(run) == before, f"{what}: a reader changed a file of the run"




# -- `--resume` (issue 38: it trusted the manifest and built options from whatever was there) --------

RESUMABLE = {"ladder": ["ladder", "--resume"], "sweep": ["sweep", "--resume"]}


@st.composite
def manifest_damage(draw: st.DrawFn, kind: str) -> tuple[str, object]:
    """A manifest field of the kind's run changed to a JSON value of another type, or removed, or
    (in an object the resume builds from) a key added that no writer writes."""
    manifest = json.loads((RUNS[kind] / "manifest.json").read_text())
    path = draw(st.sampled_from(fields(manifest)), label="field")
    node = _at(manifest, path)
    how = draw(st.sampled_from(["remove", "retype", "extra"]), label="how")
    if how == "remove":
        return f"manifest {path} removed", ("manifest", path, None, True)
    if how == "extra" and isinstance(node, dict):
        return f"manifest {path} + a stray key", ("manifest", (*path, "turbo"), 1, False)
    value = draw(st.sampled_from([v for v in JSON_VALUES if not same_type(v, node)]), label="value")
    return f"manifest {path} {node!r:.40} -> {value!r}", ("manifest", path, value, False)


def check_resume(kind: str, tmp: Path, data: st.DataObject) -> None:
    """A damaged manifest's --resume is one line naming manifest.json, or the line the intact run
    gets (this CPU machine: no GPU); never a traceback, never a changed file."""
    intact_run = tmp / "intact" / RUNS[kind].name
    if not intact_run.exists():
        copy_run(kind, tmp / "intact")
    want = read([*RESUMABLE[kind], str(intact_run)])
    what, how = data.draw(manifest_damage(kind), label="damage")
    run = tmp / "damaged" / RUNS[kind].name
    shutil.rmtree(run.parent, ignore_errors=True)
    run.parent.mkdir(parents=True)
    shutil.copytree(RUNS[kind], run)
    apply(run, how)
    before = digest(run)
    o = read([*RESUMABLE[kind], str(run)])
    assert o.code != 0 and "Traceback" not in o.err, f"{what}: {o.err[-600:]}"
    lines = [x for x in o.err.splitlines() if ": error: " in x]
    assert len(lines) == 1, f"{what}: {o.err}"
    same = lines[0] == [x for x in want.err.splitlines() if ": error: " in x][0].replace(str(intact_run), str(run))
    assert same or "manifest.json" in lines[0], f"{what}: {lines[0]}"
    assert digest(run) == before, f"{what}: --resume changed a file of the run"
