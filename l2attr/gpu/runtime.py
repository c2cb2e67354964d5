"""The GPU's libraries, loaded lazily: torch and cupy (one clear line when there is no GPU), the
persisting-L2 reset, and the kernels of kernels/ compiled with NVRTC (CuPy RawModule), cached per
process.

Why one module: each is the first touch of the CUDA stack that a GPU verb needs, made on first
use so that the CPU commands never load it. The engine's own kernels (the blocking timer, the L2
flush) are compiled here the same way as a workload's, and the engine must not import any
workload to get them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType
from typing import Any

from l2attr.errors import UserError
from l2attr.source import KERNELS_DIR, data_dir

NO_GPU_HINT = ("for CPU work use `l2attr traces` (inspect/generate traces) and "
               "`l2attr report RUN_DIR` (reports from recorded runs)")


def _import(name: str, pip_hint: str) -> ModuleType:
    try:
        return __import__(name)
    except ImportError:
        raise UserError(f"{name} is not installed (pip install 'l2attr[gpu]' or {pip_hint}); "
                        f"{NO_GPU_HINT}") from None


def require_gpu(import_torch: bool = True) -> tuple[Any, Any]:
    """Return (torch, cupy) once both import and a CUDA device is visible.

    `import_torch=False` (the ladder's check before it writes anything) returns (None, cupy): torch
    is found installed but not imported, and cupy looks for the device. Why: `import torch` is
    seconds of a process's start; the ladder imports it once NVRTC and the workload builds run
    beside it (dlrm/measure/prefetch.py, head_start)."""
    if not import_torch:
        import importlib.util

        if importlib.util.find_spec("torch") is None:
            _import("torch", "a torch build for your CUDA")        # the one line of a missing torch
    torch = _import("torch", "a torch build for your CUDA") if import_torch else None
    cupy = _import("cupy", "cupy-cuda13x / cupy-cuda12x")
    try:
        available = (torch is None or torch.cuda.is_available()) and cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        available = False
    if not available:
        why = "torch.cuda.is_available() is False" if torch is not None else "cupy sees no device"
        raise UserError(f"no CUDA GPU found ({why}); {NO_GPU_HINT}")
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


# -- kernels compiled with NVRTC -----------------------------------------------------------------
@dataclass(frozen=True)
class KernelSpec:
    """One kernel: the source file under kernels/, the function and the compile options."""

    source: str
    function: str
    options: tuple[str, ...] = field(default_factory=tuple)


@lru_cache(maxsize=None)
def _module(source: str, options: tuple[str, ...], arch: str) -> Any:
    import cupy

    kdir = data_dir(KERNELS_DIR)
    code = (kdir / source).read_text()
    opts = ("--std=c++17", f"-I{kdir}", *options)  # CuPy adds -arch for the current device
    try:
        module = cupy.RawModule(code=code, options=opts, backend="nvrtc")
        module.compile()
    except cupy.cuda.compiler.CompileException as exc:
        raise UserError(f"compiling {source} {' '.join(options)} failed: "
                        f"{str(exc).splitlines()[0]}") from None
    return module


def device_arch() -> str:
    import cupy

    return f"sm_{cupy.cuda.Device().compute_capability}"


def get_kernel(spec: KernelSpec) -> Any:
    return _module(spec.source, spec.options, device_arch()).get_function(spec.function)


FLUSH_SPEC = KernelSpec("flush_l2.cu", "flush_l2", ())
UNPIN_SPEC = KernelSpec("flush_l2.cu", "flush_l2_unpin", ())
DEMOTE_SPEC = KernelSpec("flush_l2.cu", "flush_l2_demote", ())
DIRTY_SPEC = KernelSpec("flush_l2.cu", "flush_l2_dirty", ())
SPIN_SPEC = KernelSpec("flush_l2.cu", "spin_ns", ())
READ_SPEC = KernelSpec("flush_l2.cu", "read_stream", ())
BLOCK_SPEC = KernelSpec("block_timer.cu", "block_on_flag", ())
