"""Import torch and cupy lazily, and fail with one clear line when there is no GPU."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from l2attr.errors import UserError

NO_GPU_HINT = ("for CPU work use `l2attr traces` (inspect/generate traces) and "
               "`l2attr report RUN_DIR` (reports from recorded runs)")


def _import(name: str, pip_hint: str) -> ModuleType:
    try:
        return __import__(name)
    except ImportError:
        raise UserError(f"{name} is not installed (pip install 'l2attr[gpu]' or {pip_hint}); "
                        f"{NO_GPU_HINT}") from None


def require_gpu() -> tuple[Any, Any]:
    """Return (torch, cupy) once both import and a CUDA device is visible."""
    torch = _import("torch", "a torch build for your CUDA")
    cupy = _import("cupy", "cupy-cuda13x / cupy-cuda12x")
    try:
        available = torch.cuda.is_available() and cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        available = False
    if not available:
        raise UserError(f"no CUDA GPU found (torch.cuda.is_available() is False); {NO_GPU_HINT}")
    return torch, cupy


def reset_persisting_l2() -> bool:
    """cudaCtxResetPersistingL2Cache: evict-last / persisting lines back to normal priority.

    Without it a plain flush cannot displace lines a pin left at evict-last priority
    (docs/facts.md#persisting-reset). Returns whether the reset ran (it needs cuda-python's bindings, which
    come with the GPU extras).
    """
    try:
        from cuda.bindings import runtime as cudart  # cuda-python
    except ImportError:
        try:
            from cuda import cudart  # type: ignore[no-redef]
        except ImportError:
            return False
    (err,) = cudart.cudaCtxResetPersistingL2Cache()
    return int(err) == 0
