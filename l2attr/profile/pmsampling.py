"""A pin -> sync -> consumer timeline from Nsight Compute alone (no nsys on the H200).

ncu's *app-range* replay profiles one NVTX push/pop range as one result, and its PmSampling
section samples hardware counters at a fixed interval while the range runs
(docs/facts.md#pm-sampling). pm_argv builds that ncu command (and its twin for range totals such as the
evict-last lookup counters), pm_child reads the report, this module turns what it read into tidy
tables, and pm_phases finds the pin burst, the sync gap and the consumer burst in them.

How a sample maps to time (checked on `range_pmsampling_pin_consume_h200.ncu-rep`): every
PM-sampled metric holds one *instance* per sample, and the instance's *correlation id* is the
GPU timestamp in ns of that sample. Consecutive ids differ by 1,472-1,536 ns around the
reported `profiler__pmsampler_interval_time` (1,500 ns; ids are quantised to 32 ns), so
time comes from the ids, never from interval x index. Instance 0 carries id 0 (no timestamp)
and is dropped: 619 instances give 618 samples.

A sample covers [t, t + interval). Read that way, each kernel's own start and end
(`profiler__timestamp_workload_{start,end}_0`, correlation ids on the same clock) fall in or
next to its first and last busy samples: the consumer starts 0.42 us into its first busy sample
and ends 0.06 us into the idle one after its last; the pin starts 0.16 us before its first busy
sample and ends inside its last. Read as (t - interval, t], the consumer's thread blocks would
launch 0.4 us before the consumer started.

`t_us` counts from the first timestamped sample, taken as the range's start: the report holds no
timestamp for the range itself (its `gpu__time_duration`, 860.5 us, is shorter than the 925.5 us
the samples span, so the sampler runs a little longer than the range).

ncu_report is used in a child process (pm_child, through ncu_child), as the import's is, so
this module imports no numpy/pandas at module level.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from l2attr.catalog.sets import derived_specs
from l2attr.errors import UserError
from l2attr.profile.ncu_child import run_reader
from l2attr.profile.pm_argv import PM_SECTION
from l2attr.vocab import Job, Ncu

if TYPE_CHECKING:
    import pandas as pd

CHILD = "l2attr.profile.pm_child"
SAMPLE_COLUMNS = ["range", "quantity", "t_us", "value", "unit", "metric"]
KERNEL_COLUMNS = ["range", "kernel", "start_us", "end_us"]
RANGE_COLUMNS = ["range", "workload", "chip", "interval_ns", "duration_us", "pass_groups", "instances", "untimed"]
HIT_RATE_KEYS = ("l2_hit_rate_pct", "l2_tex_hit_rate_pct")



# -- parent side: tables -------------------------------------------------------------------------

@dataclass
class PmTimeline:
    """What a PM-sampling report holds, as tables, plus what looked wrong."""

    samples: "pd.DataFrame"   # SAMPLE_COLUMNS: one row per sample and quantity
    kernels: "pd.DataFrame"   # KERNEL_COLUMNS: the kernels' own start/end, same time axis
    ranges: "pd.DataFrame"    # RANGE_COLUMNS: one row per range result
    warnings: list[str] = field(default_factory=list)


def _timeline_rows(action: dict[str, Any], warnings: list[str]) -> tuple[list, list, dict]:
    name = action["range"]
    rows: list[dict[str, Any]] = []
    origin = None
    instances = untimed = 0
    for key, s in action["series"].items():
        timed = [(t, v) for t, v in zip(s["ts"], s["values"]) if t > 0]
        instances = max(instances, len(s["ts"]))
        untimed = max(untimed, len(s["ts"]) - len(timed))
        if not timed:
            warnings.append(f"{name}: {key} has no timestamped samples")
            continue
        if any(b[0] <= a[0] for a, b in zip(timed, timed[1:])):
            warnings.append(f"{name}: {key} timestamps are not increasing; samples kept in report order")
        first = timed[0][0]
        origin = first if origin is None else origin
        rows += [{"range": name, "quantity": key, "t_us": (t - first) / 1e3, "value": v,
                  "unit": s["unit"], "metric": s["metric"]} for t, v in timed]
        if key in HIT_RATE_KEYS:
            bad = sum(1 for _, v in timed if not 0 <= v <= 100)
            if bad:
                warnings.append(f"{name}: {bad} {key} samples outside [0, 100]")
    for key, names in action["missing"].items():
        warnings.append(f"{name}: no PM samples for {key} (tried {', '.join(names) or 'no names for this chip'})")
    kernels = [] if origin is None else [
        {"range": name, "kernel": i, "start_us": (s - origin) / 1e3, "end_us": (e - origin) / 1e3}
        for i, (s, e) in enumerate(action["kernels"])]
    if action["workload"] != Ncu.RANGE and action["series"]:
        warnings.append(f"{name or 'a kernel'}: a kernel result, not a range one: its samples cover "
                        "one kernel, not pin -> consumer (record with --replay-mode app-range)")
    if (action["pass_groups"] or 1) > 1:
        warnings.append(f"{name}: samples come from {action['pass_groups']:.0f} passes; each "
                        "quantity's time axis starts at its own pass's first sample")
    info = {"range": name, "workload": action["workload"], "chip": action["chip"],
            "interval_ns": action["interval_ns"],
            "duration_us": None if action["duration_ns"] is None else action["duration_ns"] / 1e3,
            "pass_groups": action["pass_groups"], "instances": instances, "untimed": untimed}
    return rows, kernels, info


def read_pm_report(path: Path | str) -> PmTimeline:
    """Samples, kernel windows and per-range facts of a PM-sampling report (read in a child)."""
    import pandas as pd

    data = run_reader(CHILD, [Job.TIMELINE.value, str(path)], path)
    warnings: list[str] = []
    rows, kernels, infos = [], [], []
    for action in data["actions"]:
        if not action["series"]:  # a result without PM sampling (kernel results beside the range)
            continue
        r, k, info = _timeline_rows(action, warnings)
        rows += r
        kernels += k
        infos.append(info)
    if not rows:
        raise UserError(f"{path}: no PM-sampling samples in it (record with --section {PM_SECTION})")
    samples = pd.DataFrame(rows, columns=SAMPLE_COLUMNS)
    samples["value"] = samples["value"].astype(float)
    return PmTimeline(samples, pd.DataFrame(kernels, columns=KERNEL_COLUMNS),
                      pd.DataFrame(infos, columns=RANGE_COLUMNS), warnings)


def read_pm_timeline(path: Path | str) -> "pd.DataFrame":
    """One row per sample and quantity: range, quantity, t_us (from the range start), value, unit, metric.

    `read_pm_report` gives the same table plus kernel windows and warnings.
    """
    return read_pm_report(path).samples


def _instanced_or_derived(instanced: Sequence[str]) -> set[str]:
    """Instanced metrics plus the rates ncu_import derives from instanced hit/miss counts."""
    return set(instanced) | {d.name for d in derived_specs(instanced)}


def read_range_metrics(path: Path | str) -> "pd.DataFrame":
    """One row per range result and metric: range, metric, value (base units), unit, report, action.

    Instanced metrics are left out: a PM-sampled metric's single value is an undocumented
    aggregate over its samples (the sampled L2 hit rate reads 0.0), not a range total, and
    per-kernel launch attributes are not the range's.
    """
    import pandas as pd

    data = run_reader(CHILD, ["range-metrics", str(path)], path)
    actions = data["actions"]
    ranges = {i for i, a in enumerate(actions) if a["workload"] == Ncu.RANGE}
    if not ranges:
        raise UserError(f"{path}: no range results in it (kernel or application replay?); record "
                        "with --replay-mode app-range and an NVTX push/pop range")
    skip = {i: _instanced_or_derived(actions[i]["instanced"]) for i in ranges}
    rows = [{"range": r["nvtx_range"], "metric": r["metric"], "value": float(r["value"]),
             "unit": r["unit"], "report": r["report"], "action": r["launch"]}
            for r in data["rows"]
            if r["launch"] in ranges and r["metric"] not in skip[r["launch"]]]
    return pd.DataFrame(rows, columns=["range", "metric", "value", "unit", "report", "action"])

