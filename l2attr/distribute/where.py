"""Which GPU and host a worker measures on: asked in the worker, recorded by the lead per unit.

The worker's GPU is the first entry of its CUDA_VISIBLE_DEVICES (one per worker, set by the
cluster; dask-cuda rotates the list so the worker's own GPU comes first). NVML names it without
starting CUDA; where NVML is missing the entry itself stands for the UUID (a CPU test's fake
GPUs are such entries).
"""

from __future__ import annotations

import os
import socket
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Where:
    gpu_uuid: str
    gpu_name: str
    host: str
    worker: str = ""

    def columns(self) -> dict[str, str]:
        """The GPU_COLUMNS of schema.py for the rows this unit measured."""
        return {"gpu_uuid": self.gpu_uuid, "gpu_name": self.gpu_name, "host": self.host}

    def record(self) -> dict[str, Any]:
        return asdict(self)


def _nvml(entry: str) -> tuple[str, str] | None:
    try:
        import pynvml  # nvidia-ml-py
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:
        return None
    try:
        if entry.isdigit():
            handle = pynvml.nvmlDeviceGetHandleByIndex(int(entry))
        else:
            handle = pynvml.nvmlDeviceGetHandleByUUID(entry.encode() if isinstance(entry, str) else entry)
        uuid, name = pynvml.nvmlDeviceGetUUID(handle), pynvml.nvmlDeviceGetName(handle)
        as_text = (lambda v: v.decode() if isinstance(v, bytes) else str(v))  # noqa: E731
        return as_text(uuid), as_text(name)
    except Exception:
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def worker_address() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return ""


def where_am_i() -> Where:
    """This process's GPU (first CUDA_VISIBLE_DEVICES entry), host and Dask worker."""
    entry = (os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0].strip()
    found = _nvml(entry)
    uuid, name = found if found is not None else (entry, "")
    return Where(gpu_uuid=uuid, gpu_name=name, host=socket.gethostname(), worker=worker_address())
