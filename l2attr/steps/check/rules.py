"""The step run's contract: typed columns, row rules and keys that resolve across its tables.

Why: a step run was read with a uniqueness check on two tables and a finiteness check on one
column; a kernel whose op was missing moved the answer (25.67 % -> 23.73 %) without a word, a
repeated op or repeat row, a negative index or byte count, an edge whose producer is no op, a
consumer before its producer, JSON in `inputs` that is not a list of [pointer, bytes], and an
unknown cache control all passed or ended in a traceback; step_dram.csv was read by the report
with no check at all, so a cut or a repeated row changed the DRAM totals without a word. Each is
stated here as a rule of the shared kind (rules.py), against the schema's STEP_* tables.

`check_step_tables` validates a typed copy and returns nothing: the analysis (steps/analyse/answer.py)
keeps reading the frames as they were read, so what it computes from an intact run is unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from l2attr.errors import STRICT, Damage
from l2attr.integrity import rules
from l2attr.integrity.rules import Numeric, typed_columns
from l2attr.integrity.tables import MAX_TIME_US, MAX_TIME_WHY
from l2attr.manifest_model import StepManifest
from l2attr.manifest_model import typed as typed_manifest
from l2attr.schema import STEP_DRAM, STEP_EDGES, STEP_KERNELS, STEP_OPS, STEP_TIMES, Table
from l2attr.vocab import (Discard, L2Condition, StepMode, CACHE_CONTROLS, EDGE_ARMS, STEP_CONDITIONS,
    condition_words)

OUTSIDE_OP, GRAPH_ONLY = -1, -2      # op_index of a kernel outside any recorded op / a graph's own kernel
FLAGS = ("True", "False", "true", "false", "1", "0")
MAX_BYTES = 1e18

NUMERIC: dict[str, Numeric] = {
    STEP_KERNELS.name: {"step": (False, True), "op_index": (False, False), "kernel_index": (False, True),
                        "duration_us": (False, True), "start_us": (True, False),
                        "node": (False, True)},        # graph surgery's kernel node (absent in a per-op run)
    STEP_OPS.name: {"op_index": (False, True)},
    STEP_TIMES.name: {"repeat": (False, True), "step_us": (False, True)},
    STEP_DRAM.name: {"op_index": (False, False), "kernel_index": (False, True), "launch": (False, True),
                     "value": (False, True)},
    STEP_EDGES.name: {"edge": (False, True), "producer": (False, True), "consumer": (False, True),
                      "bytes": (False, True), "repeat": (False, True), "consumer_us": (False, True),
                      "n_kernels": (False, True), "warmed_bytes": (False, True)},
}
WHOLE = {STEP_KERNELS.name: ("step", "op_index", "kernel_index", "node"), STEP_OPS.name: ("op_index",),
         STEP_TIMES.name: ("repeat",), STEP_DRAM.name: ("op_index", "kernel_index", "launch"),
         STEP_EDGES.name: ("edge", "producer", "consumer", "bytes", "repeat", "n_kernels", "warmed_bytes")}
KNOWN = {STEP_KERNELS.name: {"condition": condition_words(STEP_CONDITIONS)},
         STEP_OPS.name: {"flushed_in_cold": FLAGS},
         STEP_TIMES.name: {"discard": Discard.values()},
         STEP_DRAM.name: {"cache_control": CACHE_CONTROLS},
         STEP_EDGES.name: {"arm": condition_words(EDGE_ARMS)}}
FILLED = {STEP_KERNELS.name: ("kernel",), STEP_OPS.name: ("op",), STEP_DRAM.name: ("kernel", "key", "metric")}
MAY_BE_EMPTY = {STEP_TIMES.name: ("discard",)}
TIMES = {STEP_KERNELS.name: ("duration_us",), STEP_TIMES.name: ("step_us",), STEP_EDGES.name: ("consumer_us",)}
TEXT = {STEP_KERNELS.name: ("condition", "kernel", "stream"), STEP_OPS.name: ("op", "module", "flushed_in_cold"),
        STEP_TIMES.name: ("discard",), STEP_DRAM.name: ("cache_control", "kernel", "key", "metric"),
        STEP_EDGES.name: ("arm",)}


def typed(df: pd.DataFrame, table: Table, source: str, damage: Damage = STRICT) -> pd.DataFrame:
    """A typed copy of one step table after its row rules (the rows that break one left out)."""
    name = table.name
    df = typed_columns(df.reset_index(drop=True), NUMERIC[name], TEXT.get(name, ()), source, damage)
    df = df.reset_index(drop=True)
    bad = rules.unique_keys(df, table.key, source, damage)
    bad |= rules.whole_numbers(df, WHOLE.get(name, ()), source, damage)
    bad |= rules.filled(df, FILLED.get(name, ()), source, damage)
    for column, words in KNOWN.get(name, {}).items():
        bad |= rules.known_words(df, column, words, source, damage, may_be_empty=column in MAY_BE_EMPTY.get(name, ()))
    for column in TIMES.get(name, ()):
        bad |= rules.at_most(df, column, MAX_TIME_US, MAX_TIME_WHY, source, damage)
    for column in ("bytes", "warmed_bytes", "value"):
        if column in df.columns and name in (STEP_EDGES.name, STEP_DRAM.name):
            bad |= rules.at_most(df, column, MAX_BYTES, "bytes no GPU holds", source, damage)
    if "op_index" in df.columns and name in (STEP_KERNELS.name, STEP_DRAM.name):
        bad |= rules.at_least(df, "op_index", GRAPH_ONLY, source, damage)
    if name == STEP_OPS.name:
        bad |= _tensor_lists(df, source, damage)
    if name == STEP_TIMES.name:
        bad |= rules.flag(damage, source, df["step_us"] <= 0, "column step_us must be > 0",
                          lambda row: f"{df['step_us'].iloc[row]:g}")
    return df[~bad].reset_index(drop=True)


def _tensor_list(text: Any) -> bool:
    if not isinstance(text, str):
        return False                             # an op with no CUDA tensors is written `[]`
    try:
        value = json.loads(str(text))
    except (ValueError, RecursionError):
        return False
    return isinstance(value, list) and all(
        isinstance(x, list) and len(x) == 2 and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                                    for v in x) for x in value)


def _tensor_lists(ops: pd.DataFrame, source: str, damage: Damage) -> pd.Series:
    bad = pd.Series(False, index=ops.index)
    for column in ("inputs", "outputs"):
        if column in ops.columns:
            wrong = ~ops[column].map(_tensor_list)
            bad |= rules.flag(damage, source, wrong, f"column {column} must be a JSON list of [pointer, bytes] "
                              "pairs of whole numbers >= 0", lambda row, c=column: repr(str(ops[c].iloc[row])[:60]))
    return bad


def replays_a_graph(manifest: dict[str, Any]) -> bool:
    """Whether a step run's natural arm replays a captured CUDA graph (graph and surgery modes):
    its kernels may then include the graph's own (op_index -2), and no eager cold arm is owed."""
    return typed_manifest(manifest, model=StepManifest).mode in (StepMode.GRAPH.value, StepMode.SURGERY.value)


