"""Build small synthetic run dirs for tests: a ladder run (samples + cells), a profile run (metrics)
and a timeline run (the recorded H200 PM-sampling report).

Made the way the tools make them: cells are summarize_cell over the samples, tables go through
RunDir, and every manifest comes from the writer of its run kind (ladders.measure.run.ladder_manifest,
profile.manifest's functions, rundir.run_manifest), so it has the shape a real run has; only the
facts a GPU would give (versions, GPU, compiled variants) are made up here. Numbers follow the
magnitudes of the H200 runs under examples/ (one table-batch ~50 us, pin ~17 us) so the report looks
like a real one; tests that check formulas build their own tiny tables.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import math
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from l2attr.catalog.sets import derived_specs
from l2attr.dlrm.config import WorkloadConfig
from l2attr.dlrm.declare import RUNG_BY_NAME
from l2attr.ladders.measure.run import LadderOptions, ladder_manifest
from l2attr.measure.stats import summarize_cell
from l2attr.dlrm.profile.manifest import PASSES, jobs_record, pm_timeline_manifest, profile_finished, profile_manifest
from l2attr.profile.metricsets import resolve_metrics
from l2attr.profile.ncu_cmd import NcuOptions
from l2attr.profile.ncu_import import EXTRA_COLUMNS
from l2attr.dlrm.profile.plan import ProfileSettings, make_plan
from l2attr.rundir import RunDir, run_manifest
from l2attr.schema import CELLS, METRICS, SAMPLES
from l2attr.names import NVTX_DOMAIN, parse_range_name, range_name
from l2attr.vocab import Family

PROFILES = ("reuse_high", "reuse_medium", "reuse_low", "random")

# profile -> rung -> (consumer median us, pin median us or None)
TIMINGS: dict[str, dict[str, tuple[float, float | None]]] = {
    "reuse_high": {"baseline": (45.0, None), "optmt": (38.0, None), "rpf_optmt": (36.0, None),
                   "l2p_optmt": (33.5, 15.0), "combined": (32.0, 15.0), "torch": (100.0, None)},
    "reuse_medium": {"baseline": (54.6, None), "optmt": (46.7, None), "rpf_optmt": (45.0, None),
                     "l2p_optmt": (44.5, 16.2), "combined": (43.5, 16.2), "torch": (107.5, None)},
    "reuse_low": {"baseline": (65.2, None), "optmt": (58.9, None), "rpf_optmt": (52.0, None),
                  "l2p_optmt": (56.6, 18.6), "combined": (51.0, 18.6), "torch": (121.2, None)},
    "random": {"baseline": (68.4, None), "optmt": (61.5, None), "rpf_optmt": (54.0, None),
               "l2p_optmt": (61.1, 18.6), "combined": (54.0, 18.6), "torch": (117.4, None)},
}
CALL_OVERHEAD_US = 12.0      # launch + sync on the host
ARTIFACT_TIMER_OVERHEAD_US = 9.0   # what the artifact's event/sync timer adds to the consumer kernel
PIN_SYNC_US = 8.0            # the extra stream sync between pin and consumer
BYTES_PER_CALL = 2048 * 150 * 128 * 4 + 2048 * 150 * 8 + 2049 * 8
HBM_COPY_GBPS = 4020.0

# profile -> rung -> consumer L2 hit rate %, consumer DRAM read bytes
L2_CONSUMER: dict[str, dict[str, tuple[float, float]]] = {
    "reuse_high": {"baseline": (88.0, 12.0e6), "optmt": (88.5, 11.8e6), "rpf_optmt": (91.8, 7.9e6),
                   "l2p_optmt": (91.7, 7.8e6), "combined": (92.4, 7.1e6)},
    "reuse_medium": {"baseline": (60.0, 40.0e6), "optmt": (60.5, 39.5e6), "rpf_optmt": (62.0, 38.0e6),
                     "l2p_optmt": (72.0, 30.0e6), "combined": (73.0, 29.0e6)},
    "reuse_low": {"baseline": (40.0, 90.0e6), "optmt": (40.2, 89.0e6), "rpf_optmt": (41.0, 88.0e6),
                  "l2p_optmt": (48.0, 78.0e6), "combined": (48.5, 77.0e6)},
    "random": {"baseline": (30.0, 145.0e6), "optmt": (30.1, 144.0e6), "rpf_optmt": (30.4, 143.0e6),
               "l2p_optmt": (31.0, 140.0e6), "combined": (31.2, 139.0e6)},
}


def default_config(**changes: Any) -> dict[str, Any]:
    return WorkloadConfig().replace(**changes).to_dict()


# What a GPU would have told the writers.
VERSIONS = {"l2attr": "0.1.0", "git_sha": "abc1234", "python": "3.12.3", "torch": "2.11.0+cu130",
            "cupy": "14.2.0", "ncu": "2025.3.1"}
GPU = {"name": "NVIDIA H200", "compute_capability": "9.0", "l2_bytes": 62914560,
       "persisting_l2_max_bytes": 39321600, "sm_count": 132, "driver": "580.95.05"}
VARIANTS = {"artifact/baseline/none": {"consumer": {"kernel": "artifact_plain", "registers_per_thread": 56,
                                                    "occupancy": 0.5}},
            "artifact/optmt/none": {"consumer": {"kernel": "artifact_plain", "registers_per_thread": 42,
                                                 "occupancy": 0.75}}}
CREATED = dt.datetime(2026, 11, 29, 20, 0, 0, tzinfo=dt.timezone.utc)   # every helper run's, unless given


def command(kind: str) -> str:
    return f"l2attr {kind} --preset artifact --out runs"


def ladder_run_manifest(name: str = "ladder", config: dict[str, Any] | None = None,
                        rungs: Sequence[str] | None = None, profiles: Sequence[str] = PROFILES,
                        created: dt.datetime | None = None, **extra: Any) -> dict[str, Any]:
    """A ladder run's manifest as `l2attr ladder` writes it: the artifact family's `rungs` (default
    all, torch too) on `profiles`, then what run_ladder adds (variants, the HBM copy bandwidth)."""
    opts = LadderOptions(rungs=[RUNG_BY_NAME[r] for r in (rungs or TIMINGS["random"])], profiles=list(profiles),
                         families=[Family.ARTIFACT])
    cfg = WorkloadConfig(**(config or default_config()))
    manifest = run_manifest(name, ladder_manifest(cfg, opts, command("ladder"), VERSIONS, GPU),
                            created or CREATED)
    return {**manifest, "variants": VARIANTS, "hbm_copy_GBps": HBM_COPY_GBPS, **extra}


# Each cell's samples: one device-timed repeat and one host-timed repeat (as the ladder writes
# them) of five calls. The offsets are symmetric and in the same order for pin and consumer, so
# the medians are exactly the TIMINGS values, and the per-call sum's median is pin + consumer.
# The runs are the artifact family (element pin), torch as the reference row.
OFFSETS_US = (-0.4, -0.2, 0.0, 0.2, 0.4)


def family_of(rung: str) -> str:
    return "reference" if rung == "torch" else "artifact"


def pin_of(rung: str) -> str:
    return "element" if rung in ("l2p_optmt", "combined") else "none"


def ladder_samples(timings: dict[str, dict[str, tuple[float, float | None]]] = TIMINGS,
                   states: tuple[str, ...] = ("natural",)) -> pd.DataFrame:
    """samples.csv rows per rung x profile x state: repeat 0 CUDA-event timed, repeat 1 host timed."""
    rows = []
    nan = float("nan")
    for state in states:
        slow = 1.08 if state == "flush" else 1.0
        for profile, rungs in timings.items():
            for rung, (consumer, pin) in rungs.items():
                consumer *= slow
                wall = consumer + (pin or 0.0) + CALL_OVERHEAD_US + (PIN_SYNC_US if pin else 0.0)
                for i, d in enumerate(OFFSETS_US):
                    cell = {"family": family_of(rung), "rung": rung, "pin": pin_of(rung), "profile": profile,
                            "l2_state": state, "batch": i, "table": 0}
                    rows.append({**cell, "repeat": 0, "pin_time_us": nan if pin is None else pin + d,
                                 "consumer_time_us": consumer + d, "consumer_artifact_time_us": nan,
                                 "call_wall_time_us": nan})
                    rows.append({**cell, "repeat": 1, "pin_time_us": nan, "consumer_time_us": nan,
                                 "consumer_artifact_time_us": consumer + ARTIFACT_TIMER_OVERHEAD_US + d,
                                 "call_wall_time_us": wall + d})
    return pd.DataFrame(rows, columns=list(SAMPLES.columns))


def scaled_samples(factor: float, samples: pd.DataFrame | None = None) -> pd.DataFrame:
    """ladder_samples() with every time multiplied by `factor`: another run's whole, consistent data."""
    samples = (ladder_samples() if samples is None else samples).copy()
    for column in ("pin_time_us", "consumer_time_us", "consumer_artifact_time_us", "call_wall_time_us"):
        samples[column] = samples[column] * factor
    return samples


