"""Facts about the GPU and software for the run manifest (what a reader needs to trust a number),
once per run, and the GPU's state (clocks, temperature, power) once per repeat.

Why one module: both record the device a number was measured on; the manifest holds the facts,
samples.csv the state beside each repeat.
"""

from __future__ import annotations

import math
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any

from l2attr import __version__
from l2attr.gpu.runtime import require_gpu
from l2attr.source import checkout_sha

CHIPS = {(8, 0): "ga100", (8, 6): "ga10x", (8, 9): "ad10x", (9, 0): "gh100", (10, 0): "gb100"}


def _run(cmd: list[str]) -> str | None:
    if not shutil.which(cmd[0]):
        return None
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


# The package folder: the repository's l2attr/ in a checkout, site-packages/l2attr in a wheel.
PACKAGE = Path(__file__).resolve().parents[1]
BUILD_INFO = "_build_info.py"


def _built_sha() -> str | None:
    """The sha hatch_build.py recorded in l2attr/_build_info.py when the wheel was built, if any."""
    try:
        from l2attr import _build_info  # type: ignore[attr-defined]
    except ImportError:
        return None
    sha = getattr(_build_info, "GIT_SHA", None)
    return sha if isinstance(sha, str) and sha else None


def git_sha() -> str:
    """The commit the code came from, never None: HEAD's sha in a git checkout (`-dirty` when the
    tracked sources differ from it), else the sha recorded when the wheel was built, else
    'unknown (<why>; source_digest identifies the code)'."""
    sha, why = checkout_sha(PACKAGE.parent)
    if sha:
        return sha
    built = _built_sha()
    if built:
        return built
    return f"unknown ({why}; source_digest identifies the code)"


def source_digest() -> str:
    """sha256 (16 hex) of the code that runs: every kernels/ and metrics/ file and l2attr/*.py.

    Recomputable from any copy of the sources, with or without git."""
    import hashlib

    from l2attr.source import KERNELS_DIR, METRICS_DIR, data_dir

    h = hashlib.sha256()
    files = sorted(p for p in PACKAGE.rglob("*.py") if p.name != BUILD_INFO)   # the same in a wheel
    for folder in (KERNELS_DIR, METRICS_DIR):
        files += sorted(p for p in data_dir(folder).iterdir() if p.is_file())
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def ncu_version() -> str | None:
    out = _run(["ncu", "--version"])
    return out.splitlines()[-1] if out else None


def gpu_facts() -> dict[str, Any]:
    torch, cupy = require_gpu()
    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    cc = (props["major"], props["minor"])
    facts: dict[str, Any] = {
        "name": props["name"].decode() if isinstance(props["name"], bytes) else props["name"],
        "compute_capability": f"{cc[0]}.{cc[1]}",
        "chip": CHIPS.get(cc, f"sm_{cc[0]}{cc[1]}"),
        "sm_count": props["multiProcessorCount"],
        "l2_bytes": props["l2CacheSize"],
        "persisting_l2_max_bytes": props.get("persistingL2CacheMaxSize"),
        "access_policy_max_window_bytes": props.get("accessPolicyMaxWindowSize"),
        "memory_bytes": props["totalGlobalMem"],
        "memory_bus_bits": props.get("memoryBusWidth"),
        "regs_per_sm": props.get("regsPerMultiprocessor"),
        "max_threads_per_sm": props.get("maxThreadsPerMultiProcessor"),
        "driver_cuda": cupy.cuda.runtime.driverGetVersion(),
        "runtime_cuda": cupy.cuda.runtime.runtimeGetVersion(),
    }
    facts.update(identity(torch))
    select = [f"--id={facts['uuid']}"] if facts.get("uuid") else []
    smi = _run(["nvidia-smi", *select, "--query-gpu=driver_version,clocks.sm,clocks.mem,clocks.max.sm,"
                "clocks.max.mem,power.limit,ecc.mode.current,persistence_mode",
                "--format=csv,noheader,nounits"])
    if smi:
        keys = ("driver", "sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz", "max_mem_clock_mhz",
                "power_limit_w", "ecc_mode", "persistence_mode")
        facts.update(dict(zip(keys, [v.strip() for v in smi.splitlines()[0].split(",")])))
    return facts


def identity(torch: Any) -> dict[str, Any]:
    """Which physical GPU and host measured a run: two runs are "one machine" only if these agree."""
    uuid = ""
    try:
        raw = str(torch.cuda.get_device_properties(torch.cuda.current_device()).uuid)
        uuid = raw if raw.startswith("GPU-") else f"GPU-{raw}"
    except Exception:
        pass
    return {"uuid": uuid, "host": platform.node()}


def software_versions() -> dict[str, Any]:
    return {**tool_versions(), **module_versions()}


def tool_versions() -> dict[str, Any]:
    """The versions that need no import (git and ncu are subprocesses): a ladder asks for them on a
    thread while it imports torch."""
    return {"l2attr": __version__, "git_sha": git_sha(), "source_digest": source_digest(),
            "python": platform.python_version(), "ncu": ncu_version()}


def module_versions() -> dict[str, Any]:
    """The libraries' versions, importing each (after torch is imported, that costs nothing)."""
    versions: dict[str, Any] = {}
    from importlib import metadata

    for mod, dist in (("torch", "torch"), ("cupy", None), ("numpy", "numpy"), ("pandas", "pandas"),
                      ("nvtx", "nvtx"), ("ncu_report", "ncu-report")):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:
            try:
                versions[mod] = metadata.version(dist) if dist else None
            except Exception:
                versions[mod] = None
    return versions


# -- telemetry: read once per repeat -------------------------------------------------------------
# GPU clocks, temperature, power and clock-event reasons through NVML. A repeat whose medians move
# while the clocks move is a GPU-state effect, not a kernel effect; recording them next to the
# samples lets a reader tell the two apart. Needs nvidia-ml-py (pynvml); without it the columns
# stay empty.
TELEMETRY_COLUMNS = ("sm_clock_mhz", "mem_clock_mhz", "gpu_temp_c", "power_w", "clock_event_reasons")


class Telemetry:
    def __init__(self, device_index: int = 0) -> None:
        self._nvml: Any = None
        self._handle: Any = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
        except Exception:
            self._nvml = None

    @property
    def available(self) -> bool:
        return self._nvml is not None

    def read(self) -> dict[str, float]:
        out = {c: math.nan for c in TELEMETRY_COLUMNS}
        if not self._nvml:
            return out
        n, h = self._nvml, self._handle
        probes = {
            "sm_clock_mhz": lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM),
            "mem_clock_mhz": lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM),
            "gpu_temp_c": lambda: n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU),
            "power_w": lambda: n.nvmlDeviceGetPowerUsage(h) / 1000.0,
            "clock_event_reasons": lambda: (
                n.nvmlDeviceGetCurrentClocksEventReasons(h)
                if hasattr(n, "nvmlDeviceGetCurrentClocksEventReasons")
                else n.nvmlDeviceGetCurrentClocksThrottleReasons(h)),
        }
        for key, probe in probes.items():
            try:
                out[key] = float(probe())
            except Exception:
                pass
        return out
