"""Ladder and sweep cases of issue 38's battery that were read as they stood on main 2508830: a
negative set-aside time, a timer_discard that is no word of the timer's, and an occupy retention
check whose Nsight Compute run failed (returncode 1) used as if it had succeeded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from runs_mutate import EX, read

from l2attr.rundir import RunDir
from l2attr.schema import SAMPLES


def damaged_samples(tmp_path: Path, src: Path, column: str, value: str) -> Path:
    run = tmp_path / src.name
    shutil.copytree(src, run)
    f = RunDir(run).table_file(SAMPLES)        # committed compressed: .csv.gz or .csv.xz
    df = pd.read_csv(f, dtype=str, keep_default_na=False)
    row = df.index[df[column] != ""][0] if (df[column] != "").any() else 0
    df.loc[row, column] = value
    f.unlink()
    df.to_csv(run / SAMPLES.filename, index=False)   # written plain, as a writer writes it (fast; read the same)
    return run


@pytest.mark.parametrize("src, column, value, rule", [
    (EX / "charges" / "20261202T002543Z-charges", "window_setaside_us", "-5", "must be a number >= 0"),
    (EX / "charges" / "20261202T002543Z-charges", "window_reset_us", "abc", "must be a number >= 0"),
    (EX / "timer" / "20261201T205159Z-fast-spin300", "timer_discard", "maybe", "must be one of late"),
])
def test_ladder_sample_columns_obey_their_rule(tmp_path, src, column, value, rule):
    run = damaged_samples(tmp_path, src, column, value)
    o = read(["report", str(run), "--format", "md", "-o", str(tmp_path / "o.md")])
    assert o.code == 2 and "Traceback" not in o.err
    line = [x for x in o.err.splitlines() if ": error: " in x]
    assert len(line) == 1 and "samples.csv" in line[0] and column in line[0] and rule in line[0]


def test_a_failed_retention_check_is_not_used(tmp_path):
    run = tmp_path / "occupy"
    shutil.copytree(EX / "20261201T210348Z-bench-occupy", run)
    check = json.loads((run / "occupy_ncu.json").read_text())
    check["returncode"] = 1
    (run / "occupy_ncu.json").write_text(json.dumps(check))
    o = read(["report", str(run), "--format", "md", "-o", str(tmp_path / "o.md")])
    assert o.code == 0, o.err
    page = (tmp_path / "o.md").read_text()
    assert "Nsight Compute exited 1" in page and "still in L2" not in page
