"""Runs that measured the same cells, side by side: what differs between them and whether it matters.

Where several run dirs hold one cell (the same family, rung, pin, profile, L2 state, quantity and
timer), the analysis uses the preferred run's row (load.preference_order) and this module sets
every other run's median beside it: the difference, the larger of the two runs' run-to-run
spreads of that cell, and whether the difference exceeds it. `compare_settings` lists the
manifest settings in which the runs differ, so a reader can name what changed.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from l2attr.analysis.load import Run, Study, gpu_name, run_uuid
from l2attr.analysis.spread import CELL_KEYS, TIMED_COLUMNS, repeat_spread
from l2attr.manifest_model import sections
from l2attr.vocab import Quantity, Timer

# (quantity, timer) of cells.csv -> the samples.csv column its repeats are read from
SAMPLE_COLUMN = {
    (Quantity.CONSUMER.value, Timer.KERNEL.value): "consumer_time_us",
    (Quantity.PIN.value, Timer.KERNEL.value): "pin_time_us",
    (Quantity.CONSUMER.value, Timer.ARTIFACT.value): "consumer_artifact_time_us",
    (Quantity.CALL.value, Timer.WALL.value): "call_wall_time_us",
}
_LABEL_OF_COLUMN = {column: label for label, column in TIMED_COLUMNS.items()}
QUANTITY_LABELS = {qt: _LABEL_OF_COLUMN[col] for qt, col in SAMPLE_COLUMN.items()} | {
    (Quantity.KERNELS.value, Timer.KERNEL.value): "pin + consumer (kernel timer)"}
CELL_ID = [*CELL_KEYS, "quantity", "timer"]
COLUMNS = [*CELL_ID, "used_run", "used_median_us", "run", "median_us", "diff_pct", "spread_pct",
           "exceeds_spread", "source"]
# manifest parts that describe how a run was made (the rest are measurements or bookkeeping)
SETTING_PARTS = ("command", "measure", "versions", "gpu", "ptxas")
# where the run kept its cache, and the variant list (the cells themselves show what was run)
NOISE = ("measure.cache_dir", "measure.variants")
# two processes of one GPU agree when every consumer median is within this much of the other's
# (issue 19's bar for a reproduction on one machine); beyond it the pair is reported as differing
SAME_GPU_TOLERANCE_PCT = 1.0


def _spreads(samples: pd.DataFrame) -> dict[tuple[Any, ...], float]:
    """(run, cell keys..., quantity, timer) -> run-to-run spread % of that run's repeats."""
    out: dict[tuple[Any, ...], float] = {}
    if samples is None or samples.empty:
        return out
    for (quantity, timer), column in SAMPLE_COLUMN.items():
        if column not in samples:
            continue
        for run, of_run in samples.groupby("run"):
            sp = repeat_spread(of_run, column)
            for rec in sp[sp["repeats"] >= 2].to_dict("records"):
                out[(run, *(rec[k] for k in CELL_KEYS), quantity, timer)] = float(rec["spread_pct"])
    return out


def _runs_samples(study: Study, runs: set[str]) -> pd.DataFrame:
    """Every sample of these runs: the rows the analysis uses (a run's own repeats no other run
    has, an adaptive run's being fewer) with the rows of keys several runs share."""
    parts = [f[f["run"].isin(runs)] for f in (study.samples, study.overlaps.get("samples"))
             if f is not None and not f.empty and "run" in f]
    return pd.concat(parts, ignore_index=True).drop_duplicates() if parts else pd.DataFrame()


def compare_cells(study: Study) -> pd.DataFrame:
    """One row per cell per run that is not the one the analysis used for it."""
    shared = study.overlaps.get("cells")
    if shared is None or shared.empty:
        return pd.DataFrame(columns=COLUMNS)
    used = study.cells.set_index(CELL_ID)[["run", "median_us"]]
    spreads = _spreads(_runs_samples(study, set(shared["run"])))
    rows = []
    for rec in shared.to_dict("records"):
        key = tuple(rec[k] for k in CELL_ID)
        if key not in used.index:
            continue
        used_run, used_median = used.loc[key, "run"], float(used.loc[key, "median_us"])
        if rec["run"] == used_run:
            continue
        diff = (float(rec["median_us"]) / used_median - 1.0) * 100.0 if used_median > 0 else math.nan
        # a run whose cell stopped after one repeat (adaptive) has no run-to-run spread of its
        # own: the other run's stands for both, and the source names whose it is
        with_spread = [r for r in (used_run, rec["run"]) if (r, *key) in spreads]
        spread = max(spreads[(r, *key)] for r in with_spread) if with_spread else math.nan
        rows.append({**dict(zip(CELL_ID, key)), "used_run": used_run, "used_median_us": used_median,
                     "run": rec["run"], "median_us": float(rec["median_us"]), "diff_pct": diff,
                     "spread_pct": spread,
                     "exceeds_spread": None if math.isnan(spread) or math.isnan(diff) else abs(diff) > spread,
                     "source": f"{used_run}/cells.csv + {rec['run']}/cells.csv" + _spread_source(with_spread)})
    return pd.DataFrame(rows, columns=COLUMNS)


