"""The GPU's libraries, loaded lazily: torch and cupy (one clear line when there is no GPU), the
persisting-L2 reset, and the kernels of kernels/ compiled with NVRTC (CuPy RawModule), cached in the
process and on disk across processes (KernelCache).

Why one module: each is the first touch of the CUDA stack that a GPU verb needs, made on first
use so that the CPU commands never load it. The engine's own kernels (the blocking timer, the L2
flush) are compiled here the same way as a workload's, and the engine must not import any
workload to get them.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from l2attr.errors import UserError
from l2attr.source import KERNELS_DIR, data_dir

NO_GPU_HINT = ("for CPU work use `l2attr traces` (inspect/generate traces) and "
               "`l2attr report RUN_DIR` (reports from recorded runs)")


def _missing(name: str, pip_hint: str) -> UserError:
    """The one line of a GPU library that is not installed."""
    return UserError(f"{name} is not installed (pip install 'l2attr[gpu]' or {pip_hint}); {NO_GPU_HINT}")


def _import(name: str, pip_hint: str) -> ModuleType:
    try:
        return __import__(name)
    except ImportError:
        raise _missing(name, pip_hint) from None


def require_gpu(import_torch: bool = True) -> tuple[Any, Any]:
    """Return (torch, cupy) once both import and a CUDA device is visible.

    `import_torch=False` (the ladder's check before it writes anything) returns (None, cupy): torch
    is found installed but not imported, and cupy looks for the device. Why: `import torch` is
    seconds of a process's start; the ladder imports it once NVRTC and the workload builds run
    beside it (ladders/command.py head_start)."""
    if not import_torch:
        import importlib.util

        if importlib.util.find_spec("torch") is None:             # said without importing anything
            raise _missing("torch", "a torch build for your CUDA")
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


# Compiled modules are kept across processes: a fresh process compiled some fifteen modules again,
# seconds of a ladder's start. CuPy's RawModule keeps every module it compiles on disk, keyed by
# the code text, the options, the architecture and the NVRTC version, but not by the headers the
# code includes: an edited kernels/common.cuh kept its old kernels. So the code compiled here
# starts with one comment line, the hash of everything the binary depends on (kernel_key: the
# source, each kernels/ header it includes, the options, the GPU's architecture, CuPy's and
# NVRTC's versions), and CuPy's cache is the l2attr cache dir's `kernels/` folder unless the user
# set CUPY_CACHE_DIR. The compile itself is CuPy's, as before (its flags, its binaries).
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
CUPY_CACHE_ENV = "CUPY_CACHE_DIR"


def local_headers(text: str, kdir: Path) -> dict[str, str]:
    """Every header under `kdir` that `text` includes, directly or through another (name -> text)."""
    found: dict[str, str] = {}
    todo = INCLUDE.findall(text)
    while todo:
        name = todo.pop()
        if name in found or not (kdir / name).is_file():
            continue
        found[name] = (kdir / name).read_text()
        todo.extend(INCLUDE.findall(found[name]))
    return dict(sorted(found.items()))


def kernel_key(source: str, text: str, headers: dict[str, str], options: tuple[str, ...], arch: str,
               toolchain: str) -> str:
    """The hash of everything a compiled module depends on."""
    h = hashlib.sha256()
    for part in (source, text, *(f"{n}\0{t}" for n, t in headers.items()), *options, arch, toolchain):
        h.update(part.encode())
        h.update(b"\0\1")
    return h.hexdigest()[:32]


def kernel_cache_dir() -> Path | None:
    """Where compiled modules are kept: $CUPY_CACHE_DIR when the user set it, else `kernels/` in
    $L2ATTR_CACHE_DIR or in the user's cache dir for l2attr (None without platformdirs: CuPy's own
    default then)."""
    if os.environ.get(CUPY_CACHE_ENV):
        return Path(os.environ[CUPY_CACHE_ENV]).expanduser()
    if os.environ.get("L2ATTR_CACHE_DIR"):
        return Path(os.environ["L2ATTR_CACHE_DIR"]).expanduser() / KERNELS_DIR     # named as the sources' folder
    try:
        import platformdirs
    except ImportError:
        return None
    return platformdirs.user_cache_path("l2attr") / KERNELS_DIR


class KernelCache:
    """This process's compiled modules, kept on disk by `compile(code, options) -> module` (CuPy's
    RawModule, which writes each new binary into `directory`; a fake in the tests). The files this
    process added to the folder are its misses (compiled), its other modules hits (read back); the
    compiles run side by side (kc.precompile), so they are counted from the folder, not one by one."""

    def __init__(self, directory: Path | None, compile: Callable[[str, tuple[str, ...]], Any]) -> None:
        self.directory, self.compile = directory, compile
        if directory is not None:
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError:
                pass
        self._start = self._files()
        self.modules, self.seconds = 0, 0.0
        self._lock = threading.Lock()

    def _files(self) -> int:
        try:
            return sum(1 for _ in self.directory.iterdir()) if self.directory is not None else 0
        except OSError:
            return 0

    def module(self, source: str, code: str, headers: dict[str, str], options: tuple[str, ...], arch: str,
               toolchain: str) -> Any:
        """The module of `code` (a kernels/ `source`), compiled or read from the folder."""
        key = kernel_key(source, code, headers, options, arch, toolchain)
        t0 = time.perf_counter()
        module = self.compile(f"// l2attr kernel {key}\n{code}", options)
        with self._lock:
            self.modules += 1
            self.seconds += time.perf_counter() - t0
        return module

    def record(self) -> dict[str, Any]:
        """What the manifest keeps: where, and this process's modules, compiles (files it added),
        hits and seconds (summed over the threads)."""
        misses = self.modules if self.directory is None else min(self.modules, max(0, self._files() - self._start))
        return {"dir": str(self.directory) if self.directory else None, "modules": self.modules,
                "hits": self.modules - misses, "misses": misses, "seconds": round(self.seconds, 3)}


def _toolchain() -> str:
    import cupy

    try:
        nvrtc = ".".join(map(str, cupy.cuda.nvrtc.getVersion()))
    except Exception:
        nvrtc = "?"
    return f"cupy {cupy.__version__}, nvrtc {nvrtc}"


def _raw_module(code: str, options: tuple[str, ...]) -> Any:
    import cupy

    module = cupy.RawModule(code=code, options=options, backend="nvrtc")
    module.compile()
    return module


_CACHE: list[KernelCache] = []
_CACHE_LOCK = threading.Lock()


def _point_cupy_at(directory: Path) -> Path:
    """Make CuPy keep its binaries in `directory`, and return the folder it will write to. CuPy 13
    reads $CUPY_CACHE_DIR at each compile; CuPy 14 reads it once, into its disk backend, when
    `cupy.cuda.compiler` is imported, which a ladder does before its first compile: there the
    backend is replaced by one on `directory` (CuPy's own class)."""
    os.environ[CUPY_CACHE_ENV] = str(directory)
    compiler = sys.modules.get("cupy.cuda.compiler")
    backend = getattr(compiler, "_kernel_cache_backend", None)
    current = getattr(backend, "_cache_dir", None)
    if current is None or Path(current) == directory:
        return directory
    try:
        from cupy.cuda._compiler_cache import DiskKernelCacheBackend

        compiler._set_kernel_cache_backend(DiskKernelCacheBackend(str(directory)))
    except (ImportError, AttributeError, OSError):
        return Path(current)            # CuPy keeps its folder: the record names and counts that one
    return directory


def kernel_cache() -> KernelCache:
    """This process's kernel cache (made once, by the first of the compile threads to ask; CuPy's
    cache dir set where the user set none)."""
    with _CACHE_LOCK:
        if not _CACHE:
            directory = kernel_cache_dir()
            if directory is not None and not os.environ.get(CUPY_CACHE_ENV):
                directory = _point_cupy_at(directory)
            _CACHE.append(KernelCache(directory, _raw_module))
        return _CACHE[0]


def kernel_cache_record() -> dict[str, Any] | None:
    """The kernel cache's record for a manifest (None when this process compiled nothing)."""
    return _CACHE[0].record() if _CACHE else None


@lru_cache(maxsize=None)
def _module(source: str, options: tuple[str, ...], arch: str) -> Any:
    import cupy

    kdir = data_dir(KERNELS_DIR)
    code = (kdir / source).read_text()
    opts = ("--std=c++17", f"-I{kdir}", *options)  # CuPy adds -arch for the current device
    try:
        return kernel_cache().module(source, code, local_headers(code, kdir), opts, arch, _toolchain())
    except cupy.cuda.compiler.CompileException as exc:
        raise UserError(f"compiling {source} {' '.join(options)} failed: "
                        f"{str(exc).splitlines()[0]}") from None


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