def ladder_cells(samples: pd.DataFrame | None = None) -> pd.DataFrame:
    """cells.csv as the ladder writes it: measure.stats.summarize_cell over each cell's samples."""
    samples = ladder_samples() if samples is None else samples
    key = _frame_key(samples)
    if key not in _CELLS:
        cells = [summarize_cell(g, BYTES_PER_CALL) for _, g in
                 samples.groupby(["l2_state", "profile", "family", "rung", "pin"], sort=False)]
        _CELLS[key] = pd.concat(cells, ignore_index=True)
    return _CELLS[key].copy()


# summarize_cell (a seeded bootstrap per cell) is a function of the samples alone, and most helper
# runs summarise the same samples: once per test process, each caller gets its own copy
_CELLS: dict[tuple[Any, ...], pd.DataFrame] = {}


def _frame_key(df: pd.DataFrame) -> tuple[Any, ...]:
    rows = pd.util.hash_pandas_object(df, index=True).to_numpy().tobytes()
    return tuple(df.columns), tuple(map(str, df.dtypes)), hashlib.sha1(rows).hexdigest()


def write_run(path: Path, manifest: dict[str, Any], tables: dict[str, pd.DataFrame]) -> Path:
    """A run dir through RunDir's own writers (fixed name: tests refer to it)."""
    path.mkdir(parents=True, exist_ok=True)
    run = RunDir(path)
    run.write_manifest(manifest)
    by_name = {"samples": SAMPLES, "cells": CELLS, "metrics": METRICS}
    for name, df in tables.items():
        run.write(by_name[name], df)
    return path


