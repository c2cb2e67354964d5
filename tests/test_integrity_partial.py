"""`l2attr report --allow-partial` on a damaged copy of each run kind: exit 0, and the report says
at its top what it left out; without the flag the same damage is one line and exit 2 (issue 20)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from helpers_damage import copy_run, cut_rows, edit_table

from l2attr.cli import main


def _negative_count(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df.loc[df.index[df["metric"] == "dram__bytes_read.sum"][0], "value"] = -1.0
    return df


def _phase_backwards(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(end_us=df["end_us"].where(df.index != 1, df["start_us"] - 1.0))


CASES = {
    "ladder": (lambda run: edit_table(run, "cells", lambda df: pd.concat([df, df.iloc[[2]]])), "a repeated row"),
    "profile": (lambda run: edit_table(run, "metrics", _negative_count), "a count must not be negative"),
    "timeline": (lambda run: edit_table(run, "phases", _phase_backwards), "start_us must not exceed end_us"),
    "amortisation": (lambda run: cut_rows(run / "sweep_points.csv", 40), "point arms manifest.json declares"),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_partial_report_leads_with_what_it_left_out(kind: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    damage, rule = CASES[kind]
    runs = [copy_run(kind, tmp_path)]
    if kind in ("profile", "timeline"):
        runs.insert(0, copy_run("ladder", tmp_path))      # a report needs its ladder for an answer
    damage(runs[-1])
    args = ["report", *map(str, runs), "--format", "md"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and rule in err
    assert main([*args, "--allow-partial"]) == 0
    captured = capsys.readouterr()
    text = captured.out
    first_section = min(i for i in (text.find("**Verdict"), text.find("## Sweep")) if i >= 0)
    assert rule in text[:first_section], text[:2000]
    assert "partial data" in captured.err
