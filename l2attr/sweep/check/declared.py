"""What rows a sweep's points and DRAM tables must hold, from the settings its manifest records.

Why: sweep_points.csv and sweep_dram.csv are valid CSVs when cut at a row boundary, and the
points check (sweep.py) asks only for each arm's consumer median: a table that lost its last row
(an arm's wall-clock or pin summary, a profiled kernel's DRAM bytes) read as whole. Each arm's
quantities follow from what its protocol times (sweep/measure/protocol.py, sweep/table.py point_series):
the consumer always, the later calls when k > 1, the pin on the pinning arm, the polluting read
when the point pollutes, the window set-up on the window arm, the host call when host repeats
ran. The DRAM child (sweep/measure/dram.py) profiles, per arm, the pin and consumer kernels of the last
pin group's first PROFILED_TABLES tables, in the order sweep/measure/protocol.py schedules them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.errors import Damage
from l2attr.dlrm.config import WorkloadConfig
from l2attr.sweep.measure.dram import PROFILED_TABLES, SWEEP_DRAM
from l2attr.sweep.measure.protocol import schedule
from l2attr.sweep.declare import Point, SweepOptions, recorded
from l2attr.sweep.table import SWEEP_POINTS
from l2attr.vocab import Arm, Quantity as Q, Role as R, Timer

Declared = list[tuple[str, str, Point, Arm]]   # (family, profile, point, arm)


def _declared(manifest: dict[str, Any]) -> tuple[Declared, SweepOptions, WorkloadConfig] | None:
    got = recorded(manifest)
    if got is None:
        return None      # the manifest check names what is wrong with the settings
    opts, cfg, pts = got
    return [(f.value, p, pt, a) for f in opts.families for p in opts.profiles for pt in pts for a in pt.arms], opts, cfg


def arm_quantities(p: Point, arm: Arm, host_repeat: bool) -> list[tuple[str, str]]:
    """(quantity, timer) of every summary one arm of one point has in sweep_points.csv."""
    kernel, wall = Timer.KERNEL.value, Timer.WALL.value
    out = [(Q.CONSUMER.value, kernel), (Q.CONSUMER_FIRST.value, kernel), (Q.CHARGED.value, kernel)]
    if p.k > 1:
        out.append((Q.CONSUMER_REST.value, kernel))
    if arm == Arm.PIN:
        out.append((Q.PIN.value, kernel))
    if p.pollute_bytes > 0:
        out.append((Q.POLLUTE.value, kernel))
    if arm == Arm.WINDOW:
        out.append((Q.PREPARE.value, wall))
    if host_repeat:
        out.append((Q.CALL.value, wall))
    return out


def check_quantities(points_df: pd.DataFrame, manifest: dict[str, Any], path: Path, damage: Damage) -> None:
    """Every arm that has a consumer median has all its quantities (a cut lost the others)."""
    found = _declared(manifest)
    if found is None or points_df.empty:
        return
    arms, opts, _ = found
    have = set(map(tuple, points_df[["family", "profile", "point", "arm", "quantity", "timer"]].astype(str)
                   .to_numpy().tolist()))
    summarised = {k[:4] for k in have}
    missing = [(f, pr, p.point, a.value, *q) for f, pr, p, a in arms if (f, pr, p.point, a.value) in summarised
               for q in arm_quantities(p, a, opts.host_repeat) if (f, pr, p.point, a.value, *q) not in have]
    if missing:
        damage.found(f"{path}/{SWEEP_POINTS.filename}: {len(missing)} summaries of point arms it holds are missing, "
                     f"first {'/'.join(map(str, missing[0]))} (the file was cut, or rows were deleted)")


def dram_keys(manifest: dict[str, Any]) -> list[tuple[str, ...]] | None:
    """SWEEP_DRAM keys (family, profile, point, arm, role, table, group, position) the DRAM child
    profiles for this sweep; None when the settings cannot be read back."""
    found = _declared(manifest)
    if found is None:
        return None
    arms, _, cfg = found
    out = []
    tables = min(PROFILED_TABLES, cfg.tables)
    for f, pr, p, a in arms:
        for c in schedule(p.order, p.k, p.groups, cfg.tables, cfg.warmup_batches + cfg.batches):
            if c.group != p.groups - 1 or c.table >= tables:
                continue
            where = (str(c.table), str(c.group), str(c.position))
            if a == Arm.PIN and c.pin_first:
                out.append((f, pr, p.point, a.value, R.PIN.value, *where))
            out.append((f, pr, p.point, a.value, R.CONSUMER.value, *where))
    return out


def check_dram_rows(dram: pd.DataFrame, manifest: dict[str, Any], path: Path, damage: Damage) -> None:
    """Every kernel the DRAM child profiled has its row (a cut at a row boundary loses the last)."""
    declared = dram_keys(manifest)
    if declared is None:
        return
    key = list(SWEEP_DRAM.key)
    ints = {c: pd.to_numeric(dram[c], errors="coerce").astype("Int64").astype(str) for c in ("table", "group", "position")}
    have = set(map(tuple, dram.assign(**ints)[key].astype(str).to_numpy().tolist()))
    missing = [k for k in declared if k not in have]
    if missing:
        damage.found(f"{path}/{SWEEP_DRAM.filename}: {len(missing)} of the {len(declared)} kernels the DRAM profile "
                     f"of this sweep measures are missing, first {'/'.join(map(str, missing[0]))} (the file was cut, or "
                     "rows were deleted)")
