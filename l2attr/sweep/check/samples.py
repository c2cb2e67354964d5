"""A sweep's summaries agree with its samples, and its samples with the units that wrote them.

Why: sweep_points.csv is made from sweep_samples.csv (sweep/table.py summarize_point, after the
last repeat of each point), so a doubled median, a row cut from the points table or a samples
file that lost rows is still a valid CSV of finite numbers; only the other table shows it. The
same rule as the ladder's cells against its samples (summaries.py). sweep_samples.csv is not
kept in every copy of a run (the committed examples leave it out: it is the large file), so the
check runs where it exists; sweep_units.csv counts the rows each unit appended, so a samples file
that is there but cut shows too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from l2attr.errors import Damage
from l2attr.sweep.table import POINT_KEYS, SWEEP_POINTS, SWEEP_SAMPLES, SWEEP_UNITS, UNIT_KEYS
from l2attr.vocab import RepeatMode, Quantity as Q, Role as R, Timer

# relative agreement a CSV round trip keeps (pandas writes floats with 17 significant digits)
REL = 1e-6
SUMMARY = ("median_us", "p10_us", "p90_us")
IDENT = [*POINT_KEYS, "quantity", "timer"]


def _per_consumer_call(rows: pd.DataFrame, roles: tuple[str, ...]) -> pd.Series:
    """Per (arm, repeat, group, table): the time of `roles` summed over the consumer calls it
    served (sweep/table.py `_per_consumer_call`, for every arm at once)."""
    unit = [*POINT_KEYS, "repeat", "group", "table"]
    mine = rows[rows["role"].isin(roles)]
    sums = mine.groupby(unit)["time_us"].sum()
    calls = rows[rows["role"].isin((R.CONSUMER.value, R.CALL.value))].groupby(unit).size()
    return (sums / calls.reindex(sums.index)).dropna()


def expected_points(samples: pd.DataFrame) -> pd.DataFrame:
    """n_samples, median_us, p10_us, p90_us per (family, pin, profile, point, arm, quantity,
    timer), as the writer computes them from these samples (sweep/table.py point_series, without
    its bootstrap interval), for every arm in one pass: the writer's function takes ~30 ms per
    arm, and a full sweep has a thousand arms."""
    keys = list(POINT_KEYS)
    s = samples.assign(**{k: samples[k].astype(str) for k in (*keys, "mode", "role")},
                       time_us=pd.to_numeric(samples["time_us"], errors="coerce"))
    dev, host = s[s["mode"] == RepeatMode.DEVICE.value], s[s["mode"] == RepeatMode.HOST.value]
    cons = dev[dev["role"] == R.CONSUMER.value]
    role = lambda r: dev.loc[dev["role"] == r.value].set_index(keys)["time_us"]  # noqa: E731
    kernel, wall = Timer.KERNEL.value, Timer.WALL.value
    series = {(Q.CONSUMER.value, kernel): role(R.CONSUMER),
              (Q.CONSUMER_FIRST.value, kernel): cons[cons["position"] == 1].set_index(keys)["time_us"],
              (Q.CONSUMER_REST.value, kernel): cons[cons["position"] > 1].set_index(keys)["time_us"],
              (Q.PIN.value, kernel): role(R.PIN), (Q.POLLUTE.value, kernel): role(R.POLLUTE),
              (Q.PREPARE.value, wall): role(R.PREPARE),
              (Q.CHARGED.value, kernel): _per_consumer_call(dev, (R.PIN.value, R.CONSUMER.value)),
              (Q.CALL.value, wall): _per_consumer_call(host, (R.CALL.value,))}
    frames = []
    for (quantity, timer), values in series.items():
        values = values.dropna()
        if values.empty:
            continue
        grouped = values.groupby(level=keys, sort=False)
        q = grouped.quantile([0.1, 0.5, 0.9]).unstack()
        frames.append(pd.DataFrame({"n_samples": grouped.size(), "median_us": q[0.5], "p10_us": q[0.1],
                                    "p90_us": q[0.9]}).assign(quantity=quantity, timer=timer))
    if not frames:
        return pd.DataFrame(columns=["n_samples", *SUMMARY], index=pd.MultiIndex.from_tuples([], names=IDENT))
    return pd.concat(frames).reset_index().set_index(IDENT)


def check_points_against_samples(points: pd.DataFrame, samples: pd.DataFrame, path: Path,
                                 damage: Damage) -> pd.DataFrame:
    """Every points row is the summary of its samples (count, median, p10, p90); every quantity
    the samples of a summarised arm give has its row. Returns points without the rows that
    disagree (partial mode)."""
    source = f"{path}/{SWEEP_POINTS.filename}"
    want = expected_points(samples)
    ident = pd.MultiIndex.from_frame(points[IDENT].astype(str))
    expect = want.reindex(ident)
    label = lambda row: "/".join(ident[row])  # noqa: E731
    n_have = pd.to_numeric(points["n_samples"], errors="coerce").to_numpy(dtype=float)
    n_want = expect["n_samples"].to_numpy(dtype=float)
    absent = np.isnan(n_want)
    count = ~absent & (n_have != n_want)
    bad = absent | count
    _first(damage, source, absent, lambda r: f"{label(r)} has no samples in {SWEEP_SAMPLES.filename} (edited, "
                                             "or its samples were removed)")
    _first(damage, source, count, lambda r: f"{label(r)}: n_samples {n_have[r]:g} but {SWEEP_SAMPLES.filename} "
                                            f"holds {n_want[r]:g} (one of the two lost rows or was edited)")
    for column in SUMMARY:
        have = pd.to_numeric(points[column], errors="coerce").to_numpy(dtype=float)
        ref = expect[column].to_numpy(dtype=float)
        off = ~bad & ~np.isclose(have, ref, rtol=REL, atol=1e-9)
        _first(damage, source, off, lambda r, have=have, ref=ref, column=column: (
            f"{label(r)}: {column} {have[r]:g} disagrees with the {n_want[r]:g} samples in "
            f"{SWEEP_SAMPLES.filename} ({ref[r]:g}; edited or damaged after it was written)"))
        bad |= off
    arms = {k[:len(POINT_KEYS)] for k in ident}
    held = set(ident)
    missing = [k for k in want.index if k[:len(POINT_KEYS)] in arms and k not in held]
    if missing:
        damage.found(f"{source}: {len(missing)} rows that the samples of its arms give are missing, first "
                     f"{'/'.join(map(str, missing[0]))} (the file was cut or rows were deleted)")
    return points[~bad].reset_index(drop=True) if bad.any() else points


def _first(damage: Damage, source: str, mask: np.ndarray, text: Callable[[int], str]) -> None:
    """The first row `mask` marks (line number as an editor shows it) and how many more."""
    if mask.any():
        row = int(mask.argmax())
        more = f" (and {int(mask.sum()) - 1} more rows)" if mask.sum() > 1 else ""
        damage.found(f"{source}:{row + 2}: {text(row)}{more}")


def check_samples_against_units(samples: pd.DataFrame, units: pd.DataFrame | None, path: Path,
                                damage: Damage) -> None:
    """Each finished unit appended `rows` samples (sweep_units.csv); fewer held means
    sweep_samples.csv lost rows (cut, or rows deleted) and every summary of that arm is suspect."""
    if units is None or units.empty:
        return
    source = f"{path}/{SWEEP_SAMPLES.filename}"
    held = samples.groupby([samples[k].astype(str) for k in UNIT_KEYS]).size()
    for row, unit in enumerate(units.itertuples(index=False)):
        key = tuple(str(getattr(unit, k)) for k in UNIT_KEYS)
        have, rows = int(held.get(key, 0)), int(unit.rows)
        if have < rows:
            damage.found(f"{source}: {have} rows of unit {'/'.join(map(str, key))}, but {SWEEP_UNITS.filename}:{row + 2} "
                         f"records {rows} (the file was cut or rows were deleted)")
            return
