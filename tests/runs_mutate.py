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
    "distributed": EX / "distribute" / "20261201T205742Z-workers1",
}

# further runs the kept regression cases damage (not drawn from by the property test)
EXTRA: dict[str, Path] = {"step-edges": EX / "steps" / "runs" / "20261201T201821Z-selfcheck-quarter-l2"}

# what `show` each kind has (argv before the run dir)
SHOW: dict[str, list[str]] = {"experiment": ["experiment", "show"], "step": ["step", "--show"]}

# cell values no writer writes: other types, signs, magnitudes, NaN
HOSTILE = ("", "nan", "NaN", "inf", "-inf", "-5", "-1", "1e300", "-1e300", "1e18", "abc", "True",
           '{"a": 1}', "[1, 2]", "1.5", "0x10", " ", "9" * 400)
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
        path.write_bytes(gzip.compress(text.encode(), mtime=0))
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
        caveat = any("warning" in x or "caveat" in x for x in lines)
        same = (o.out == want.out and written == want_file)
        assert same or caveat, (f"{mutated}: exit 0, output differs from the intact run's and no caveat\n"
                                f"{_diff(want.out + want_file, o.out + written)}")


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
