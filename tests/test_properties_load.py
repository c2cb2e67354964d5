"""Properties of the run-dir loader on run dirs written by the real writers.

Whatever the timings, what load_runs reads is what was written; a table cut at any byte, or a
number replaced by a bad one, is refused with a UserError naming the file (never a traceback,
never a silently shorter table), except the one cut it cannot see: cells.csv cut exactly at a
row boundary after the last declared cell's consumer median, which loads as the rows before the
cut (a boundary cut that loses a declared cell is refused by the manifest check).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from helpers_rundirs import ladder_run_manifest, metric_rows, write_profile_run, write_run
from hypothesis import given
from hypothesis import strategies as st

from l2attr.analysis import load_runs
from l2attr.errors import UserError
from l2attr.measure.stats import summarize_cell
from l2attr.schema import CELLS, SAMPLES
from l2attr.vocab import Quantity, Timer

# CUDA-event times are >= 0.5 us in practice; summarize_cell divides by the consumer median, so a
# zero median (never measured) is left out here and noted for l2attr.measure.
times = st.floats(0.5, 1e5, allow_nan=False, allow_infinity=False)


@st.composite
def ladder_samples(draw: st.DrawFn) -> pd.DataFrame:
    """1-2 profiles x 1-2 rungs (one pinning; every rung on every profile, as a run measures them),
    1-4 event-timed and 0-3 host-timed calls per cell."""
    rows = []
    rungs = draw(st.sampled_from([["optmt"], ["optmt", "l2p_optmt"], ["l2p_optmt"]]))
    for profile in draw(st.sampled_from([["random"], ["reuse_low", "random"]])):
        for rung in rungs:
            pins = rung == "l2p_optmt"
            cell = {"family": "artifact", "rung": rung, "pin": "element" if pins else "none", "profile": profile,
                    "l2_state": "natural", "table": 0}
            for batch in range(draw(st.integers(1, 4))):
                rows.append({**cell, "repeat": 0, "batch": batch, "pin_time_us": draw(times) if pins else math.nan,
                             "consumer_time_us": draw(times), "consumer_artifact_time_us": math.nan,
                             "call_wall_time_us": math.nan})
            for batch in range(draw(st.integers(0, 3))):
                rows.append({**cell, "repeat": 1, "batch": batch, "pin_time_us": math.nan,
                             "consumer_time_us": math.nan, "consumer_artifact_time_us": draw(times),
                             "call_wall_time_us": draw(times)})
    return pd.DataFrame(rows, columns=list(SAMPLES.columns))


def write_ladder(root: Path, samples: pd.DataFrame) -> tuple[Path, pd.DataFrame]:
    cells = pd.concat([summarize_cell(g, 1000) for _, g in samples.groupby(["profile", "rung"], sort=False)],
                      ignore_index=True)
    manifest = ladder_run_manifest("run", rungs=list(dict.fromkeys(samples["rung"])),
                                   profiles=list(dict.fromkeys(samples["profile"])))
    return write_run(root / "run", manifest, {"samples": samples, "cells": cells}), cells


@given(ladder_samples())
def test_what_is_read_is_what_was_written(tmp_path_factory: pytest.TempPathFactory, samples: pd.DataFrame) -> None:
    run, cells = write_ladder(tmp_path_factory.mktemp("p"), samples)
    study = load_runs([run])
    read = study.cells.drop(columns="run")[list(CELLS.columns)]
    pd.testing.assert_frame_equal(read.reset_index(drop=True), cells.astype(read.dtypes.to_dict()),
                                  check_exact=True)
    assert len(study.samples) == len(samples)


def _cut_at(whole: bytes, data: st.DataObject) -> int:
    """A cut anywhere, or (half the time) exactly at a row boundary: the one case a cut leaves a
    well-formed table, so it is drawn on purpose, not left to a 1-in-100 byte (it once failed only
    when a rare draw happened to land there)."""
    header = whole.index(b"\n") + 1
    boundaries = [i + 1 for i in range(header, len(whole) - 1) if whole[i:i + 1] == b"\n"]
    if boundaries and data.draw(st.booleans(), label="at a row boundary"):
        return data.draw(st.sampled_from(boundaries), label="cut")
    return data.draw(st.integers(1, len(whole) - 1), label="cut")


def _consumer_cells(cells: pd.DataFrame) -> set[tuple[str, ...]]:
    keep = (cells["quantity"] == Quantity.CONSUMER) & (cells["timer"] == Timer.KERNEL)
    return set(map(tuple, cells[keep][["family", "rung", "pin", "profile", "l2_state"]].astype(str).to_numpy().tolist()))


@given(ladder_samples(), st.sampled_from(["cells.csv", "samples.csv"]), st.data())
def test_a_cut_table_is_refused_or_is_a_row_prefix(tmp_path_factory: pytest.TempPathFactory, samples: pd.DataFrame,
                                                   table: str, data: st.DataObject) -> None:
    run, cells = write_ladder(tmp_path_factory.mktemp("p"), samples)
    whole = (run / table).read_bytes()
    cut = _cut_at(whole, data)
    (run / table).write_bytes(whole[:cut])
    header = whole.index(b"\n") + 1
    if table == "cells.csv" and whole[cut - 1:cut] == b"\n" and cut > header:
        kept = whole[header:cut].count(b"\n")               # a row boundary: the rows before it
        # that prefix loads when it still holds every declared cell's consumer median; a cut that
        # lost one is seen (the manifest declares the cells: integrity/counts.py) and refused
        if _consumer_cells(cells[:kept]) == _consumer_cells(cells):
            read = load_runs([run]).cells
            assert len(read) == kept and read["median_us"].tolist() == cells["median_us"][:kept].tolist()
            return
    with pytest.raises(UserError) as err:
        load_runs([run])
    assert str(run / table) in str(err.value) and "\n" not in str(err.value)


bad_tokens = st.sampled_from(["-1", "-0.5", "inf", "-inf", "abc", ""])
checked = {"cells.csv": ["n_samples", "median_us", "p10_us", "p90_us", "ci95_lo_us", "ci95_hi_us", "bytes_per_call"],
           "samples.csv": ["repeat", "batch", "table", "consumer_time_us"]}


@given(ladder_samples(), st.sampled_from(sorted(checked)), bad_tokens, st.data())
def test_a_bad_number_is_refused_naming_file_and_column(tmp_path_factory: pytest.TempPathFactory,
                                                        samples: pd.DataFrame, table: str, token: str,
                                                        data: st.DataObject) -> None:
    run, _ = write_ladder(tmp_path_factory.mktemp("p"), samples)
    frame = pd.read_csv(run / table, dtype=str, keep_default_na=False)
    column = data.draw(st.sampled_from(checked[table]), label="column")
    rows = frame.index[frame[column] != ""] if table == "samples.csv" else frame.index
    row = data.draw(st.sampled_from(list(rows)), label="row")
    frame.loc[row, column] = token
    frame.to_csv(run / table, index=False)
    with pytest.raises(UserError) as err:
        load_runs([run])
    message = str(err.value)
    assert str(run / table) in message and column in message


@given(st.lists(st.tuples(times, times, times), min_size=1, max_size=3), st.data())
def test_any_cut_of_metrics_is_refused(tmp_path_factory: pytest.TempPathFactory, kernels: list, data: st.DataObject) -> None:
    hit, miss = "lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_read_lookup_miss.sum"
    values = {(rung, "random", "consumer"): {hit: h, miss: m, "dram__bytes_read.sum": d}
              for rung, (h, m, d) in zip(("baseline", "optmt", "l2p_optmt"), kernels)}
    run = write_profile_run(tmp_path_factory.mktemp("p"), metrics=metric_rows(values), control=None)
    whole = (run / "metrics.csv").read_bytes()
    cut = data.draw(st.integers(1, len(whole) - 1), label="cut")
    (run / "metrics.csv").write_bytes(whole[:cut])
    with pytest.raises(UserError) as err:
        load_runs([run])
    assert str(run / "metrics.csv") in str(err.value)
