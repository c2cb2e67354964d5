"""A pin -> sync -> consumer timeline from Nsight Compute alone (no nsys on the H200).

ncu's *app-range* replay profiles one NVTX push/pop range as one result, and its PmSampling
section samples hardware counters at a fixed interval while the range runs
(docs/facts.md#pm-sampling). This module builds that ncu command (and its twin for range totals
such as the evict-last lookup counters), pm_child reads the report in a child process, and this
module turns what it read into tidy tables and finds the pin burst, the sync gap and the consumer
burst in them. Why one module for the parent's three steps: each is one function of the same
timeline's shape (its range, its interval, its sampled quantities), and nothing else calls them.

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
timestamp for the range itself (in that recording its `gpu__time_duration`, 860.5 us, is shorter
than the 925.5 us the samples span, so the sampler runs a little longer than the range). l2attr's
section no longer asks for that duration (it cost a replay); a range's `span_us` is its kernels'
own, from the first start to the last end.

ncu_report is used in a child process (pm_child, through ncu_child), as the import's is, so
this module imports no numpy/pandas at module level.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from l2attr.catalog.sampled import BUSY_KEYS, BUSY_PCT
from l2attr.catalog.sets import check_chip, derived_specs
from l2attr.errors import UserError
from l2attr.profile.ncu_child import run_reader
from l2attr.profile.ncu_cmd import report_path
from l2attr.vocab import Job, Ncu, Phase

if TYPE_CHECKING:
    import pandas as pd

CHILD = "l2attr.profile.pm_child"
SAMPLE_COLUMNS = ["range", "quantity", "t_us", "value", "unit", "metric"]
KERNEL_COLUMNS = ["range", "kernel", "start_us", "end_us"]
# duration_us: ncu's gpu__time_duration of the range, where the report holds it (recordings made
# before the timeline's one-replay section); span_us: its kernels, first start to last end, in the
# replay the samples come from
RANGE_COLUMNS = ["range", "workload", "chip", "interval_ns", "duration_us", "span_us", "pass_groups",
                 "instances", "untimed"]
HIT_RATE_KEYS = ("l2_hit_rate_pct", "l2_tex_hit_rate_pct")
PHASE_COLUMNS = ["range", "phase", "start_us", "end_us", "duration_us", "samples"]

# -- the ncu command lines -----------------------------------------------------------------------

PM_SECTION = "PmSampling"

# Shortest PM-sampling interval per chip, in ns. GH100: one microsecond, the shortest time-based
# interval seen on the H200 (docs/facts.md#pm-sampling); the recorded fixture ran at 1,500 ns. GA100 is left out on
# purpose: CUPTI's CUpti_PmSampling_SetConfig_Params (docs.nvidia.com/cupti/api/
# structCUpti__PmSampling__SetConfig__Params.html) says the time-interval trigger is "not
# supported in Turing and GA100", so there the interval counts cycles, not ns.
MIN_INTERVAL_NS: dict[str, int] = {"gh100": 1000}

# Option names, ncu 2025.3, section "PM Sampling Options" of `ncu --help`: `--pm-sampling-interval`
# (cycles or ns depending on the architecture; 0, the default, lets ncu choose),
# `--pm-sampling-buffer-size` (device-side buffer in bytes; 0, the default, lets ncu size it),
# `--pm-sampling-max-passes` (0 = automatic). They act only when a section asks for PM sampling,
# hence `--section PmSampling`. Evidence: the docs search found only CUPTI's PM-sampling pages
# (the interval is in ns for the GPU-time trigger); the option text is from a copy of the 2025.x
# `ncu --help` and public scripts passing `--pm-sampling-interval 1000` to ncu 2025.x.
OPT_INTERVAL = "--pm-sampling-interval"
OPT_BUFFER = "--pm-sampling-buffer-size"
OPT_MAX_PASSES = "--pm-sampling-max-passes"


def shortest_interval_ns(chip: str) -> int:
    chip = check_chip(chip)
    if chip not in MIN_INTERVAL_NS:
        raise UserError(f"no PM-sampling time interval known for {chip}: its PM sampler counts "
                        "cycles, not ns (CUPTI: the time-interval trigger is not supported on GA100)")
    return MIN_INTERVAL_NS[chip]


def _range_replay_argv(ncu: str, nvtx_include: str) -> list[str]:
    """App-range replay of one push/pop range, leaving caches and clocks alone (docs/facts.md#ncu-replay)."""
    if not nvtx_include or "/" not in nvtx_include:
        raise UserError(f"--nvtx-include {nvtx_include!r} matches only start/end ranges; a push/pop "
                        "range needs a trailing '/', e.g. 'step1/' or 'regex:^l2attr:.*/'")
    return [ncu, "--config-file", "off", "--replay-mode", Ncu.APP_RANGE.value,
            "--cache-control", Ncu.NONE.value, "--clock-control", Ncu.NONE.value,
            "--nvtx", "--nvtx-include", nvtx_include]


def _output_argv(output: Path | str, child: Sequence[str]) -> list[str]:
    if not child:
        raise UserError("no child command to profile")
    stem = str(report_path(output))[: -len(".ncu-rep")]
    return ["-o", stem, "-f", *child]


def timeline_ncu_argv(child: Sequence[str], output: Path | str, ncu: str, nvtx_include: str,
                      interval_ns: int | None = None, *, chip: str = "gh100",
                      buffer_bytes: int | None = None, section: str = PM_SECTION,
                      section_folder: Path | None = None, max_passes: int = 0) -> list[str]:
    """ncu over one NVTX range with PM sampling, at the chip's shortest interval unless given.

    `buffer_bytes` None leaves the buffer to ncu (`0` = sized dynamically; the fixture got 31 MB
    for 619 samples and merged none). `section` / `section_folder`: l2attr's own section
    (catalog/sampled.py write_section) instead of ncu's stock PmSampling. `max_passes` 0 lets ncu choose how
    many replays PM sampling takes.
    """
    floor = shortest_interval_ns(chip)
    interval = floor if interval_ns is None else int(interval_ns)
    if interval < floor:
        raise UserError(f"PM-sampling interval {interval} ns is below {chip}'s shortest, {floor} ns")
    argv = _range_replay_argv(ncu, nvtx_include)
    if section_folder is not None:
        argv += ["--section-folder", str(section_folder)]
    argv += ["--section", section, OPT_INTERVAL, str(interval)]
    if max_passes < 0:
        raise UserError(f"PM-sampling max passes {max_passes}: 0 (ncu decides) or at least 1")
    if max_passes:
        argv += [OPT_MAX_PASSES, str(int(max_passes))]
    if buffer_bytes is not None:
        if buffer_bytes <= 0:
            raise UserError("PM-sampling buffer size must be a positive number of bytes")
        argv += [OPT_BUFFER, str(int(buffer_bytes))]
    return argv + _output_argv(output, child)


def range_metrics_ncu_argv(child: Sequence[str], output: Path | str, ncu: str, nvtx_include: str,
                           metrics: Sequence[str]) -> list[str]:
    """ncu over one NVTX range reporting totals for the whole range (e.g. evict-last lookups)."""
    metrics = [m.strip() for m in metrics if m.strip()]
    if not metrics:
        raise UserError("no metrics to collect")
    bad = [m for m in metrics if not re.fullmatch(r"[A-Za-z0-9_.]+", m) or "__" not in m]
    if bad:
        raise UserError(f"not ncu metric names: {', '.join(bad)} (resolve set names with metricsets first)")
    argv = _range_replay_argv(ncu, nvtx_include) + ["--metrics", ",".join(metrics)]
    return argv + _output_argv(output, child)


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
            "span_us": max(k["end_us"] for k in kernels) - min(k["start_us"] for k in kernels) if kernels else None,
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


# -- the phases: pin burst, sync gap, consumer burst ---------------------------------------------
# A unit is busy from BUSY_PCT % of its peak (catalog.sampled, shared with the timeline chart);
# busy samples form bursts, and a burst with SM work is a kernel's.


def _bursts(busy: Sequence[bool], merge_samples: int) -> list[tuple[int, int]]:
    """[first, last] index runs of busy samples; runs split by <= merge_samples idle ones are joined."""
    runs: list[list[int]] = []
    for i, b in enumerate(busy):
        if not b:
            continue
        if runs and i - runs[-1][1] - 1 <= merge_samples:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return [(a, b) for a, b in runs]


def _range_phases(name: str, wide: "pd.DataFrame", busy_pct: float, merge_samples: int) -> list[dict]:
    import pandas as pd

    signals = [k for k in BUSY_KEYS if k in wide]
    if not signals or len(wide) < 2:
        return []
    busy = pd.concat([wide[k] >= busy_pct for k in signals], axis=1).any(axis=1).to_numpy()
    kernel_signs = []
    if "ctas_launched" in wide:
        kernel_signs.append(wide["ctas_launched"] > 0)
    if "sm_inst_pct_of_peak" in wide:
        kernel_signs.append(wide["sm_inst_pct_of_peak"] >= busy_pct)
    kernel = (pd.concat(kernel_signs, axis=1).any(axis=1).to_numpy() if kernel_signs
              else [True] * len(wide))
    t = wide.index.to_numpy(dtype=float)
    step = float(pd.Series(t).diff().median())
    out = [{"phase": (Phase.KERNEL if any(kernel[a:b + 1]) else Phase.OTHER).value, "start_us": float(t[a]),
            "end_us": float(t[b] + step), "samples": b - a + 1}
           for a, b in _bursts(list(busy), merge_samples)]
    kernels = [row for row in out if row["phase"] == Phase.KERNEL]
    if len(kernels) >= 2:
        pin, consumer = kernels[0], kernels[-1]
        pin["phase"], consumer["phase"] = Phase.PIN.value, Phase.CONSUMER.value
        between = int(((t >= pin["end_us"]) & (t < consumer["start_us"])).sum())
        out.append({"phase": Phase.GAP.value, "start_us": pin["end_us"], "end_us": consumer["start_us"],
                    "samples": between})
    for row in out:
        row["range"] = name
        row["duration_us"] = row["end_us"] - row["start_us"]
    return sorted(out, key=lambda r: (r["start_us"], r["phase"] != Phase.GAP))


def phases(timeline: "pd.DataFrame", busy_pct: float = BUSY_PCT, merge_samples: int = 1) -> "pd.DataFrame":
    """Bursts of activity in each range, labelled pin / gap / consumer.

    A sample is busy when the L2, DRAM or SM throughput reaches `busy_pct` % of peak; busy samples
    form bursts (idle runs of up to `merge_samples` samples do not split one). A burst with thread
    blocks launched or SM instructions is kernel work: the first is the pin, the last the
    consumer, and the span between them the gap. Busy bursts without SM work (copy engine:
    memcpy/memset) are `other`; extra kernel bursts between pin and consumer are `kernel`. A
    burst spans [first busy sample, last busy sample + one interval). Fewer than two kernel bursts
    give no pin/consumer labels; no busy signal at all gives an empty table.
    """
    import pandas as pd

    out: list[dict[str, Any]] = []
    for name, rows in timeline.groupby("range", sort=False):
        wide = rows.pivot_table(index="t_us", columns="quantity", values="value", aggfunc="first").sort_index()
        out += _range_phases(str(name), wide, busy_pct, merge_samples)
    return pd.DataFrame(out, columns=PHASE_COLUMNS)