def write_ladder_run(root: Path, name: str = "20261129T200000Z-ladder", *, cells: pd.DataFrame | None = None,
                     config: dict[str, Any] | None = None, rungs: Sequence[str] | None = None,
                     profiles: Sequence[str] = PROFILES, samples: pd.DataFrame | None = None,
                     **manifest_extra: Any) -> Path:
    """A ladder run of `rungs` x `profiles`: samples (ladder_samples(), or `samples`), and cells
    summarised from them (or `cells`, edited from ladder_cells(), of the cells the run declares; a
    median that its samples do not give is refused on load)."""
    if samples is None:
        samples = ladder_samples()
        samples = samples[samples["rung"].isin(rungs or TIMINGS["random"]) & samples["profile"].isin(profiles)]
    cells = ladder_cells(samples) if cells is None else cells
    manifest = ladder_run_manifest(name, config, rungs, profiles, **manifest_extra)
    return write_run(Path(root) / name, manifest, {"cells": cells, "samples": samples})


def _unit(metric: str) -> str:
    if metric.endswith(".pct"):
        return "%"
    return "byte" if "bytes" in metric else "ns" if "duration" in metric else "" if "passes" in metric else "sector"


def metric_rows(values: dict[tuple[str, str, str], dict[str, float]], condition: str = "ladder",
                tables: int = 2, batches: int = 2, spread: tuple[float, ...] = (0.98, 1.0, 1.01, 1.03),
                l2_state: str = "natural", report: str = "sweep.ncu-rep") -> pd.DataFrame:
    """metrics.csv rows as ncu_import writes them: values[(rung, profile, role)] = {metric: value},
    repeated per kernel with a spread, identity parsed from the kernel's NVTX range name, kernels
    numbered from 0 in `report` (the importer numbers each report's launches from 0).

    With the default spread the median of the kernels is value * 1.005.
    """
    rows = []
    launch = 0
    for (rung, profile, role), metrics in values.items():
        for i in range(tables * batches):
            table, batch = divmod(i, batches)
            factor = spread[i % len(spread)]
            name = range_name(role, family_of(rung), rung, pin_of(rung), profile, l2_state, table, batch)
            nvtx = f"{NVTX_DOMAIN}@{name}"
            ident = parse_range_name(nvtx)
            base = {k: ident[k] for k in ("cell", "role", "family", "rung", "pin", "profile", "table", "batch",
                                          "l2_state")}
            kernel = "prefetch_pin_L2" if role == "pin" else "embedding_bag_sum"
            kernel_values = {metric: (min(value * factor, 100.0) if _unit(metric) == "%" else value * factor)
                             for metric, value in metrics.items()}
            kernel_values[PASSES] = 4.0
            # as the importer: raw metrics by name, then the hit rates their counts give
            named = sorted(kernel_values.items()) + [
                (d.name, rate) for d in derived_specs(kernel_values)
                if (rate := d.compute(kernel_values[d.hits], kernel_values[d.misses])) is not None]
            for metric, value in named:
                rows.append({**base, "condition": condition, "kernel": kernel, "nvtx_range": nvtx,
                             "metric": metric, "unit": _unit(metric), "report": report, "launch": launch,
                             "value": value})
            launch += 1
    return pd.DataFrame(rows, columns=[*METRICS.columns, *EXTRA_COLUMNS])


