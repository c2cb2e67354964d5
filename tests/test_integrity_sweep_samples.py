"""Every sweep kind: sweep_points.csv agrees with sweep_samples.csv, and the samples with the units.

The runs are measured on the fake GPU (helpers_sweep), once per module, and each test damages a
copy by one edit whose answer is known: a doubled median, a row cut, a sample count changed, a
samples file cut. The committed examples keep no sweep_samples.csv, so the fake runs are the
ones that hold both files.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from helpers_damage import edit_table
from helpers_sweep import write_sweep_run

from l2attr.sweep.load import load_sweep
from l2attr.cli import main
from l2attr.errors import Damage, UserError
from l2attr.sweep.check.samples import expected_points
from l2attr.sweep.table import POINT_KEYS, SWEEP_SAMPLES, point_series
from l2attr.rundir import RunDir

KINDS = {"amortisation": {"ks": [1, 2]}, "capacity": {}, "window": {}, "pollution": {}, "hotset": {}}


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sweeps")
    return {kind: write_sweep_run(root / kind, kind, profiles=("random",), **kw) for kind, kw in KINDS.items()}


@pytest.fixture(params=list(KINDS))
def run(request, measured, tmp_path) -> Path:
    src = measured[request.param]
    return Path(shutil.copytree(src, tmp_path / src.name))


SPREAD = ["median_us", "p10_us", "p90_us", "ci95_lo_us", "ci95_hi_us"]


def _doubled(df: pd.DataFrame, row: int | None = None) -> pd.DataFrame:
    """Row `row` (every row when None) with its median and spread doubled: still ordered, finite,
    in range; only the samples show it changed."""
    out = df.copy()
    rows = out.index if row is None else [row]
    out.loc[rows, SPREAD] = out.loc[rows, SPREAD] * 2
    return out


def _row(points: pd.DataFrame, quantity: str = "consumer") -> int:
    """Position of the last row of `quantity` (its file line is this + 2)."""
    return int(points.index[points["quantity"] == quantity][-1])


def test_a_whole_run_passes(run):
    assert not load_sweep(run).points.empty


def test_the_check_computes_what_the_writer_computes(run):
    """The one-pass recomputation equals sweep/table.py's own series, arm by arm."""
    samples = RunDir(run).read(SWEEP_SAMPLES)
    want = expected_points(samples)
    for key, frame in samples.groupby(list(POINT_KEYS)):
        for (quantity, timer), values in point_series(frame).items():
            if len(values):
                got = want.loc[(*map(str, key), quantity.value, timer.value)]
                assert got["n_samples"] == len(values)
                assert got["median_us"] == pytest.approx(float(pd.Series(values).median()))


def test_a_doubled_median_is_refused_naming_file_row_and_rule(run):
    points = pd.read_csv(run / "sweep_points.csv")
    row = _row(points)
    edit_table(run, "sweep_points", lambda df: _doubled(df, row))
    with pytest.raises(UserError) as err:
        load_sweep(run)
    msg = str(err.value)
    assert msg.startswith(f"{run}/sweep_points.csv:{row + 2}: ")
    assert "median_us" in msg and "disagrees with the" in msg and "sweep_samples.csv" in msg


def test_a_changed_sample_count_is_refused(run):
    points = pd.read_csv(run / "sweep_points.csv")
    row = _row(points, "charged")
    edit_table(run, "sweep_points", lambda df: df.assign(
        n_samples=df["n_samples"].where(df.index != row, df["n_samples"] + 1)))
    with pytest.raises(UserError, match=rf"sweep_points.csv:{row + 2}: .*n_samples .* but sweep_samples.csv holds"):
        load_sweep(run)


def test_a_points_row_deleted_is_refused(run):
    """A quantity row other than the consumer median (which the manifest check already needs)."""
    points = pd.read_csv(run / "sweep_points.csv")
    row = _row(points, "charged")
    edit_table(run, "sweep_points", lambda df: df.drop(index=row))
    with pytest.raises(UserError, match=r"sweep_points.csv: 1 summaries of point arms it holds are missing, "
                                        r"first .*/charged/kernel"):
        load_sweep(run)


def test_a_points_table_cut_at_a_row_boundary_is_refused(run):
    edit_table(run, "sweep_points", lambda df: df.iloc[:-3])
    with pytest.raises(UserError, match="sweep_points.csv"):
        load_sweep(run)


def test_a_cut_samples_file_is_refused(run):
    edit_table(run, "sweep_samples", lambda df: df.iloc[:-5])
    with pytest.raises(UserError, match=r"sweep_samples.csv: \d+ rows of unit .* but sweep_units.csv:\d+ records \d+"):
        load_sweep(run)


def test_an_edited_sample_is_refused(run):
    """The summaries no longer match when one consumer sample changes a lot (the samples file still
    has all its rows)."""
    def edit(df: pd.DataFrame) -> pd.DataFrame:
        hit = (df["role"] == "consumer") & (df["mode"] == "device")
        return df.assign(time_us=df["time_us"].where(~hit, df["time_us"] * 3))
    edit_table(run, "sweep_samples", edit)
    with pytest.raises(UserError, match="disagrees with the"):
        load_sweep(run)


def test_allow_partial_drops_the_disagreeing_row_and_says_so(run):
    points = pd.read_csv(run / "sweep_points.csv")
    row = _row(points)
    edit_table(run, "sweep_points", lambda df: _doubled(df, row))
    loaded = load_sweep(run, Damage(allow_partial=True))
    assert len(loaded.points) == len(points) - 1
    assert any("disagrees with the" in m for m in loaded.damage)


def test_the_report_refuses_in_one_line(measured, tmp_path, capsys):
    src = measured["pollution"]
    run = Path(shutil.copytree(src, tmp_path / src.name))
    edit_table(run, "sweep_points", _doubled)
    assert main(["report", str(run), "-o", str(tmp_path / "r.html")]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and "sweep_points.csv:2:" in err[0] and "disagrees with the" in err[0]
    assert "(and " in err[0]
    assert not (tmp_path / "r.html").exists()
