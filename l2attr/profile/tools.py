"""The tools a profile run starts, replaceable in tests, and what they say before a run starts:
the GPU's chip (nvidia-smi), ncu's version, and which metric names ncu knows for the chip."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable, Sequence

from l2attr.catalog.sets import chip_for_compute_capability
from l2attr.errors import UserError
from l2attr.profile.metricsets import parse_query_metrics, unknown_metrics
from l2attr.profile.ncu_cmd import parse_ncu_version, query_metrics_argv, version_argv
from l2attr.profile.runner import StreamRunner, stream_run

ToolRunner = Callable[[Sequence[str], float], subprocess.CompletedProcess]


def _tool_run(argv: Sequence[str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)


@dataclass
class Tools:
    """Outside-world access of a profile run, replaceable in tests."""

    stream: StreamRunner = stream_run
    run: ToolRunner = _tool_run
    which: Callable[[str], str | None] = field(default=None)  # type: ignore[assignment]
    python: str = sys.executable

    def __post_init__(self) -> None:
        if self.which is None:
            import shutil

            self.which = shutil.which


def detect_chip(runner: Callable[[Sequence[str], float], subprocess.CompletedProcess] | None = None,
                which: Callable[[str], str | None] | None = None) -> str:
    """Chip of GPU 0 from nvidia-smi's compute_cap (no CUDA context in this process)."""
    import shutil

    which = which or shutil.which
    smi = which("nvidia-smi")
    if not smi:
        raise UserError("cannot tell the GPU's chip (nvidia-smi not found); pass --chip ga100|gh100")
    run = runner or (lambda argv, t: subprocess.run(list(argv), capture_output=True, text=True,
                                                    timeout=t, check=False))
    res = run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"], 30)
    first = (res.stdout or "").strip().splitlines()
    try:
        major, minor = first[0].strip().split(".")
        return chip_for_compute_capability(int(major), int(minor))
    except (IndexError, ValueError):
        raise UserError("cannot read the GPU's compute capability from nvidia-smi; pass --chip ga100|gh100") from None


def ncu_version(ncu: str, tools: Tools) -> str | None:
    """`ncu --version`'s version, or None when it cannot be asked."""
    try:
        res = tools.run(version_argv(ncu), 60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_ncu_version((res.stdout or "") + (res.stderr or ""))


def validate_metric_names(metrics: Sequence[str], chip: str, ncu: str | None, tools: Tools) -> str:
    """Check names against `ncu --query-metrics --chips <chip>`; unknown names are an error."""
    if not ncu:
        return "metric names not validated (ncu not found)"
    try:
        res = tools.run(query_metrics_argv(chip, ncu), 120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"metric names not validated (`ncu --query-metrics` failed: {exc})"
    available = parse_query_metrics(res.stdout or "")
    if not available:
        return "metric names not validated (`ncu --query-metrics` listed nothing)"
    bad = unknown_metrics(metrics, available)
    if bad:
        raise UserError(f"ncu does not list {', '.join(bad)} for chip {chip}; see "
                        f"`ncu --query-metrics --chips {chip}` (or pass --no-validate-metrics)")
    return f"metric names validated against `ncu --query-metrics --chips {chip}`"
