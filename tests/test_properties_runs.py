"""Property: whatever damage a committed run of any kind takes, its readers answer in one of three
ways: refuse (non-zero exit, one line naming a file of the run and the rule), answer as for the
intact run, or say what is wrong (a warning line). Never a traceback, never a replaced file.

Hypothesis draws the damage (tests/runs_mutate.py applies it to a fresh copy of the kind's
smallest committed run): a cell's value to another type, sign, magnitude or NaN; a row repeated
or a key cell changed to a dangling value; a manifest field to a JSON value of another type, or
removed. 15 examples a kind in the README's test command, 200 in CI's property run
(tests/conftest.py profiles). Counterexamples found and fixed are kept in tests/test_runs_mutated.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import runs_mutate as rm

INTACT: dict[str, tuple[Path, list]] = {}


def intact(kind: str, root: Path) -> tuple[Path, list]:
    """The kind's run copied once, with its readers' intact answers (paths made relative)."""
    if kind not in INTACT:
        run = rm.copy_run(kind, root)
        got = rm.run_readers(kind, run)
        assert all(o.code == 0 for o, _ in got), [o.err for o, _ in got]
        INTACT[kind] = (run, got)
    return INTACT[kind]


@st.composite
def damage(draw: st.DrawFn, kind: str) -> tuple[str, object]:
    """(what, how): a description and the change, drawn against the committed run's files."""
    run = rm.RUNS[kind]
    what = draw(st.sampled_from(["cell", "key", "manifest"]), label="what")
    if what == "manifest":
        manifest = json.loads((run / "manifest.json").read_text())
        path = draw(st.sampled_from(rm.fields(manifest)), label="field")
        node = manifest
        for part in path:
            node = node[part]
        if draw(st.booleans(), label="remove"):
            return f"manifest {path} removed", ("manifest", path, None, True)
        value = draw(st.sampled_from([v for v in rm.JSON_VALUES if not rm.same_type(v, node)]), label="value")
        return f"manifest {path} {node!r:.40} -> {value!r}", ("manifest", path, value, False)
    table = draw(st.sampled_from(rm.tables(run)), label="table")
    df = rm.read_table(table)
    row = draw(st.integers(0, len(df) - 1), label="row")
    if what == "key" and draw(st.booleans(), label="repeat"):
        return f"{table.name}:{row + 2} repeated", ("repeat", table.name, row, None)
    column = draw(st.sampled_from(list(df.columns)), label="column")
    pool = rm.HOSTILE if what == "cell" else ("zzz", "999", "-1", *df[column].sample(3, random_state=row, replace=True))
    value = draw(st.sampled_from(list(pool)), label="value")
    return f"{table.name}:{row + 2}:{column} {df.at[row, column]!r} -> {value!r}", ("cell", table.name, row, (column, value))


def apply(run: Path, how: tuple) -> None:
    kind, where, row, change = how
    if kind == "manifest":
        manifest = json.loads((run / "manifest.json").read_text())
        rm.set_field(manifest, where, row, delete=change)
        (run / "manifest.json").write_text(rm.dump(manifest))
        return
    table = run / where
    df = rm.read_table(table)
    if kind == "repeat":
        df = pd.concat([df, df.iloc[[row]]], ignore_index=True)
    else:
        df.at[row, change[0]] = change[1]
    rm.write_table(table, df)


def check(kind: str, tmp: Path, data: st.DataObject) -> None:
    base, want = intact(kind, tmp / "intact")
    what, how = data.draw(damage(kind), label="damage")
    run = tmp / "damaged" / base.name
    shutil.rmtree(run.parent, ignore_errors=True)
    run.parent.mkdir(parents=True)
    shutil.copytree(rm.RUNS[kind], run)
    apply(run, how)
    before = rm.digest(run)
    # the intact answers name the intact copy's folder; the damaged copy's is normalised the same way
    got = rm.run_readers(kind, run)
    rm.judge(kind, run, want, got, what)
    assert rm.digest(run) == before, f"{what}: a reader changed a file of the run"


KINDS = sorted(rm.RUNS)


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
def test_any_damage_is_refused_answered_the_same_or_said(kind: str, data: st.DataObject,
                                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    check(kind, tmp_path_factory.getbasetemp() / f"prop-{kind}", data)
