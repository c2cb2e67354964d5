"""The Nsight Compute command line, built in one place and refused when it would erase L2.

Cross-kernel L2 residency is the very thing layer B measures, and three ncu defaults destroy it
or distort it (docs/facts.md#ncu-replay):

* `--replay-mode kernel` (the default) saves device memory before a kernel's first pass and
  restores it before later ones; caches are never kept. The L2 lines the pin kernel left behind
  do not survive into the consumer's passes: on the H200 the consumer read 35.55 % hits without
  and 35.53 % with the pin. Application replay reruns the whole program per pass instead and
  showed 33.68 % vs 49.32 %. Kernel replay is refused unless acknowledged.
* `--cache-control all` (the default) flushes all caches before every pass of every profiled
  kernel: the consumer always starts from a cold L2. Refused unless acknowledged.
* `--clock-control base` (the default) locks clocks to base. Sector counts are unaffected but
  durations are not comparable with layer A's CUDA-event times: allowed with a warning.

NVTX filter (docs/facts.md#nvtx-filter): a plain `--nvtx-include` matches only push/pop ranges and splits on
`/`. l2attr's ranges live in its own NVTX domain with `:` separators; the include is
`regex:l2attr@(pin|consumer):.*/` (l2attr.names.NVTX_INCLUDE), which is what worked on the H200.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from l2attr.errors import UserError
from l2attr.vocab import Ncu, APP_REPLAY_BUFFERS, APP_REPLAY_MATCHES, APP_REPLAY_MODES, CACHE_CONTROLS, CLOCK_CONTROLS
from l2attr.names import NVTX_INCLUDE

REPLAY_MODES = (Ncu.APPLICATION.value, Ncu.KERNEL.value)   # the replays l2attr runs

KERNEL_REPLAY_ACK = "--i-know-kernel-replay-erases-l2"
CACHE_FLUSH_ACK = "--i-know-cache-control-erases-l2"


@dataclass(frozen=True)
class NcuOptions:
    """How ncu replays and what it leaves alone; the defaults keep the pin's L2 state intact."""

    replay_mode: str = Ncu.APPLICATION.value
    cache_control: str = Ncu.NONE.value
    clock_control: str = Ncu.NONE.value
    # Kernels of all cells share names and grids, so matching falls back to execution order;
    # 'strict' makes ncu fail loudly if that order ever differs between passes, instead of
    # silently pairing counters of different cells.
    app_replay_match: str = Ncu.GRID.value
    app_replay_mode: str = Ncu.STRICT.value
    # Where ncu keeps the passes' data until the report is made (docs/facts.md#ncu-replay):
    # it changes when the report is written, not what a pass measures.
    app_replay_buffer: str = Ncu.FILE.value
    nvtx_include: tuple[str, ...] = (NVTX_INCLUDE,)
    allow_kernel_replay: bool = False
    allow_cache_flush: bool = False
    extra: tuple[str, ...] = field(default=())


