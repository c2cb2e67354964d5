"""`--workers N` / `--scheduler ADDRESS`: parsed and refused before any GPU is looked for.

Why here and not in each command: the four commands that distribute (ladder, sweep, profile,
the tuning benchmark) must refuse the same mistakes with the same line: Dask missing, N < 1,
more workers than visible GPUs, an address that is no address, both flags at once.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

from l2attr.errors import UserError

INSTALL_HINT = "pip install -e '.[gpu,cluster]' (dask, distributed, dask-cuda)"
# tcp://host:port, tls://host:port, or host:port; ucx too where distributed-ucxx is installed
ADDRESS = re.compile(r"^(?:(tcp|tls|ucx|inproc)://)?(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_][A-Za-z0-9_.-]*)(?::(\d{1,5}))?/?$")


@dataclass(frozen=True)
class Distribute:
    """Where a run's units go: `workers` local processes (one per GPU), or a running scheduler."""

    workers: int | None = None
    scheduler: str | None = None
    slots: tuple[str, ...] = ()        # CUDA_VISIBLE_DEVICES value of each local worker

    def manifest(self) -> dict[str, Any]:
        return {"workers": self.workers, "scheduler": self.scheduler or "local", "slots": list(self.slots)}


def add_arguments(p: argparse.ArgumentParser | Any) -> None:
    """The two flags, in their own group (argparse parser or group)."""
    g = p.add_argument_group("many GPUs (Dask; pip install -e '.[gpu,cluster]')") \
        if hasattr(p, "add_argument_group") else p
    g.add_argument("--workers", type=int, default=None, metavar="N",
                   help="split the run into units and measure them in N local worker processes, one per "
                        "visible GPU (CUDA_VISIBLE_DEVICES per worker); default: one process, as before")
    g.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="send the units to a running Dask scheduler (tcp://host:8786) whose workers were "
                        "started one per GPU with `--resources GPU=1` (dask-cuda-worker does the pinning)")


def dask_installed() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("dask", "distributed"))


def visible_gpus() -> list[str]:
    """The GPUs this machine shows, as CUDA_VISIBLE_DEVICES entries, without starting CUDA:
    CUDA_VISIBLE_DEVICES itself when set, else NVML's device UUIDs, else `nvidia-smi -L`."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        out = []
        for entry in (e.strip() for e in env.split(",")):
            if not entry or entry.startswith("-"):
                break                       # CUDA stops at the first invalid entry
            out.append(entry)
        return out
    try:
        import pynvml  # nvidia-ml-py

        pynvml.nvmlInit()
        try:
            return [_text(pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(i)))
                    for i in range(pynvml.nvmlDeviceGetCount())]
        finally:
            pynvml.nvmlShutdown()
    except Exception:
        pass
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        text = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return re.findall(r"\(UUID: (GPU-[0-9a-fA-F-]+)\)", text)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def check_address(text: str) -> str:
    m = ADDRESS.match(text.strip())
    if not m or (m.group(3) is not None and not 0 < int(m.group(3)) < 65536):
        raise UserError(f"--scheduler {text!r}: not a scheduler address; give tcp://HOST:PORT (e.g. "
                        "tcp://10.0.0.5:8786)")
    scheme = m.group(1) or "tcp"
    port = m.group(3) or "8786"
    return f"{scheme}://{m.group(2)}:{port}"


def refuse_with(workers: int | None, scheduler: str | None, flag: str, given: bool, why: str) -> None:
    """--workers/--scheduler with a flag they cannot serve: one line before Dask or any GPU is
    looked for (from_flags asks for the visible GPUs, which would answer first on a machine without)."""
    if given and (workers is not None or scheduler is not None):
        used = "--workers" if workers is not None else "--scheduler"
        raise UserError(f"{used} with {flag}: {why}")


def from_flags(workers: int | None, scheduler: str | None) -> Distribute | None:
    """The run's distribution from --workers / --scheduler, or None for today's one-process path;
    UserError for a bad flag."""
    if workers is None and scheduler is None:
        return None
    if workers is not None and scheduler is not None:
        raise UserError("give --workers N (local workers, one per GPU) or --scheduler ADDRESS (a running "
                        "cluster), not both")
    if workers is not None and workers < 1:
        raise UserError(f"--workers must be at least 1, got {workers}")
    if not dask_installed():
        flag = "--workers" if workers is not None else "--scheduler"
        raise UserError(f"{flag} needs Dask, which is not installed: {INSTALL_HINT}")
    if scheduler is not None:
        return Distribute(scheduler=check_address(scheduler))
    gpus = visible_gpus()
    if workers > len(gpus):
        seen = f"{len(gpus)} GPU{'s' if len(gpus) != 1 else ''} visible" if gpus else "no GPU visible"
        raise UserError(f"--workers {workers}: one worker per GPU, and {seen} here"
                        + (f" ({', '.join(gpus)})" if gpus else " (CUDA_VISIBLE_DEVICES, NVML, nvidia-smi)"))
    return Distribute(workers=workers, slots=tuple(gpus[:workers]))