def check_step_tables(tables: dict[str, pd.DataFrame | None], graph: bool, path: Path,
                      damage: Damage = STRICT, kernel_edges: bool = False) -> None:
    """Every rule of the step kind over the tables a step run holds (None: not in this run).
    `kernel_edges`: the edges join kernel nodes of step_kernels.csv (the manifest says so), not ops."""
    typed_tables: dict[str, pd.DataFrame] = {}
    for table in (STEP_KERNELS, STEP_OPS, STEP_TIMES, STEP_DRAM, STEP_EDGES):
        df = tables.get(table.name)
        if df is not None:
            typed_tables[table.name] = typed(df, table, str(path / table.filename), damage)
    kernels, ops = typed_tables.get(STEP_KERNELS.name), typed_tables.get(STEP_OPS.name)
    if kernels is None or ops is None:
        return
    source = str(path / STEP_KERNELS.filename)
    natural = kernels["condition"] == L2Condition.NATURAL.value
    if not natural.any():
        damage.found(f"{source}: no natural rows (the step as the program runs it is what every share is of)")
    if not graph and not (~natural).any():
        damage.found(f"{source}: no cold rows (an eager step is measured natural and cold)")
    _same_kernels_per_step(kernels, source, damage)
    known_ops = set(ops["op_index"].astype(int))
    op = kernels["op_index"]
    rules.flag(damage, source, (op >= 0) & ~op.isin(known_ops), f"op_index must name an op of {STEP_OPS.filename}",
               lambda row: f"{op.iloc[row]:g}")
    if not graph:
        rules.flag(damage, source, op == GRAPH_ONLY, "op_index -2 (a graph's own kernel) in a step that is not a "
                   "graph's", lambda row: f"{op.iloc[row]:g}")
    dram = typed_tables.get(STEP_DRAM.name)
    if dram is not None:
        d_op = dram["op_index"]
        rules.flag(damage, str(path / STEP_DRAM.filename), (d_op >= 0) & ~d_op.isin(known_ops),
                   f"op_index must name an op of {STEP_OPS.filename}", lambda row: f"{d_op.iloc[row]:g}")
    edges = typed_tables.get(STEP_EDGES.name)
    if edges is not None and not edges.empty:
        e_source = str(path / STEP_EDGES.filename)
        if kernel_edges:
            known = set(kernels["node"].dropna().astype(int)) if "node" in kernels.columns else set()
            what, order = f"a kernel node of {STEP_KERNELS.filename}", "kernel node order"
        else:
            known, what, order = known_ops, f"an op of {STEP_OPS.filename}", "op order"
        for column in ("producer", "consumer"):
            rules.flag(damage, e_source, ~edges[column].isin(known), f"column {column} must name {what}",
                       lambda row, c=column: f"{edges[c].iloc[row]:g}")
        rules.flag(damage, e_source, edges["producer"] >= edges["consumer"], "the producer must come before its "
                   f"consumer ({order})", lambda row: f"{edges['producer'].iloc[row]:g} -> {edges['consumer'].iloc[row]:g}")
        _whole_edges(edges, e_source, damage)