def check_options(opts: NcuOptions) -> list[str]:
    """Refuse settings that erase the L2 state under study; return warnings for milder ones."""
    if opts.replay_mode not in REPLAY_MODES:
        raise UserError(f"--replay-mode {opts.replay_mode!r}: use one of {', '.join(REPLAY_MODES)} "
                        "(range replays report whole ranges and save/restore memory like kernel replay)")
    if opts.cache_control not in CACHE_CONTROLS:
        raise UserError(f"--cache-control {opts.cache_control!r}: use one of {', '.join(CACHE_CONTROLS)}")
    if opts.clock_control not in CLOCK_CONTROLS:
        raise UserError(f"--clock-control {opts.clock_control!r}: use one of {', '.join(CLOCK_CONTROLS)}")
    if opts.app_replay_mode not in APP_REPLAY_MODES:
        raise UserError(f"--app-replay-mode {opts.app_replay_mode!r}: use one of {', '.join(APP_REPLAY_MODES)}")
    if opts.app_replay_buffer not in APP_REPLAY_BUFFERS:
        raise UserError(f"--app-replay-buffer {opts.app_replay_buffer!r}: use one of {', '.join(APP_REPLAY_BUFFERS)}")
    if opts.app_replay_match not in APP_REPLAY_MATCHES:
        raise UserError(f"--app-replay-match {opts.app_replay_match!r}: use one of {', '.join(APP_REPLAY_MATCHES)}")
    warnings = []
    if opts.replay_mode == Ncu.KERNEL:
        if not opts.allow_kernel_replay:
            raise UserError(
                "kernel replay refused: it saves and restores device memory around every pass and "
                "never keeps caches, so the L2 state built by the pin kernel does not survive into "
                "the consumer (H200: consumer hit rate 35.55 % without pin, 35.53 % with). Use the "
                f"default application replay, or add {KERNEL_REPLAY_ACK} to measure it anyway")
        warnings.append("kernel replay: the consumer's L2 counters do not see the pin's effect "
                        "(memory is restored between passes); compare with application replay")
    if opts.cache_control == Ncu.ALL:
        if not opts.allow_cache_flush:
            raise UserError(
                "--cache-control all refused: ncu would flush every cache before each pass of each "
                "profiled kernel, so every consumer starts from a cold L2 and the pin can never help. "
                f"Use the default --cache-control none, or add {CACHE_FLUSH_ACK} to measure it anyway")
        warnings.append("cache control 'all': L2 is flushed before every profiled kernel")
    if opts.clock_control == Ncu.BASE:
        warnings.append("clock control 'base': clocks locked to base; sector counts are unaffected "
                        "but kernel durations are not comparable with `l2attr ladder` timings")
    return warnings


def build_ncu_argv(child: Sequence[str], metrics: Sequence[str], output: Path | str,
                   opts: NcuOptions = NcuOptions(), ncu: str = "ncu") -> list[str]:
    """The full ncu command line: profiler options, metrics, report path, then the child.

    `output` is the report path without the `.ncu-rep` suffix (ncu appends it).
    """
    check_options(opts)
    if not metrics:
        raise UserError("no metrics to collect")
    if not child:
        raise UserError("no child command to profile")
    output = str(output)
    if output.endswith(".ncu-rep"):
        output = output[: -len(".ncu-rep")]
    argv = [
        ncu,
        "--config-file", "off",   # a user's config.ncu-cfg must not change what we measure
        "--replay-mode", opts.replay_mode,
    ]
    if opts.replay_mode == Ncu.APPLICATION:
        argv += ["--app-replay-match", opts.app_replay_match, "--app-replay-mode", opts.app_replay_mode]
        if opts.app_replay_buffer != Ncu.FILE:      # ncu's default is left unsaid, as on the runs that hold it
            argv += ["--app-replay-buffer", opts.app_replay_buffer]
    argv += ["--cache-control", opts.cache_control, "--clock-control", opts.clock_control]
    if opts.nvtx_include:
        argv.append("--nvtx")
        for pattern in opts.nvtx_include:
            argv += ["--nvtx-include", pattern]
    argv += ["--metrics", ",".join(metrics)]
    argv += list(opts.extra)
    argv += ["-o", output, "-f"]
    argv += list(child)
    return argv


def report_path(output: Path | str) -> Path:
    """Where ncu writes the report for `-o output`."""
    output = str(output)
    return Path(output if output.endswith(".ncu-rep") else output + ".ncu-rep")


def query_metrics_argv(chip: str, ncu: str = "ncu") -> list[str]:
    """Base metric names of a chip; works offline, without a GPU."""
    return [ncu, "--query-metrics", "--chips", chip]


def version_argv(ncu: str = "ncu") -> list[str]:
    return [ncu, "--version"]


def parse_ncu_version(text: str) -> str | None:
    """`Version 2025.3.1.0 (build ...)` -> `2025.3.1.0`."""
    m = re.search(r"Version\s+(\d+(?:\.\d+)+)", text)
    return m.group(1) if m else None


__all__ = [
    "NVTX_INCLUDE", "NcuOptions", "check_options", "build_ncu_argv", "report_path",
    "query_metrics_argv", "version_argv", "parse_ncu_version", "KERNEL_REPLAY_ACK", "CACHE_FLUSH_ACK",
]
