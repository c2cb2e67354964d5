"""Compile a CUDA source of kernels/ with NVRTC (CuPy RawModule), cached per process.

Why its own module: the engine's own kernels (the blocking timer, the L2 flush) are compiled the
same way as a workload's, and the engine must not import any workload to get them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from l2attr.errors import UserError
from l2attr.source import KERNELS_DIR, data_dir


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