def profile_values(consumer: dict[str, dict[str, tuple[float, float]]] = L2_CONSUMER,
                   profiles: tuple[str, ...] = PROFILES) -> dict[tuple[str, str, str], dict[str, float]]:
    """Counters per (rung, profile, role). Hit and miss counts are set so that the read hit rate is
    exactly the table's value (a common per-kernel factor cancels in hits / (hits + misses))."""
    values: dict[tuple[str, str, str], dict[str, float]] = {}
    for profile in profiles:
        for rung, (hit, dram) in consumer[profile].items():
            values[(rung, profile, "consumer")] = {
                **_counts(hit, dram), "lts__t_sectors_lookup_hit.sum": hit * 1.1e4,
                "lts__t_sectors_lookup_miss.sum": (100 - hit) * 1e4, "lts__t_sector_hit_rate.pct": hit,
                "dram__bytes_write.sum": 1.05e6, "lts__d_sectors_fill_device.sum": dram / 32,
                "lts__t_sectors_srcunit_ltcfabric.sum": 4.1e6, "lts__t_sectors_aperture_device_evict_last.sum": 0.0,
                "gpu__time_duration.sum": 50_000.0,
            }
            if rung in ("l2p_optmt", "combined"):
                values[(rung, profile, "pin")] = {
                    **_counts(8.0, 31.5e6), "lts__t_sectors_lookup_hit.sum": 8e4,
                    "lts__t_sectors_lookup_miss.sum": 92e4, "dram__bytes_write.sum": 0.2e6,
                    "lts__d_sectors_fill_device.sum": 31.5e6 / 32, "lts__t_sectors_srcunit_ltcfabric.sum": 0.5e6,
                    "lts__t_sectors_aperture_device_evict_last.sum": 1.44e6, "gpu__time_duration.sum": 17_000.0,
                }
    return values


