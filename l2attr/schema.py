"""The run-directory schema, defined once: every writer and reader goes through these tables.

A run directory `runs/<UTC time>-<name>/` holds `manifest.json` and tidy CSV tables. Units are in
column names (`_us`, `_bytes`, `_GBps`); one row is one measurement (or one summary of a cell).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from l2attr.errors import UserError

SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)  # version 1: before kernel families (see rundir.upgrade_v1)


@dataclass(frozen=True)
class Table:
    name: str            # file name without .csv
    columns: dict[str, str]  # column -> description (units in the name)
    key: tuple[str, ...]     # columns that identify a row
    optional: dict[str, str] = field(default_factory=dict)  # may be present (newer writers)

    @property
    def filename(self) -> str:
        return f"{self.name}.csv"


SAMPLES = Table(
    "samples",
    {
        "family": "kernel family: artifact, tuned or reference (torch)",
        "rung": "ladder rung (baseline, optmt, rpf_optmt, l2p_optmt, combined, torch)",
        "pin": "pin granularity: line, element or none (rung without a pin)",
        "profile": "reuse profile or trace name",
        "l2_state": "cache policy between calls: natural, flush or flush_after_pin",
        "repeat": "repeat index of the whole cell (0-based; device and host repeats alternate)",
        "batch": "batch index (warm-up batches are not recorded)",
        "table": "embedding table index",
        "pin_time_us": "timer kernel: CUDA-event time of the pin kernel (device repeats of pinning rungs)",
        "consumer_time_us": "timer kernel: CUDA-event time of the consumer kernel (device repeats)",
        "consumer_artifact_time_us": "timer artifact: event -> consumer launch -> stream sync -> event, "
                                     "the artifact's own number (host repeats)",
        "call_wall_time_us": "timer wall: host time of the whole call, [pin -> stream sync ->] event -> "
                             "consumer -> sync -> event -> event sync (host repeats)",
    },
    ("family", "rung", "pin", "profile", "l2_state", "repeat", "batch", "table"),
    optional={
        "launch_lag_us": "host time to enqueue the timed kernel and its events (worst of pin and consumer); "
                         "the blocking timer's GPU waits for it; under the spin timer, >= the spin means the "
                         "event may hold host time",
        "timer_discard": "kernel timer's flag for the sample: '' clean, timeout (blocking timer gave up "
                         "waiting), late (spin timer: launch after the spin ended), throttled",
        "sm_clock_mhz": "NVML SM clock at the end of the repeat (same for all its rows)",
        "mem_clock_mhz": "NVML memory clock at the end of the repeat",
        "gpu_temp_c": "NVML GPU temperature, the higher of repeat start and end",
        "power_w": "NVML board power at the end of the repeat",
        "clock_event_reasons": "NVML clock event (throttle) reason bitmask at the end of the repeat",
        "pin_wall_time_us": "timer wall: host time of the pin step, pin launch -> stream sync (host repeats of "
                            "pinning rungs): the pin's launch + kernel + sync, charged by name",
        "prepare_wall_time_us": "timer wall: host time of the window's host call before the consumer "
                                "(cuStreamSetAttribute; device repeats of APW+OptMT, outside the kernel timer)",
        "window_setaside_us": "host time of the window's persisting-L2 set-aside at the start of the repeat "
                              "(cuCtxSetLimit; APW+OptMT, same for all its rows)",
        "window_reset_us": "host time of clearing the window, resetting persisting lines and restoring the "
                           "set-aside at the end of the repeat (APW+OptMT, same for all its rows)",
    },
)

# Where a unit of a run was measured (l2attr/distribute: one process per GPU, several GPUs or hosts):
# optional columns of the tables a distributed run writes; a run of one process records its GPU in
# the manifest's `gpu` instead (an empty value here means the same).
GPU_COLUMNS = {
    "gpu_uuid": "UUID of the GPU that measured the row's unit (distributed runs; empty: the manifest's gpu)",
    "gpu_name": "name of that GPU (distributed runs)",
    "host": "host name of the machine that measured it (distributed runs)",
}

CELLS = Table(
    "cells",
    {
        "family": "kernel family: artifact, tuned or reference",
        "rung": "ladder rung",
        "pin": "pin granularity: line, element or none",
        "profile": "reuse profile or trace name",
        "l2_state": "natural, flush or flush_after_pin",
        "quantity": "pin, consumer, kernels (pin + consumer of one call) or call (the whole call)",
        "timer": "kernel (CUDA events, blocking or spin timer), artifact (the artifact's event/sync timer) or wall (host clock)",
        "n_samples": "samples kept (cold first sample dropped)",
        "median_us": "median time",
        "p10_us": "10th percentile",
        "p90_us": "90th percentile",
        "ci95_lo_us": "bootstrap 95% CI of the median, low end",
        "ci95_hi_us": "bootstrap 95% CI of the median, high end",
        "bytes_per_call": "bytes the consumer must read per call (rows + indices + offsets); 0 for other quantities",
        "achieved_GBps": "bytes_per_call / median (consumer, kernel timer only)",
    },
    ("family", "rung", "pin", "profile", "l2_state", "quantity", "timer"),
    optional={**GPU_COLUMNS,
              "stopped": "adaptive repeats (measure/adaptive.py): target (its 95% interval closed) or limit "
                         "(max repeats or seconds first: noisy, stopped at the limit); absent in a fixed run"},
)

UNITS = Table(
    "units",
    {
        "unit": "unit id: what one worker measured in one go (ladder:artifact:reuse_high, "
                "sweep:tuned:random, ncu:sweep-fast-random)",
        **GPU_COLUMNS,
        "worker": "Dask worker address that ran it",
        "started_utc": "when the worker started the unit (ISO time, UTC)",
        "wall_s": "seconds the unit took on its worker",
    },
    ("unit",),
)

METRICS = Table(
    "metrics",
    {
        "cell": "profiled cell id (family:rung:pin:profile:l2_state, or a control name)",
        "condition": "ladder | control_after_pin | control_after_flush",
        "role": "pin | consumer",
        "family": "kernel family: artifact, tuned or reference",
        "rung": "ladder rung",
        "pin": "pin granularity: line | element | none ('' when the range name did not say)",
        "profile": "reuse profile",
        "table": "embedding table index",
        "batch": "batch index",
        "kernel": "kernel function name",
        "nvtx_range": "innermost NVTX push/pop range of the kernel launch",
        "metric": "Nsight Compute metric name",
        "value": "value in the metric's base unit",
        "unit": "unit as Nsight Compute reports it (byte, sector, %, ns, ...)",
    },
    ("cell", "condition", "role", "table", "batch", "metric"),
    optional={  # kept for traceability (profile.ncu_import writes them)
        "l2_state": "L2 state the range name says the call ran under",
        "report": "the .ncu-rep file the kernel was read from",
        "launch": "the kernel's launch index in its report",
    },
)

TIMELINE = Table(
    "timeline",
    {
        "range": "NVTX range (l2attr@call:...) the samples belong to",
        "quantity": "PM-sampling quantity key (metrics/pmsampling.toml)",
        "t_us": "time from the range's first timestamped sample",
        "value": "sampled value (%, % of peak, count)",
        "unit": "unit as Nsight Compute reports it",
        "metric": "ncu metric name the value came from",
    },
    ("range", "quantity", "t_us"),
)

PHASES = Table(
    "phases",
    {
        "range": "NVTX range",
        "phase": "pin, gap, consumer, kernel (other kernel work) or other (no SM work: copy engine)",
        "start_us": "phase start, same clock as timeline.csv",
        "end_us": "phase end",
        "duration_us": "end - start",
        "samples": "PM samples in the phase",
    },
    ("range", "phase", "start_us"),
)

EXP_SAMPLES = Table(
    "exp_samples",
    {
        "experiment": "experiment name (the user's label)",
        "condition": "natural, no_producer, flush_before_call, flush_after_producer or reset_after_producer",
        "repeat": "repeat index (0-based; device and host repeats alternate)",
        "mode": "device (kernel timer per kernel) or host (host clock)",
        "call": "call index within the repeat (warm-up calls and the cold first call are not recorded)",
        "producer_time_us": "timer kernel: the producer's CUDA-event time (device repeats with a producer)",
        "consumer_time_us": "timer kernel: the consumer's CUDA-event time (device repeats)",
        "producer_wall_us": "timer wall: host clock around producer launch -> stream sync (host repeats)",
        "consumer_wall_us": "timer wall: host clock around consumer launch -> stream sync (host repeats)",
        "call_wall_us": "timer wall: producer_wall_us + consumer_wall_us (the control between them excluded)",
        "producer_enqueue_us": "host time to enqueue the producer's events and launches (device repeats)",
        "consumer_enqueue_us": "host time to enqueue the consumer's events and launches (device repeats)",
        "sm_clock_mhz": "SM clock measured by the blocking timer right before the consumer (NaN: spin timer)",
        "discard": "'' kept; timeout, late or throttled: not in the cells (recorded, never silently dropped)",
    },
    ("experiment", "condition", "repeat", "call"),
)

EXP_CELLS = Table(
    "exp_cells",
    {
        "experiment": "experiment name",
        "condition": "the L2 condition of the cell",
        "quantity": "producer, consumer, kernels (producer + consumer of one call) or call",
        "timer": "kernel (CUDA events, blocking or spin timer) or wall (host clock)",
        "n_samples": "samples kept",
        "n_discarded": "samples discarded (timeout, late, throttled)",
        "median_us": "median time",
        "p10_us": "10th percentile",
        "p90_us": "90th percentile",
        "ci95_lo_us": "bootstrap 95% CI of the median, low end",
        "ci95_hi_us": "bootstrap 95% CI of the median, high end",
    },
    ("experiment", "condition", "quantity", "timer"),
    optional={"stopped": "adaptive repeats (until_rel_ci, measure/adaptive.py): target or limit (noisy, "
                         "stopped at the limit); absent in a fixed run"},
)

EXP_METRICS = Table(
    "exp_metrics",
    {
        "experiment": "experiment name (from the NVTX range)",
        "condition": "the L2 condition the call ran under ('' for a user's own annotate() range)",
        "role": "producer | consumer",
        "call": "call index within the profiled repeat (launch order for annotate() ranges)",
        "kernel": "kernel function name",
        "launch": "launch index in the report (kernels of one range are told apart by it)",
        "nvtx_range": "innermost NVTX push/pop range of the kernel launch",
        "metric": "Nsight Compute metric name",
        "value": "value in the metric's base unit",
        "unit": "unit as Nsight Compute reports it",
    },
    ("experiment", "condition", "role", "call", "launch", "metric"),
)

STEP_KERNELS = Table(
    "step_kernels",
    {
        "condition": "natural (L2 as the program leaves it), cold (clean-flushed before every kernel: graph "
                     "surgery; before every op: the eager per-op method) or cold_dirty (flushed, then one L2 of "
                     "useless dirty lines before every kernel: the write-back-paying cold arm)",
        "step": "step index within the run (natural and cold steps alternate)",
        "op_index": "the aten op that launched the kernel (step_ops.csv; -1: outside any recorded op; -2: a "
                    "CUDA graph's replayed kernel that the eager step does not have)",
        "kernel_index": "order of the kernel among its op's kernels (eager per-op method: only index 0 meets "
                        "the flush; graph surgery: every kernel does)",
        "kernel": "kernel function name (CUPTI)",
        "duration_us": "kernel duration (CUPTI activity record, no events)",
        "start_us": "kernel start on the trace clock",
        "stream": "CUDA stream",
    },
    ("condition", "step", "op_index", "kernel_index"),
    optional={"node": "graph surgery: the kernel node's position among the captured graph's kernel nodes "
                      "(creation order: the order the cold arms run them in)"},
)

STEP_OPS = Table(
    "step_ops",
    {
        "op_index": "position of the aten op in the step (TorchDispatchMode order)",
        "op": "aten op name",
        "module": "nn.Module class path active when it was dispatched",
        "flushed_in_cold": "whether the cold condition flushed L2 before it (views are not flushed)",
        "inputs": "JSON list of [data_ptr, nbytes] of the CUDA tensors it read",
        "outputs": "JSON list of [data_ptr, nbytes] of the CUDA tensors it returned",
    },
    ("op_index",),
    optional={
        "view": "whether the op is a view (launches nothing, writes nothing: never an edge's producer or consumer)",
    },
)

STEP_TIMES = Table(
    "step_times",
    {
        "repeat": "repeat index",
        "step_us": "the whole step, natural L2, untraced: blocking-timer CUDA events around its launches",
        "discard": "'' kept; timeout or throttled (recorded, not summarised)",
    },
    ("repeat",),
)

STEP_DRAM = Table(
    "step_dram",
    {
        "cache_control": "Nsight Compute --cache-control: none (the L2 as left) or all (flushed before each kernel)",
        "op_index": "the op whose NVTX range `op:<index>` held the kernel",
        "kernel_index": "launch order of the kernel inside its op",
        "kernel": "kernel function name",
        "launch": "launch index in its report",
        "key": "metric key (metrics/*.toml): dram_read or dram_write",
        "metric": "Nsight Compute metric name",
        "value": "bytes",
    },
    ("cache_control", "op_index", "kernel_index", "key"),
)

KERNEL_EDGES = "edges_kernel_level"   # manifest key: true when step_edges.csv joins kernel nodes, not ops

STEP_EDGES = Table(
    "step_edges",
    {
        "edge": "edge index in the run (0: the edge measured first, the top one)",
        "producer": "op index of the producer (step_ops.csv); the kernel node (step_kernels.csv `node`) when "
                    "the manifest's edges_kernel_level is true",
        "consumer": "op index of the consumer, or its kernel node likewise",
        "bytes": "bytes of the consumer's inputs that the producer wrote (op-level), or of the allocator blocks "
                 "both kernels' pointer arguments name (kernel-level): what edge_cold leaves cold",
        "arm": "natural (L2 as the step leaves it), cold (read-flushed before the consumer), rewarmed "
               "(flushed, then every input of the consumer read back: the control) or edge_cold (flushed, "
               "every input read back except the producer's bytes)",
        "repeat": "repeat index (the arms of one repeat run back to back, their order rotating)",
        "consumer_us": "the consumer op's kernels, summed, or the consumer kernel (CUPTI activity durations)",
        "n_kernels": "number of kernels the consumer op launched in that step",
        "warmed_bytes": "bytes read back into L2 right before the consumer (0 for natural and cold)",
    },
    ("edge", "arm", "repeat"),
)

# The fast family's tuning table (examples/tuning/fast_tuning.csv): one row per launch point and
# profile; these columns identify the point (benchmarks/tune_fast.py writes them).
TUNING_KNOBS = ("warps_per_bag", "bags_per_block", "unroll", "load", "maxrregcount")

TABLES = {t.name: t for t in (SAMPLES, CELLS, METRICS, TIMELINE, PHASES, EXP_SAMPLES, EXP_CELLS, EXP_METRICS,
                              STEP_KERNELS, STEP_OPS, STEP_TIMES, STEP_DRAM, STEP_EDGES, UNITS)}


def check_frame(df: pd.DataFrame, table: Table, source: str) -> pd.DataFrame:
    """Refuse a table that lacks the schema's columns: a clear error, not a KeyError later."""
    missing = [c for c in table.columns if c not in df.columns]
    if missing:
        raise UserError(f"{source}: not an l2attr '{table.name}' table (missing columns: {', '.join(missing)})")
    return df


def empty(table: Table) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="object") for c in table.columns})


def markdown_doc() -> str:
    """The schema as Markdown, for the README (kept in sync by a test)."""
    lines = []
    for t in TABLES.values():
        lines.append(f"**`{t.filename}`** (key: {', '.join(t.key)})\n")
        lines.append("| column | meaning |\n|---|---|")
        lines.extend(f"| `{c}` | {d} |" for c, d in t.columns.items())
        lines.extend(f"| `{c}` (optional) | {d} |" for c, d in t.optional.items())
        lines.append("")
    return "\n".join(lines)
