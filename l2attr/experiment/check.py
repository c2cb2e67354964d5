"""The experiment run's contract: typed columns, row rules, cells recomputed from their samples
(none of them missing), and every profiled kernel holding every measured metric.

Why: only the cells' medians used to be compared with the samples, so a sample of -5, inf or
1e300 outside the kept cells passed, and exp_metrics.csv was checked for unique keys only (a
negative or NaN DRAM count, an unknown role or condition, a kernel missing a metric all reached
the DRAM table); an exp_cells.csv cut at a row boundary kept every declared condition (only its
last quantities went), and the loader compared only the cells still there with their samples.
The rules are the ladder's (rules.py, tables.py), stated for the experiment's tables;
experiment/table.py calls them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from l2attr.errors import STRICT, Damage
from l2attr.integrity import rules
from l2attr.integrity.rules import Numeric, typed_columns
from l2attr.integrity.tables import check_table
from l2attr.rundir import RunDir
from l2attr.schema import EXP_CELLS, EXP_METRICS, EXP_SAMPLES, Table

CELL_ID = ["experiment", "condition", "quantity", "timer"]
TIMES = ("median_us", "p10_us", "p90_us", "ci95_lo_us", "ci95_hi_us")
SAMPLE_TIMES = ("producer_time_us", "consumer_time_us", "producer_wall_us", "consumer_wall_us", "call_wall_us",
                "producer_enqueue_us", "consumer_enqueue_us")
NUMERIC: dict[str, Numeric] = {
    # a device repeat leaves the wall columns empty, a host repeat the kernel ones; no producer: empty
    EXP_SAMPLES.name: {"repeat": (False, True), "call": (False, True), **{c: (True, True) for c in SAMPLE_TIMES},
                       "sm_clock_mhz": (True, True)},
    EXP_CELLS.name: {"n_samples": (False, True), "n_discarded": (False, True), **{c: (False, True) for c in TIMES}},
    EXP_METRICS.name: {"call": (False, True), "launch": (False, True), "value": (False, False)},
}
TEXT: dict[str, tuple[str, ...]] = {
    EXP_SAMPLES.name: ("experiment", "condition", "mode", "discard"),
    EXP_CELLS.name: ("experiment", "condition", "quantity", "timer"),
    EXP_METRICS.name: ("experiment", "condition", "role", "kernel", "nvtx_range", "metric", "unit"),
}
# what summarize_pairs recomputes exactly from the samples (the CI is a bootstrap: not compared)
RECOMPUTED = ("n_samples", "n_discarded", "median_us", "p10_us", "p90_us")
REL = 1e-6


def check_cells_complete(cells: pd.DataFrame, recomputed: pd.DataFrame, path: Path, damage: Damage = STRICT) -> None:
    """Every cell the samples give (`recomputed`: measure.stats.summarize_pairs of them) is in
    exp_cells.csv: a cells table cut at a row boundary, or a row deleted, is refused."""
    have = set(map(tuple, cells[CELL_ID].astype(str).to_numpy().tolist()))
    missing = [k for k in map(tuple, recomputed[CELL_ID].astype(str).to_numpy().tolist()) if k not in have]
    if missing:
        damage.found(f"{path / EXP_CELLS.filename}: {len(missing)} cells that {EXP_SAMPLES.filename} gives are "
                     f"missing, first {'/'.join(map(str, missing[0]))} (the file was cut, or rows were deleted)")


def read_table(run: RunDir, table: Table, damage: Damage = STRICT) -> pd.DataFrame:
    """One experiment table, its numbers parsed and its row rules (tables.py) applied."""
    source = str(run.table_file(table))
    df = typed_columns(run.read(table, damage), NUMERIC[table.name], TEXT[table.name], source, damage)
    if table is EXP_SAMPLES:
        df["discard"] = rules.text_values(df["discard"], empty="")
        odd = rules.one_pattern(df, ("experiment", "condition", "repeat"), SAMPLE_TIMES, source, damage,
                                "a repeat is timed by one timer (device or host)")
        df = df[~odd].reset_index(drop=True)
    return check_table(df, table.name, source, damage)


def check_cells_recomputed(samples: pd.DataFrame, cells: pd.DataFrame, recomputed: pd.DataFrame, path: Path,
                           damage: Damage = STRICT) -> None:
    """exp_cells.csv is what its samples give: the same cells (none missing, none extra) with the
    same counts, median and percentiles."""
    check_cells_complete(cells, recomputed, path, damage)
    source = str(path / EXP_CELLS.filename)
    want = recomputed.assign(**{k: recomputed[k].astype(str) for k in CELL_ID}).set_index(CELL_ID)
    have = cells.assign(**{k: cells[k].astype(str) for k in CELL_ID})
    index = pd.MultiIndex.from_frame(have[CELL_ID])
    extra = ~index.isin(want.index)
    rules.flag(damage, source, pd.Series(extra, index=cells.index),
               f"a cell that {EXP_SAMPLES.filename} does not give (no kept samples for it)",
               lambda row: "/".join(map(str, have[CELL_ID].iloc[row])))
    aligned = want.reindex(index)
    for column in RECOMPUTED:
        got = pd.to_numeric(have[column], errors="coerce").to_numpy(dtype=float)
        expect = pd.to_numeric(aligned[column], errors="coerce").to_numpy(dtype=float)
        off = ~extra & ~np.isclose(got, expect, rtol=REL, atol=1e-9, equal_nan=True)
        rules.flag(damage, source, pd.Series(off, index=cells.index),
                   f"{column} disagrees with the one {EXP_SAMPLES.filename} gives (edited or damaged)",
                   lambda row, got=got, expect=expect: f"{got[row]:g}, recomputed {expect[row]:g}")


def check_metric_sets(metrics: pd.DataFrame, path: Path, damage: Damage = STRICT) -> None:
    """Every profiled kernel holds every measured metric the others hold (a derived rate may be
    absent where its denominator was 0): a kernel short of one was cut or edited."""
    if metrics.empty:
        return
    kernel = ["experiment", "condition", "role", "call", "launch"]
    measured = metrics[~metrics["metric"].astype(str).str.startswith("derived:")]
    every = set(measured["metric"].astype(str))
    held = measured.groupby([measured[k].astype(str) for k in kernel])["metric"].agg(lambda s: set(s.astype(str)))
    for key, names in held.items():
        lacking = sorted(every - names)
        if lacking:
            damage.found(f"{path / EXP_METRICS.filename}: kernel {'/'.join(map(str, key))} lacks {len(lacking)} of the "
                         f"{len(every)} metrics the other kernels hold, first {lacking[0]} (cut, or rows deleted)")
            return


def check_declared(manifest: dict, samples: pd.DataFrame, metrics_rows: int | None, path: Path,
                   damage: Damage = STRICT) -> None:
    """exp_samples.csv holds what the declaration asks: every declared condition and no other,
    each over the declared repeats (two per repeat: device, then host; an adaptive run's own count,
    in whole pairs, from 0 on), each repeat `calls - 1` rows (the first call is the warm-up the
    writer leaves out); an exp_metrics.csv present holds rows. Why: a repeat pair removed moved the
    verdict silently, an undeclared condition's samples were dropped without a word, and a
    header-only metrics table made the DRAM table vanish (issue 38). Missing repeats go through
    `damage` (--allow-partial reads what is there and says so); the rest is refused."""
    from l2attr.errors import UserError

    source = str(path / EXP_SAMPLES.filename)
    if metrics_rows == 0:
        raise UserError(f"{path / EXP_METRICS.filename}: a header and no rows: the profile wrote none, or the "
                        "file was cut (remove it to report the timings alone)")
    from l2attr.manifest_model import ExperimentManifest, recorded, typed

    decl = typed(manifest, model=ExperimentManifest).experiment
    declared = list(decl.conditions) if decl is not None else []
    if samples.empty or not declared:
        return
    have = list(dict.fromkeys(samples["condition"].astype(str)))
    extra = [c for c in have if c not in declared]
    if extra:
        raise UserError(f"{source}: condition {extra[0]} is not one the manifest declares "
                        f"({', '.join(declared)}): samples of another experiment, or edited")
    repeats, calls = recorded(manifest, "experiment.repeats"), recorded(manifest, "experiment.calls")
    if recorded(manifest, "status") != "complete" or not (isinstance(repeats, int) and isinstance(calls, int)):
        return
    adaptive = recorded(manifest, "adaptive")
    for cond in declared:
        got = samples[samples["condition"].astype(str) == cond]
        idx = sorted(set(pd.to_numeric(got["repeat"], errors="coerce").dropna().astype(int)))
        n = len(idx)
        want = (n if adaptive and n % 2 == 0 and n >= 2 * repeats else 2 * repeats)
        if idx != list(range(want)):
            damage.found(f"{source}: condition {cond} holds {n} repeats, the manifest declares experiment.repeats "
                         f"{repeats} ({2 * repeats} device + host repeats{', at least: adaptive' if adaptive else ''}; "
                         "cut, or rows deleted)")
            continue
        per = got.groupby("repeat").size()
        short = per[per != calls - 1]
        if len(short):
            damage.found(f"{source}: condition {cond} repeat {short.index[0]} holds {int(short.iloc[0])} calls, "
                         f"the manifest declares experiment.calls {calls} ({calls - 1} timed; cut, or rows deleted)")