def _whole_edges(edges: pd.DataFrame, source: str, damage: Damage) -> None:
    """Every edge is one producer -> consumer pair of one size, measured in every arm over the same
    repeats: an edge's saving is a difference of its arms, so a row moved to another edge (or an
    arm missing) would print an edge no run measured."""
    for column in ("producer", "consumer", "bytes"):
        odd = edges.groupby("edge")[column].nunique()
        if (odd > 1).any():
            damage.found(f"{source}: edge {odd.index[odd > 1][0]:g} holds more than one {column}: one edge is "
                         "one producer -> consumer pair of one size")
            return
    arms = set(condition_words(EDGE_ARMS))
    for e, g in edges.groupby("edge"):
        have = set(g["arm"])
        if have != arms:
            damage.found(f"{source}: edge {e:g} holds the arms {', '.join(sorted(have))}: every edge is measured "
                         f"in each of {', '.join(sorted(arms))}")
            return
        reps = g.groupby("arm")["repeat"].agg(lambda x: tuple(sorted(x)))
        if reps.nunique() > 1:
            damage.found(f"{source}: edge {e:g}: its arms hold different repeats (cut or mixed data)")
            return


def _same_kernels_per_step(kernels: pd.DataFrame, source: str, damage: Damage) -> None:
    """Every step of one condition launched the same kernels (op, kernel index, name): the steps
    are repeats of one function. A kernel moved to another op, or renamed, in one step was edited."""
    ident = (kernels["op_index"].astype(str) + "/" + kernels["kernel_index"].astype(str) + " "
             + kernels["kernel"].astype(str))
    for condition, g in kernels.groupby("condition"):
        sets = ident[g.index].groupby(g["step"]).agg(frozenset)
        usual = sets.mode().iloc[0]
        odd = sets[sets != usual]
        if len(odd):
            extra = sorted(odd.iloc[0] ^ usual)
            damage.found(f"{source}: {condition} step {odd.index[0]:g} holds other kernels than its other steps "
                         f"(op/kernel {extra[0][:80]}): the steps of one condition repeat one function")
            return


def check_step_dram(dram: pd.DataFrame, path: Path, damage: Damage = STRICT) -> pd.DataFrame:
    """step_dram.csv: one row per (cache control, op, kernel, key), bytes finite and >= 0, and the
    same kernels with both keys under every cache control (steps/measure/ncu.py profiles one step twice, the
    L2 as left and flushed): a cut loses the last kernels of the last cache control."""
    source = str(path / STEP_DRAM.filename)
    values = pd.to_numeric(dram["value"], errors="coerce")
    bad = rules.flag(damage, source, values.isna() | ~values.between(0, 1e18), "column value must be a finite "
                     "number of bytes >= 0", lambda row: repr(dram["value"].iloc[row]))
    bad |= rules.unique_keys(dram, STEP_DRAM.key, source, damage)
    bad |= rules.whole_numbers(dram, ("op_index", "kernel_index", "launch"), source, damage)
    dram = dram[~bad].reset_index(drop=True)
    kernel = dram[["op_index", "kernel_index"]].astype(str).apply(tuple, axis=1)
    keys = set(dram["key"].astype(str))
    per_control = {str(c): set(kernel[dram["cache_control"].astype(str) == c]) for c in dram["cache_control"].unique()}
    every = set().union(*per_control.values()) if per_control else set()
    for control, kernels in sorted(per_control.items()):
        lacking = sorted(every - kernels)
        if lacking:
            damage.found(f"{source}: cache control {control} lacks {len(lacking)} of the {len(every)} kernels the "
                         f"other profiles hold, first op {lacking[0][0]} kernel {lacking[0][1]} (cut, or rows deleted)")
    full = dram.groupby([dram["cache_control"].astype(str), kernel]).size()
    short = full[full < len(keys)]
    if len(short):
        (control, (op, k)) = short.index[0]
        damage.found(f"{source}: op {op} kernel {k} under cache control {control} has {int(short.iloc[0])} of the "
                     f"{len(keys)} keys ({', '.join(sorted(map(str, keys)))}) (cut, or rows deleted)")
    return dram
