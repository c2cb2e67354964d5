"""The integrity contract on damaged copies of every committed run kind (issue 20).

Each case is one edit whose verdict is known by hand: the loader must refuse it in one line that
names the file, the row where there is one, and the rule; with --allow-partial the same line is
kept for the report's top and the load goes on. The undamaged copies must load (no false alarm).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest
from helpers_damage import RUNS, SWEEP_KINDS, copy_run, cut_rows, edit_manifest, edit_table

from l2attr.analysis.load import read_run
from l2attr.sweep.load import load_sweep
from l2attr.errors import Damage, UserError


def load(kind: str, run: Path, damage: Damage | None = None) -> Any:
    damage = damage or Damage()
    return load_sweep(run, damage) if kind in SWEEP_KINDS else read_run(run, damage)


def refusal(kind: str, run: Path) -> str:
    with pytest.raises(UserError) as err:
        load(kind, run)
    message = str(err.value)
    assert "\n" not in message
    return message


def first_rows(df: pd.DataFrame, **where: str) -> pd.Index:
    mask = pd.Series(True, index=df.index)
    for column, value in where.items():
        mask &= df[column].astype(str) == value
    return df.index[mask]


def set_value(column: str, value: Any, nth: int = 3, **where: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def edit(df: pd.DataFrame) -> pd.DataFrame:
        df = df.copy()
        if isinstance(value, float) and not float(value).is_integer() and df[column].dtype.kind == "i":
            df[column] = df[column].astype(float)
        df.loc[first_rows(df, **where)[nth], column] = value
        return df
    return edit


def repeat_row(nth: int = 2, change: str | None = None) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The table with row `nth` once more at the end; `change`: a numeric column made different."""
    def edit(df: pd.DataFrame) -> pd.DataFrame:
        extra = df.iloc[[nth]].copy()
        if change:
            extra[change] = extra[change] * 1.5 + 1.0
        return pd.concat([df, extra], ignore_index=True)
    return edit


def scale(columns: tuple[str, ...], factor: float) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def edit(df: pd.DataFrame) -> pd.DataFrame:
        return df.assign(**{c: df[c] * factor for c in columns})
    return edit


