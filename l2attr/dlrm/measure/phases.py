"""Where a ladder run's wall time goes: named phases, summed, recorded and printed in one line.

Why: "the ladder took 48 s" says nothing about what to make faster. The manifest's `timings`
keep the phases (seconds) the run went through, and the log prints them, so a device run shows
at once whether the time went to the process start (imports, CUDA), compiling, the workloads,
the timed repeats or writing and summarising them.
"""

from __future__ import annotations

import math
import os
import time
from contextlib import contextmanager
from typing import Iterator

# Printed in this order (what is not listed follows); the manifest keeps every key.
ORDER = ("startup_s", "engine_s", "compile_s", "check_s", "workload_wait_s", "bandwidth_s", "upload_s",
         "warmup_s", "real_check_s", "repeats_s", "journal_s", "summaries_s", "total_s")
LABELS = {"startup_s": "process start (python, imports, CUDA, GPU facts)", "engine_s": "tables + engine kernels",
          "compile_s": "compile", "check_s": "checks vs torch", "workload_wait_s": "waiting for workloads",
          "workload_s": "building workloads (background)", "bandwidth_s": "bandwidths",
          "upload_s": "index uploads", "warmup_s": "warm-ups", "real_check_s": "real-data checks",
          "repeats_s": "timed repeats", "journal_s": "samples.csv appends", "summaries_s": "cell summaries",
          "total_s": "this run in all", "measure_s": "per-profile work", "table_generation_s": "table generation"}


def process_age_s() -> float:
    """Seconds since this process started (Linux /proc), NaN where that cannot be read."""
    try:
        with open("/proc/self/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as fh:
            uptime = float(fh.read().split()[0])
        return uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return math.nan


class Phases:
    """Seconds per named phase, accumulated (a phase may run once per profile)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t0)


def describe(timings: dict[str, float]) -> str:
    """One line: each phase's seconds in run order (no brackets: the console reads those as markup)."""
    keys = [k for k in ORDER if k in timings] + sorted(k for k in timings if k not in ORDER)
    parts = [f"{LABELS.get(k, k.removesuffix('_s'))} {timings[k]:.1f}" for k in keys
             if isinstance(timings[k], (int, float)) and math.isfinite(timings[k])]
    return "ladder phases, seconds: " + ", ".join(parts)
