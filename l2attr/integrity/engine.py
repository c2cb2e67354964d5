"""The engine's run kinds (experiment, step): the rules their own loaders did not state.

Why: an experiment's exp_cells.csv cut at a row boundary kept every declared condition (only its
last quantities went), and the loader compared only the cells still there with their samples; a
step's step_dram.csv was read by the report with no check at all, so a cut or a repeated row
changed the DRAM totals without a word. Both are stated here in the contract's terms (file, row,
rule); experiment and step manifests go through manifest.py like every kind.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from l2attr.errors import STRICT, Damage
from l2attr.integrity import rules
from l2attr.schema import EXP_CELLS, EXP_SAMPLES, STEP_DRAM

CELL_ID = ["experiment", "condition", "quantity", "timer"]


def check_cells_complete(cells: pd.DataFrame, recomputed: pd.DataFrame, path: Path, damage: Damage = STRICT) -> None:
    """Every cell the samples give (`recomputed`: measure.stats.summarize_pairs of them) is in
    exp_cells.csv: a cells table cut at a row boundary, or a row deleted, is refused."""
    have = set(map(tuple, cells[CELL_ID].astype(str).to_numpy().tolist()))
    missing = [k for k in map(tuple, recomputed[CELL_ID].astype(str).to_numpy().tolist()) if k not in have]
    if missing:
        damage.found(f"{path / EXP_CELLS.filename}: {len(missing)} cells that {EXP_SAMPLES.filename} gives are "
                     f"missing, first {'/'.join(map(str, missing[0]))} (the file was cut, or rows were deleted)")


def check_step_dram(dram: pd.DataFrame, path: Path, damage: Damage = STRICT) -> pd.DataFrame:
    """step_dram.csv: one row per (cache control, op, kernel, key), bytes finite and >= 0, and the
    same kernels with both keys under every cache control (steps/ncu.py profiles one step twice, the
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
