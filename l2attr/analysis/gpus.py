"""Which GPU measured each cell, and the same cell measured on several GPUs (per-GPU spread).

Why: two GPUs of one kind differ by a percent or two (HBM bandwidth, clocks), so a ratio of two
cells is a measurement only when one GPU measured both. A one-process run records its GPU in the
manifest (`gpu.uuid`); a distributed run (l2attr/distribute) records it per cell (`gpu_uuid`).
`gpu_of` reads either; a ratio across two known, different GPUs is formed only when the user
asked (`--allow-mixed`: the same switch that lets two runs' GPUs be compared at all).
"""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from l2attr.analysis.common import is_missing
from l2attr.analysis.load import Study, run_uuid
from l2attr.analysis.spread import CELL_KEYS
from l2attr.vocab import Quantity, Timer

SPREAD_COLUMNS = [*CELL_KEYS, "quantity", "timer", "gpus", "n_gpus", "min_us", "max_us", "spread_pct", "runs"]
SHOWN = ((Quantity.CONSUMER.value, Timer.KERNEL.value), (Quantity.PIN.value, Timer.KERNEL.value))


def run_gpu_uuids(study: Study) -> dict[str, str]:
    """run name -> the manifest's gpu.uuid ('' where the run records none, or measured on several)."""
    return {r.name: run_uuid(r) for r in study.runs}


def gpu_of(rec: dict[str, Any] | pd.Series, by_run: dict[str, str]) -> str:
    """The GPU that measured a cells.csv row: its own gpu_uuid, else its run's ('' unknown)."""
    own = rec.get("gpu_uuid")
    if own is not None and not is_missing(own) and str(own):
        return str(own)
    return by_run.get(str(rec.get("run", "")), "")


def two_gpus(a: str, b: str) -> bool:
    """Both GPUs known and different: a ratio of their cells compares two machines."""
    return bool(a) and bool(b) and a != b


def cross_gpu_reason(a: str, b: str) -> str:
    return (f"measured on two GPUs ({a} and {b}): a ratio across GPUs is not formed unless asked "
            "(l2attr report --allow-mixed)")


def gpu_spread(study: Study) -> pd.DataFrame:
    """One row per cell (consumer and pin, kernel timer) that more than one GPU measured: each
    GPU's median, the spread (max - min over the median of the GPUs' medians)."""
    frames = [f for f in (study.cells, study.overlaps.get("cells")) if f is not None and not f.empty]
    if not frames:
        return pd.DataFrame(columns=SPREAD_COLUMNS)
    rows = pd.concat(frames, ignore_index=True)
    if "run" not in rows:
        return pd.DataFrame(columns=SPREAD_COLUMNS)
    key = [*CELL_KEYS, "quantity", "timer"]
    rows = rows.drop_duplicates(subset=[*key, "run"])
    by_run = run_gpu_uuids(study)
    rows = rows.assign(gpu=[gpu_of(r, by_run) for r in rows.to_dict("records")])
    rows = rows[(rows["gpu"] != "") & rows[["quantity", "timer"]].apply(tuple, axis=1).isin(SHOWN)]
    out = []
    for ident, grp in rows.groupby(key, sort=False):
        per_gpu = grp.groupby("gpu", sort=False)["median_us"].first().astype(float)
        if len(per_gpu) < 2:
            continue
        mid = float(per_gpu.median())
        out.append({**dict(zip(key, ident)), "gpus": "; ".join(f"{g} {v:.2f} µs" for g, v in per_gpu.items()),
                    "n_gpus": len(per_gpu), "min_us": float(per_gpu.min()), "max_us": float(per_gpu.max()),
                    "spread_pct": 100.0 * (float(per_gpu.max()) - float(per_gpu.min())) / mid if mid > 0 else float("nan"),
                    "runs": ", ".join(sorted(set(grp["run"].astype(str))))})
    return pd.DataFrame(out, columns=SPREAD_COLUMNS)


def consumer_gpus(study: Study) -> Callable[[str, str, str, str], str]:
    """(family, rung, profile, l2_state) -> the GPU that measured that consumer cell ('' unknown)."""
    by_run = run_gpu_uuids(study)
    table: dict[tuple[str, str, str, str], str] = {}
    cells = study.cells
    if cells is not None and not cells.empty:
        mine = cells[(cells["quantity"] == Quantity.CONSUMER.value) & (cells["timer"] == Timer.KERNEL.value)]
        for rec in mine.to_dict("records"):
            table.setdefault((str(rec["family"]), str(rec["rung"]), str(rec["profile"]), str(rec["l2_state"])),
                             gpu_of(rec, by_run))
    return lambda family, rung, profile, state: table.get((family, rung, profile, state), "")
