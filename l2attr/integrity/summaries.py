"""Tables of one run that must agree with each other: a summary with its samples, a derived hit
rate with the counts it came from, the phases with the timeline they cut.

Why: a median edited (or doubled) in cells.csv is still a finite positive number, and a miss
count set to 0 is still a count; only the other table the writer made from the same data shows
that one of them changed after it was written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from l2attr.errors import Damage
from l2attr.measure.stats import CELL_KEYS
from l2attr.catalog.sets import derived_specs
from l2attr.integrity import rules
from l2attr.manifest_model import ProfileManifest, TimelineManifest, typed
from l2attr.profile.ncu_rows import ALWAYS_KEEP
from l2attr.schema import CELLS, METRICS, PHASES, SAMPLES, TIMELINE
from l2attr.vocab import Condition, Quantity, Timer

# relative agreement a CSV round trip keeps (pandas writes floats with 17 significant digits)
REL = 1e-6


def _sample_series(samples: pd.DataFrame) -> dict[tuple[str, str], pd.Series]:
    """The per-call values each (quantity, timer) summary of cells.csv is made of (measure.stats)."""
    pin = pd.to_numeric(samples["pin_time_us"], errors="coerce")
    cons = pd.to_numeric(samples["consumer_time_us"], errors="coerce")
    return {(Quantity.PIN.value, Timer.KERNEL.value): pin, (Quantity.CONSUMER.value, Timer.KERNEL.value): cons,
            (Quantity.KERNELS.value, Timer.KERNEL.value): cons + pin.fillna(0.0),
            (Quantity.CONSUMER.value, Timer.ARTIFACT.value): pd.to_numeric(samples["consumer_artifact_time_us"],
                                                                            errors="coerce"),
            (Quantity.CALL.value, Timer.WALL.value): pd.to_numeric(samples["call_wall_time_us"], errors="coerce")}


def check_cells_against_samples(samples: pd.DataFrame, cells: pd.DataFrame, path: Path,
                                damage: Damage) -> pd.DataFrame:
    """Each cell whose n_samples equals the samples samples.csv holds for it has the median, p10
    and p90 of those samples (within rounding). A cell counting fewer samples than are held is a
    run stopped before the cell's summary was rewritten: not compared (check_sample_counts says
    when there are fewer). Returns cells without the rows that disagree (partial mode)."""
    keys = list(CELL_KEYS)
    groups = [samples[k].astype(str) for k in keys]
    bad = pd.Series(False, index=cells.index)
    source = str(path / CELLS.filename)
    series = _sample_series(samples)
    pairs = {f"{q}/{t}" for q, t in series}
    pair = cells["quantity"].astype(str) + "/" + cells["timer"].astype(str)
    bad |= rules.flag(damage, source, ~pair.isin(pairs), "the quantity and timer of a cell must be a pair the ladder "
                      f"summarises from its samples ({', '.join(sorted(pairs))})", lambda row: pair.iloc[row])
    grouped = pd.DataFrame({f"{q}/{t}": v for (q, t), v in series.items()}).groupby(groups)   # once for all
    stats = {"n": grouped.count(), "median_us": grouped.median(), "p10_us": grouped.quantile(0.1),
             "p90_us": grouped.quantile(0.9)}
    for (quantity, timer), values in series.items():
        held = pd.DataFrame({name: table[f"{quantity}/{timer}"] for name, table in stats.items()})
        mine = cells[(cells["quantity"] == quantity) & (cells["timer"] == timer)]
        if mine.empty or held.empty:
            continue
        index = pd.MultiIndex.from_frame(mine[keys].astype(str))
        want = held.reindex(index)
        claimed = pd.to_numeric(mine["n_samples"], errors="coerce").fillna(0).to_numpy() > 0
        absent = (want["n"].isna().to_numpy() | ((want["n"].fillna(0).to_numpy() == 0) & claimed))
        if absent.any():                     # a cell no sample row (or value) has: a key changed or the cell made up
            at = int(absent.argmax())
            row = int(cells.index.get_loc(mine.index[at]))
            damage.found(f"{source}:{row + 2}: the cell {'/'.join(mine[keys].astype(str).iloc[at])} ({quantity}, "
                         f"{timer}) has no samples in {SAMPLES.filename} (a key edited or the cell made up)"
                         + (f" (and {int(absent.sum()) - 1} more rows)" if absent.sum() > 1 else ""))
            bad.loc[mine.index[absent]] = True
        same_n = want["n"].to_numpy() == mine["n_samples"].to_numpy()
        for column in ("median_us", "p10_us", "p90_us"):
            have, expect = mine[column].to_numpy(dtype=float), want[column].to_numpy(dtype=float)
            off = same_n & ~np.isclose(have, expect, rtol=REL, atol=1e-9)
            if off.any():
                at = int(off.argmax())
                row = int(cells.index.get_loc(mine.index[at]))
                damage.found(f"{source}:{row + 2}: {column} {have[at]:g} disagrees with the "
                             f"{int(mine['n_samples'].iloc[at])} samples in {SAMPLES.filename} "
                             f"({expect[at]:g}; edited or damaged after it was written)"
                             + (f" (and {int(off.sum()) - 1} more rows)" if off.sum() > 1 else ""))
                bad.loc[mine.index[off]] = True
    return cells[~bad].reset_index(drop=True) if bad.any() else cells


def check_derived_metrics(metrics: pd.DataFrame, path: Path, damage: Damage) -> pd.DataFrame:
    """Each derived hit rate equals what its kernel's hit and miss counts give (the importer
    computed it from them): a count changed later (a miss count of 0) contradicts it."""
    if metrics.empty:
        return metrics
    kernel = ["report", "launch"] if {"report", "launch"} <= set(metrics.columns) else \
        [k for k in METRICS.key if k != "metric"]
    source = str(path / METRICS.filename)
    ident = pd.Series(list(zip(*(metrics[k].astype(str) for k in kernel))), index=metrics.index)  # no row-wise apply
    values = pd.Series(pd.to_numeric(metrics["value"], errors="coerce").to_numpy(),
                       index=pd.MultiIndex.from_arrays([ident, metrics["metric"].astype(str)]))
    values = values[~values.index.duplicated()]
    wide = values.unstack()
    bad = pd.Series(False, index=metrics.index)
    for spec in derived_specs(wide.columns):
        if spec.name not in wide.columns:
            continue
        hits, misses, rate = wide[spec.hits], wide[spec.misses], wide[spec.name]
        total = hits + misses
        expect = (100.0 * hits / total).where(total > 0)
        off = rate.notna() & hits.notna() & misses.notna() & ~np.isclose(rate, expect, rtol=REL, atol=1e-6)
        if off.any():
            kernels = set(off[off].index)
            mask = ident.isin(kernels) & (metrics["metric"].astype(str) == spec.name)
            row = int(mask.to_numpy().argmax())
            first = off[off].index[0]
            damage.found(f"{source}:{row + 2}: {spec.name} = {rate[first]:g} but {spec.hits} and {spec.misses} "
                         f"of the same kernel give {expect[first]:g} (a count or the rate was changed)"
                         + (f" (and {len(kernels) - 1} more kernels)" if len(kernels) > 1 else ""))
            bad |= ident.isin(kernels)
    return metrics[~bad].reset_index(drop=True) if bad.any() else metrics


# Nsight Compute's metric names: unit__counter with an optional rollup or submetric ("lts__t_sectors.sum",
# "profiler__replayer_passes"); l2attr's derived ones carry "derived:" in front.
NCU_NAME = r"(derived:)?[a-z][a-z0-9]*__[a-z0-9_]+(\.[a-z0-9_]+)*"


def check_profile_manifest(metrics: pd.DataFrame, manifest: dict[str, Any], path: Path, damage: Damage) -> None:
    """The profile writer records how many kernels each report held (replayer_passes); without it
    a metrics.csv cut at a row boundary cannot be told from a whole one."""
    facts = typed(manifest, model=ProfileManifest)
    passes = facts.replayer_passes
    if "report" in metrics.columns and passes is None:
        damage.found(f"{path}/manifest.json: replayer_passes is missing or not an object (the profile "
                     f"writer records it; without it a cut {METRICS.filename} cannot be told from a whole one)")
    elif "report" in metrics.columns:
        rules.flag(damage, str(path / METRICS.filename), ~metrics["report"].astype(str).isin(list(map(str, passes))),
                   f"column report must name a report of the manifest's replayer_passes ({', '.join(map(str, passes))})",
                   lambda row: repr(metrics["report"].iloc[row]))
    control_arms = (Condition.CONTROL_AFTER_PIN.value, Condition.CONTROL_AFTER_FLUSH.value,
                    Condition.CONTROL_AFTER_RESET.value)
    if ("control" in facts.model_fields_set and not facts.control and "condition" in metrics.columns
            and metrics["condition"].astype(str).isin(control_arms).any()):
        damage.found(f"{path}/manifest.json: control is {facts.control!r}, but {METRICS.filename} holds "
                     "the validity control's arms (the writer records the control's inputs when it runs one)")
    # what the import found (metrics_collected); older runs record only what was asked for
    declared = facts.metrics_collected if "metrics_collected" in facts.model_fields_set else facts.metrics
    if declared is not None and not metrics.empty:
        have = set(metrics["metric"].astype(str))
        missing = [m for m in declared if m not in have]
        if missing:
            damage.found(f"{path / METRICS.filename}: no rows of {', '.join(missing)}, which manifest.json "
                         "lists as collected (removed after the run? the report would show it as n/a)")
        known = set(declared) | set(ALWAYS_KEEP) | set(facts.derived_metrics or [])
        name = metrics["metric"].astype(str)
        rules.flag(damage, str(path / METRICS.filename), ~(name.isin(known) | name.str.fullmatch(NCU_NAME)),
                   "column metric must be an Nsight Compute metric name (unit__counter.rollup) or one manifest.json "
                   "lists (a row of another name is read by no table: its kernel's value would silently go missing)",
                   lambda row: repr(metrics["metric"].iloc[row]))


def check_timeline(timeline: pd.DataFrame | None, phases: pd.DataFrame | None, manifest: dict[str, Any],
                   path: Path, damage: Damage) -> None:
    """A PM-sampling timeline is cut into phases: every range the manifest lists has samples, and
    every range with samples has its phases (phases.csv missing or header-only hides the pin)."""
    if timeline is None:
        return
    ranges = [r.range for r in typed(manifest, model=TimelineManifest).ranges or []]
    have = set(timeline["range"].astype(str))
    for r in ranges:
        if not isinstance(r, str):
            damage.found(f"{path}/manifest.json: ranges[].range must be a range's name (found {r!r})")
        elif r not in have:
            damage.found(f"{path / TIMELINE.filename}: no samples for range {r}, which manifest.json lists "
                         "(truncated?)")
    check_sample_counts_per_range(timeline, manifest, path, damage)
    if phases is None or phases.empty:
        damage.found(f"{path / PHASES.filename}: {'missing' if phases is None else 'no phases'}; a timeline "
                     "run cuts every range into phases (was the run interrupted?)")
        return
    cut = set(phases["range"].astype(str))
    for r in sorted(have - cut):
        damage.found(f"{path / PHASES.filename}: no phases for range {r} of {TIMELINE.filename} (truncated?)")
    for r in sorted(cut - have):
        damage.found(f"{path / PHASES.filename}: phases for range {r}, which {TIMELINE.filename} has no samples of "
                     "(a phase outside its timeline)")
    span = timeline.groupby(timeline["range"].astype(str))["t_us"].agg(["min", "max"])
    lo = phases["range"].astype(str).map(span["min"])
    hi = phases["range"].astype(str).map(span["max"])
    tol = 1e-6 * np.maximum(hi.abs().fillna(0), 1.0)
    outside = lo.notna() & ((phases["start_us"] < lo - tol) | (phases["end_us"] > hi + tol))
    if outside.any():
        row = int(np.asarray(outside).argmax())
        damage.found(f"{path / PHASES.filename}:{row + 2}: phase {phases['phase'].iloc[row]} "
                     f"[{phases['start_us'].iloc[row]:g}, {phases['end_us'].iloc[row]:g}] us lies outside its "
                     f"timeline's samples [{lo.iloc[row]:g}, {hi.iloc[row]:g}] us")
    length = phases["end_us"] - phases["start_us"]
    off = ~np.isclose(phases["duration_us"], length, rtol=REL, atol=1e-6)
    if off.any():
        row = int(np.asarray(off).argmax())
        damage.found(f"{path / PHASES.filename}:{row + 2}: duration_us {phases['duration_us'].iloc[row]:g} "
                     f"is not end_us - start_us ({length.iloc[row]:g})")


def check_sample_counts_per_range(timeline: pd.DataFrame, manifest: dict[str, Any], path: Path,
                                  damage: Damage) -> None:
    """Each range's quantities hold the samples the reader counted (manifest `ranges`: instances,
    of which `untimed` had no timestamp and were dropped; profile/pmsampling.py). With one pass
    group every quantity was sampled together, so each has exactly instances - untimed rows: a
    timeline.csv cut at a row boundary loses rows of its last quantity. Quantities of several
    pass groups may be sampled a different number of times: there, more than `instances` is
    refused and fewer is not checked."""
    counts = timeline.groupby([timeline["range"].astype(str), timeline["quantity"].astype(str)]).size()
    for r in typed(manifest, model=TimelineManifest).ranges or []:   # a count that breaks its rule was said
        if r.instances is None or r.untimed is None:
            continue
        name, instances, untimed = str(r.range), int(r.instances), int(r.untimed)
        one_pass = r.pass_groups in (None, 1, 1.0)
        want = instances - untimed
        for (rng, quantity), n in counts.items():
            if rng != name:
                continue
            if (one_pass and n != want) or n > instances:
                damage.found(f"{path / TIMELINE.filename}: {n} samples of {quantity} in range {name}, but "
                             f"manifest.json[ranges] counts {want} ({instances} instances, {untimed} untimed): "
                             f"{'cut or rows deleted' if n < want else 'rows added'}")
                return