def swap_spread(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df.loc[4, ["p10_us", "p90_us"]] = df.loc[4, ["p90_us", "p10_us"]].to_numpy()
    return df


def swap_interval(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df.loc[4, ["ci95_lo_us", "ci95_hi_us"]] = [df.loc[4, "ci95_hi_us"] + 1.0, df.loc[4, "ci95_lo_us"]]
    return df


TIMES = ("median_us", "p10_us", "p90_us", "ci95_lo_us", "ci95_hi_us")

# (kind, table, edit, what the one line must say; line 6 = the row at position 4)
TABLE_CASES = [
    # shared by every table with a spread: the ladder's cells and the five sweeps' points
    *[(kind, table, edit, want) for kind, table in [("ladder", "cells")] + [(k, "sweep_points") for k in SWEEP_KINDS]
      for edit, want in [
          (repeat_row(), "a repeated row (key"),
          (repeat_row(change="median_us"), "two different rows for one key"),
          (set_value("median_us", 1e300, nth=4), ":6: median_us must not exceed p90_us (1e+300 > "),
          (scale(TIMES, 1e300), "is above 1e+07 (10 s per call"),
          (swap_spread, ":6: p10_us must not exceed median_us"),
          (swap_interval, ":6: ci95_lo_us must not exceed ci95_hi_us"),
          (set_value("n_samples", 2.5, nth=4), ":6: column n_samples must be a whole number (2.5)"),
      ]],
    ("ladder", "cells", scale(TIMES, 2.0), "disagrees with the"),
    ("ladder", "cells", set_value("rung", "turbo"), "column rung must be one of"),
    ("ladder", "cells", set_value("timer", "sundial"), "column timer must be one of"),
    ("ladder", "samples", None, "samples.csv: missing"),
    ("ladder", "samples", set_value("repeat", 1.5, nth=7), ":9: column repeat must be a whole number (1.5)"),
    ("ladder", "samples", repeat_row(5), "a repeated row"),
    ("ladder", "samples", set_value("consumer_time_us", 1e300, nth=0), "column consumer_time_us is above 1e+07"),
    ("profile", "metrics", set_value("value", -5.0, metric="dram__bytes_read.sum"), "a count must not be negative"),
    ("profile", "metrics", set_value("value", -5.0, metric="lts__t_sectors_lookup_hit.sum"),
     "a count must not be negative (lts__t_sectors_lookup_hit.sum = -5)"),
    ("profile", "metrics", lambda df: df[df["metric"] != "dram__bytes_write.sum"],
     "no rows of dram__bytes_write.sum, which manifest.json lists"),
    ("profile", "metrics", lambda df: df.assign(rung=df["rung"].replace("optmt", "turbo")), "column rung must be one of"),
    ("profile", "metrics", lambda df: df.assign(value=df["value"].where(
        df["metric"] != "lts__t_sectors_op_read_lookup_miss.sum", 0.0)), "of the same kernel give 100"),
    ("profile", "metrics", set_value("value", 140.0, metric="derived:lts__t_sectors_hit_rate.pct"),
     "a percentage must lie in [0, 100]"),
    ("profile", "metrics", repeat_row(10, change="value"), "two different rows for one key"),
    ("timeline", "phases", lambda df: df.iloc[:0], "phases.csv: no phases"),
    ("timeline", "phases", None, "phases.csv: missing"),
    ("timeline", "phases", lambda df: df.assign(end_us=df["end_us"].where(df.index != 1, df["start_us"] - 5.0)),
     ":3: start_us must not exceed end_us"),
    ("timeline", "phases", set_value("phase", "coffee", nth=2), ":4: column phase must be one of"),
    ("timeline", "phases", set_value("duration_us", 99.0, nth=1), ":3: duration_us 99 is not end_us - start_us"),
    ("timeline", "timeline", set_value("t_us", -1.5, nth=5), ":7: column t_us must be >= 0 (-1.5)"),
    ("timeline", "timeline", repeat_row(5, change="value"), "two different rows for one key"),
    *[(k, "sweep_units", None, "sweep_units.csv: missing") for k in SWEEP_KINDS],
    *[(k, "sweep_units", lambda df: df.iloc[:-7], "units manifest.json declares are missing") for k in SWEEP_KINDS],
    *[(k, "sweep_units", set_value("repeat", 0.5, nth=3), ":5: column repeat must be a whole number") for k in SWEEP_KINDS],
    *[(k, "sweep_points", set_value("profile", "zipf", nth=0), "is not a point arm manifest.json declares")
      for k in SWEEP_KINDS],
    *[(k, "sweep_dram", set_value("dram_read_bytes", -4096.0, nth=2), ":4: column dram_read_bytes must be >= 0")
      for k in ("pollution", "hotset")],
    *[(k, "sweep_dram", repeat_row(2), "a repeated row") for k in ("pollution", "hotset")],
]


def _id(case: tuple) -> str:
    kind, table, edit, want = case
    return f"{kind}-{table}-{'delete' if edit is None else want[:28]}"


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_every_committed_run_kind_is_whole(kind: str, tmp_path: Path) -> None:
    """The contract's rules hold on what the tools wrote: no false alarm on an untouched copy."""
    damage = Damage(allow_partial=True)
    load(kind, copy_run(kind, tmp_path), damage)
    assert damage.messages == []


@pytest.mark.parametrize("case", TABLE_CASES, ids=[_id(c) for c in TABLE_CASES])
def test_a_damaged_table_is_one_line_naming_file_row_and_rule(case: tuple, tmp_path: Path) -> None:
    kind, table, edit, want = case
    run = copy_run(kind, tmp_path)
    path = edit_table(run, table, edit if edit is not None else (lambda df: None))
    message = refusal(kind, run)
    assert want in message and path.name in message, message


@pytest.mark.parametrize("case", TABLE_CASES[::3], ids=[_id(c) for c in TABLE_CASES[::3]])
def test_allow_partial_keeps_the_same_line_and_reads_on(case: tuple, tmp_path: Path) -> None:
    kind, table, edit, want = case
    run = copy_run(kind, tmp_path)
    edit_table(run, table, edit if edit is not None else (lambda df: None))
    damage = Damage(allow_partial=True)
    load(kind, run, damage)
    assert any(want in m for m in damage.messages), damage.messages


@pytest.mark.parametrize("kind", SWEEP_KINDS)
def test_sweep_points_cut_at_a_row_boundary(kind: str, tmp_path: Path) -> None:
    """`head -n -40` on sweep_points.csv is a valid CSV: only the manifest's points show the cut."""
    run = copy_run(kind, tmp_path)
    cut_rows(run / "sweep_points.csv", 40)
    assert "point arms manifest.json declares have no consumer median" in refusal(kind, run)


def test_the_amortisation_cut_no_longer_moves_the_break_even(tmp_path: Path) -> None:
    """The issue's case: cut by 40 rows, the interleaved break-even read "> 4" instead of "> 32";
    with --allow-partial the arms left whole are analysed and the cut is said."""
    from l2attr.sweep.analyse.judge import analyse_sweep

    run = copy_run("amortisation", tmp_path)
    cut_rows(run / "sweep_points.csv", 40)
    damage = Damage(allow_partial=True)
    sweep = load_sweep(run, damage)
    assert any("point arms" in m for m in damage.messages)
    analyse_sweep(sweep)    # what is left still analyses


MANIFEST_CASES = [
    (lambda m: m["config"].update(tables=-12), "config: tables must be a positive integer, got -12"),
    (lambda m: m["config"].update(rows="many"), "config: rows must be a positive integer, got 'many'"),
    (lambda m: m["config"].pop("dim"), "config.dim must be present"),
    (lambda m: m.update(gpu=None), "gpu.name must be a non-empty string"),
    (lambda m: m["gpu"].update(name=""), "gpu.name must be a non-empty string"),
    (lambda m: m.update(created_utc="yesterday"), "created_utc must be an ISO 8601 time"),
    (lambda m: m.update(created_utc=None), "created_utc must be an ISO 8601 time"),
]


@pytest.mark.parametrize("kind", sorted(RUNS))
@pytest.mark.parametrize("case", range(len(MANIFEST_CASES)))
def test_a_mistyped_manifest_is_refused_in_every_kind(kind: str, case: int, tmp_path: Path) -> None:
    edit, want = MANIFEST_CASES[case]
    run = copy_run(kind, tmp_path)
    edit_manifest(run, edit)
    message = refusal(kind, run)
    assert want in message and "manifest.json" in message, message


@pytest.mark.parametrize("edit, want", [
    (lambda m: m.update(measure=[]), "measure must be an object"),
    (lambda m: m.update(hbm_read_GBps=0), "hbm_read_GBps must be a finite number > 0"),
    (lambda m: m.update(hbm_copy_GBps=math.nan), "hbm_copy_GBps must be a finite number > 0 (GB/s) (found nan)"),
    (lambda m: m.update(l2_read_GBps="fast"), "l2_read_GBps must be a finite number > 0"),
])
def test_ladder_manifest_fields(edit: Callable, want: str, tmp_path: Path) -> None:
    run = copy_run("ladder", tmp_path)
    edit_manifest(run, edit)
    assert want in refusal("ladder", run)


@pytest.mark.parametrize("edit, want", [
    (lambda m: m.pop("replayer_passes"), "replayer_passes is missing"),
    (lambda m: m["validity_control"].update(hit_rate_gain_points="high"),
     "validity_control.hit_rate_gain_points must be a finite number (found 'high')"),
    (lambda m: m["validity_control"]["after_pin"].update(hit_rate_median="high"),
     "validity_control.after_pin.hit_rate_median must be a finite number"),
    (lambda m: m["validity_control"].update(verdict="maybe"), "validity_control.verdict must be one of"),
    (lambda m: m["replayer_passes"]["sweep.ncu-rep"].update(kernels=-3), "kernels must be a whole number >= 0"),
])
def test_profile_manifest_fields(edit: Callable, want: str, tmp_path: Path) -> None:
    run = copy_run("profile", tmp_path)
    edit_manifest(run, edit)
    assert want in refusal("profile", run)


@pytest.mark.parametrize("kind", SWEEP_KINDS)
def test_a_sweep_manifest_naming_an_absent_profile(kind: str, tmp_path: Path) -> None:
    run = copy_run(kind, tmp_path)
    edit_manifest(run, lambda m: m["sweep"]["profiles"].append("zipf"))
    message = refusal(kind, run)
    assert "point arms manifest.json declares" in message and "/zipf/" in message


def test_a_timeline_range_the_manifest_lists_has_samples(tmp_path: Path) -> None:
    run = copy_run("timeline", tmp_path)
    edit_manifest(run, lambda m: m["ranges"].append({**m["ranges"][0], "range": "l2attr@call:other"}))
    assert "no samples for range l2attr@call:other" in refusal("timeline", run)


def test_partial_cells_keep_only_the_rows_that_agree(tmp_path: Path) -> None:
    """One median doubled: the strict load refuses; the partial load drops that row alone."""
    run = copy_run("ladder", tmp_path)
    whole = pd.read_csv(run / "cells.csv")
    edit_table(run, "cells", lambda df: df.assign(median_us=np.where(df.index == 0, df["median_us"] * 1.01,
                                                                     df["median_us"])))
    damage = Damage(allow_partial=True)
    got = read_run(run, damage)
    assert len(damage.messages) == 1 and "cells.csv:2: median_us" in damage.messages[0]
    assert len(got.cells) == len(whole) - 1