def _counts(hit_pct: float, dram: float) -> dict[str, float]:
    """Read sector hits and misses giving `hit_pct`, and the DRAM bytes."""
    return {"lts__t_sectors_op_read_lookup_hit.sum": hit_pct * 1e4,
            "lts__t_sectors_op_read_lookup_miss.sum": (100 - hit_pct) * 1e4, "dram__bytes_read.sum": dram}


# The two arms of the validity control (consumer hit rate %, DRAM read bytes): after pin, after
# pin + flush. "clear": +15.6 points and 36 % less DRAM (the H200's size of effect); "not_clear":
# the same hit rate in both arms, as under kernel replay.
CONTROL_ARMS = {"clear": ((49.32, 37.5e6), (33.68, 58.9e6)),
                "not_clear": ((33.70, 58.8e6), (33.68, 58.9e6))}


def control_rows(control: str = "clear") -> pd.DataFrame:
    """The control run's two reports: the sweep's metrics for the consumer of l2p_optmt on
    reuse_medium, with each arm's hit rate and DRAM read bytes."""
    key = ("l2p_optmt", "reuse_medium", "consumer")
    frames = []
    for (hit, dram), condition, l2_state in zip(CONTROL_ARMS[control], ("control_after_pin", "control_after_flush"),
                                                 ("natural", "flush_after_pin")):
        metrics = {**profile_values()[key], **_counts(hit, dram)}
        frames.append(metric_rows({key: metrics}, condition, l2_state=l2_state, report=f"{condition}.ncu-rep"))
    return pd.concat(frames, ignore_index=True)


def write_profile_run(root: Path, name: str = "20261129T210000Z-profile", *, metrics: pd.DataFrame | None = None,
                      config: dict[str, Any] | None = None, control: str | None = "clear",
                      **manifest_extra: Any) -> Path:
    """A profile run as `l2attr profile` records it (profile.manifest's writers: the settings, the
    jobs, what the import found), its control declared on l2p_optmt/reuse_medium; control=None: a
    run with --no-control."""
    if metrics is None:
        sweep = metric_rows(profile_values())
        parts = [sweep] + ([control_rows(control)] if control else [])
        metrics = pd.concat(parts, ignore_index=True)
    cfg = WorkloadConfig(**(config or default_config()))
    settings = ProfileSettings(cfg=cfg, control=control is not None, control_profile="reuse_medium",
                               command=command("profile"))
    mset = resolve_metrics(settings.metrics, "gh100")
    path = Path(root) / name
    plan = make_plan(path, cfg, settings.rungs, settings.profiles, cfg.tables, mset.metrics, NcuOptions(),
                     "/usr/bin/ncu", settings.control, settings.control_profile)
    manifest = {**run_manifest(name, profile_manifest(settings, "gh100", "/usr/bin/ncu", "2025.3.1", mset,
                                                      "metric names validated", []), CREATED),
                "jobs": jobs_record(plan), "versions": VERSIONS, "gpu": GPU,
                **profile_finished(metrics, [], {j.name: 60.0 for j in plan.jobs}, mset.metrics)}
    manifest.update(manifest_extra)
    return write_run(path, manifest, {"metrics": metrics})


def tiny_cells(medians: dict[tuple[str, str], float], profile: str = "reuse_medium", state: str = "natural",
               run: str = "run-a", **columns: Any) -> pd.DataFrame:
    """A hand-sized cells table: medians[(rung, quantity)] = median_us; CI = median -1/+2 us.

    `quantity` is `name` (its default timer: kernel, or wall for `call`) or `name@timer`.
    Carries the `run` column that `load_runs` adds, as the analysis functions expect.
    """
    rows = []
    for (rung, key), median in medians.items():
        quantity, _, timer = key.partition("@")
        timer = timer or ("wall" if quantity == "call" else "kernel")
        rows.append({"family": family_of(rung), "rung": rung, "pin": pin_of(rung), "profile": profile,
                     "l2_state": state, "quantity": quantity, "timer": timer, "n_samples": 10,
                     "median_us": median, "p10_us": median - 1, "p90_us": median + 2, "ci95_lo_us": median - 1,
                     "ci95_hi_us": median + 2, "bytes_per_call": columns.get("bytes_per_call", 0.0),
                     "achieved_GBps": columns.get("achieved_GBps", float("nan")), "run": run})
    return pd.DataFrame(rows)