def _spread_source(with_spread: list[str]) -> str:
    if len(with_spread) == 2:
        return " + samples.csv of both"
    return f" + samples.csv of {with_spread[0]}" if with_spread else ""


def compare_summary(compare: pd.DataFrame) -> pd.DataFrame:
    """Per pair of runs and (quantity, timer): cells, median and largest |difference|, and how
    many differences exceed the runs' spread (of those whose spread is known)."""
    if compare.empty:
        return pd.DataFrame()
    rows = []
    for (used, run, quantity, timer), g in compare.groupby(["used_run", "run", "quantity", "timer"], sort=False):
        known = g["exceeds_spread"].dropna()
        worst = g.loc[g["diff_pct"].abs().idxmax()]
        rows.append({"used_run": used, "run": run, "quantity": quantity, "timer": timer, "cells": len(g),
                     "median_abs_diff_pct": float(g["diff_pct"].abs().median()),
                     "max_abs_diff_pct": float(abs(worst["diff_pct"])),
                     "worst_cell": "/".join(str(worst[k]) for k in CELL_KEYS),
                     "with_spread": int(len(known)), "exceeding": int(known.astype(bool).sum())})
    return pd.DataFrame(rows)


def _flatten(node: Any, prefix: str = "") -> dict[str, str]:
    if isinstance(node, dict):
        out: dict[str, str] = {}
        for k, v in node.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: node if isinstance(node, str) else json.dumps(node, sort_keys=True)}


def run_settings(run: Run) -> dict[str, str]:
    """The run's settings as dotted keys (command, measure options, versions, GPU, ptxas)."""
    flat = _flatten(sections(run.manifest, SETTING_PARTS))      # recorded whole: every setting is compared
    return {k: v for k, v in flat.items() if not k.startswith(NOISE)}


def compare_settings(study: Study, compare: pd.DataFrame) -> pd.DataFrame:
    """Per pair of runs that share cells: every setting both record whose value differs, both values.

    A setting only one run records (the builds of variants the other run never measured, keys an
    older manifest lacks) is no difference between them; `one_sided_settings` counts those."""
    if compare.empty:
        return pd.DataFrame(columns=["used_run", "run", "setting", "used_value", "value"])
    rows = []
    for used, run, a, b in _pairs(study, compare):
        for key in sorted(set(a) & set(b)):
            if a[key] != b[key]:
                rows.append({"used_run": used, "run": run, "setting": key, "used_value": a[key], "value": b[key]})
    return pd.DataFrame(rows, columns=["used_run", "run", "setting", "used_value", "value"])


def _pairs(study: Study, compare: pd.DataFrame) -> list[tuple[str, str, dict[str, str], dict[str, str]]]:
    by_name = {r.name: r for r in study.runs}
    return [(used, run, run_settings(by_name[used]), run_settings(by_name[run]))
            for used, run in compare[["used_run", "run"]].drop_duplicates().itertuples(index=False)]


def one_sided_settings(study: Study, compare: pd.DataFrame) -> dict[tuple[str, str], int]:
    """(used run, other run) -> how many settings only one of the two records."""
    if compare.empty:
        return {}
    return {(used, run): len(set(a) ^ set(b)) for used, run, a, b in _pairs(study, compare)}


def pair_identity(study: Study, compare: pd.DataFrame) -> pd.DataFrame:
    """Per pair of runs that share cells: the GPU each recorded (uuid, name) and whether they are
    one physical GPU — only where both record a uuid; a pair without one is of unknown identity,
    never "the same". With the consumer kernel-timer cells: whether every median is within
    SAME_GPU_TOLERANCE_PCT of the other run's."""
    columns = ["used_run", "run", "used_uuid", "uuid", "gpu_name", "same_gpu", "consumer_cells",
               "consumer_max_abs_diff_pct", "consumer_within_tolerance"]
    if compare.empty:
        return pd.DataFrame(columns=columns)
    by_name = {r.name: r for r in study.runs}
    consumer = compare[(compare["quantity"] == Quantity.CONSUMER.value) & (compare["timer"] == Timer.KERNEL.value)]
    rows = []
    for used, run in compare[["used_run", "run"]].drop_duplicates().itertuples(index=False):
        uuids = [run_uuid(by_name[r]) for r in (used, run)]
        same = (uuids[0] == uuids[1]) if all(uuids) else None
        mine = consumer[(consumer["used_run"] == used) & (consumer["run"] == run)]
        worst = float(mine["diff_pct"].abs().max()) if len(mine) else math.nan
        rows.append({"used_run": used, "run": run, "used_uuid": uuids[0], "uuid": uuids[1],
                     "gpu_name": gpu_name(by_name[used]) or gpu_name(by_name[run]), "same_gpu": same,
                     "consumer_cells": int(len(mine)), "consumer_max_abs_diff_pct": worst,
                     "consumer_within_tolerance": None if math.isnan(worst) else worst <= SAME_GPU_TOLERANCE_PCT})
    return pd.DataFrame(rows, columns=columns)
