"""The ncu command lines of a PM-sampled timeline: app-range replay of one NVTX push/pop range,
with PM sampling at the chip's shortest interval, or with the range's totals of some metrics.

ncu's *app-range* replay profiles one range as one result, and its PmSampling section samples
hardware counters at a fixed interval while the range runs (docs/facts.md#pm-sampling).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from l2attr.catalog.sets import check_chip
from l2attr.errors import UserError
from l2attr.profile.ncu_cmd import report_path
from l2attr.vocab import Ncu

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
                      buffer_bytes: int | None = None) -> list[str]:
    """ncu over one NVTX range with PM sampling, at the chip's shortest interval unless given.

    `buffer_bytes` None leaves the buffer to ncu (`0` = sized dynamically; the fixture got 31 MB
    for 619 samples and merged none).
    """
    floor = shortest_interval_ns(chip)
    interval = floor if interval_ns is None else int(interval_ns)
    if interval < floor:
        raise UserError(f"PM-sampling interval {interval} ns is below {chip}'s shortest, {floor} ns")
    argv = _range_replay_argv(ncu, nvtx_include)
    argv += ["--section", PM_SECTION, OPT_INTERVAL, str(interval)]
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