def tiny_metrics(values: dict[tuple[str, str, str], list[dict[str, float]]], condition: str = "ladder",
                 run: str = "run-b") -> pd.DataFrame:
    """A hand-sized metrics table: values[(rung, profile, role)] = one {metric: value} dict per kernel."""
    rows = []
    for (rung, profile, role), kernels in values.items():
        for i, metrics in enumerate(kernels):
            for metric, value in metrics.items():
                rows.append({"cell": f"{rung}:{profile}", "condition": condition, "role": role,
                             "family": family_of(rung), "rung": rung, "pin": pin_of(rung),
                             "profile": profile, "table": 0, "batch": i, "kernel": f"k_{role}",
                             "nvtx_range": "", "metric": metric, "value": value, "unit": "", "run": run})
    return pd.DataFrame(rows)


def write_timeline_run(root: Path, name: str = "20261129T220000Z-timeline") -> Path:
    """A timeline run dir made by the real reader from the recorded H200 PM-sampling report."""
    from l2attr.profile.pmsampling import phases
    from l2attr.schema import PHASES, TIMELINE

    report = Path(__file__).parent / "fixtures" / "ncu" / "range_pmsampling_pin_consume_h200.ncu-rep"
    pm = _read_pm_report(report)
    path = Path(root) / name
    path.mkdir(parents=True, exist_ok=True)
    run = RunDir(path)
    settings = ProfileSettings(cfg=WorkloadConfig(**default_config()), command=command("profile --timeline"))
    # the timeline writer copies the child ladder's gpu and versions (dlrm/profile/timeline.py)
    run.write_manifest({**run_manifest(name, pm_timeline_manifest(settings, "gh100", "nsys: not found", "reuse_high"),
                                       CREATED), "status": "done", "gpu": GPU, "versions": VERSIONS,
                        "ranges": pm.ranges.to_dict("records")})
    run.write(TIMELINE, pm.samples)
    run.write(PHASES, phases(pm.samples))
    return path


def one_cell_samples(per_repeat: dict[int, float]) -> pd.DataFrame:
    nan = math.nan
    rows = [{"family": "artifact", "rung": "optmt", "pin": "none", "profile": "random", "l2_state": "natural",
             "repeat": repeat, "batch": b, "table": 0, "pin_time_us": nan, "consumer_time_us": t,
             "consumer_artifact_time_us": nan, "call_wall_time_us": nan}
            for repeat, t in per_repeat.items() for b in range(3)]
    return pd.DataFrame(rows, columns=list(SAMPLES.columns))


def one_cell_run(root: Path, name: str, created: str, per_repeat: dict[int, float], **manifest: object) -> Path:
    """A ladder run of one cell (artifact OptMT, random, natural): three calls per device repeat,
    each repeat at the time `per_repeat` gives; `measure`/`versions`/`gpu` entries override the manifest's."""
    samples = one_cell_samples(per_repeat)
    m = ladder_run_manifest(name, rungs=["optmt"], profiles=["random"],
                            created=dt.datetime.fromisoformat(created.replace("Z", "+00:00")))
    m["measure"] = {**m["measure"], **manifest.pop("measure", {})}
    m["versions"] = {**m["versions"], **manifest.pop("versions", {})}
    m["gpu"] = {**m["gpu"], **manifest.pop("gpu", {})}
    return write_run(root / name, m, {"samples": samples, "cells": ladder_cells(samples)})


@lru_cache(maxsize=None)
def _pm_report(report: Path) -> Any:
    from l2attr.profile import pmsampling

    return pmsampling.read_pm_report(report)


def _read_pm_report(report: Path) -> Any:
    """The committed PM-sampling report read once per test process (seconds); a copy per run."""
    return copy.deepcopy(_pm_report(report))
