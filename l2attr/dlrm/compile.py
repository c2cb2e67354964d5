"""Compile kernel variants with NVRTC (CuPy RawModule): seconds, no PyTorch rebuild.

A variant is a declaration: which source, which kernel, which options. Modules are cached in the
process and on disk across processes (gpu/runtime.py's kernel cache: keyed by the source, the
headers it includes, the options, the GPU's architecture and the toolchain), and each compiled
kernel reports its registers per thread and theoretical occupancy for the manifest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from l2attr.errors import UserError
from l2attr.dlrm.declare import DEFAULT_MAXRREGCOUNT, FAMILIES, FAST_DEFAULT, PIN_FUNCTIONS, PIN_SOURCE, Variant
from l2attr.gpu.runtime import (BLOCK_SPEC, FLUSH_SPEC, READ_SPEC, SPIN_SPEC, KernelSpec,  # noqa: F401
                              _module, device_arch, get_kernel)
from l2attr.vocab import ConsumerCode, Pin, Family

SCALAR_CODE = {"fp32": 0, "fp16": 1, "bf16": 2}
# the engine's kernels and compiler, re-exported: the ladder's code reaches them through this module
__all__ = ["BLOCK_SPEC", "FLUSH_SPEC", "READ_SPEC", "SPIN_SPEC", "KernelSpec", "get_kernel", "device_arch",
           "FastOptions", "consumer_spec", "pin_spec", "widest_vec", "kernel_resources", "specs_of",
           "precompile", "SCALAR_CODE", "ELEMENT_BYTES", "VECTOR_BYTES"]


@dataclass(frozen=True)
class FastOptions:
    """The fast consumer's compile-time knobs (kernels/fast_consumer.cu)."""

    unroll: int = FAST_DEFAULT.unroll              # FAST_UNROLL: row loads in flight per lane
    load: int = FAST_DEFAULT.load                  # FAST_LOAD: 0 plain, 1 L1::no_allocate, 2 + L2::256B
    maxrregcount: int = FAST_DEFAULT.maxrregcount  # 0: no register cap

    def options(self, dtype: str = "fp32", weighted: bool = False) -> list[str]:
        """The cap was tuned on unweighted fp32 and applies to those builds only: the 16-bit
        builds carry 8 fp32 accumulators per lane and the weighted ones a scale per row in flight,
        and both would spill under it (nvcc 13.0, sm_90, 6 rows in flight at 64 registers: bf16
        64 bytes, weighted fp32 24 bytes)."""
        opts = [f"-DFAST_UNROLL={self.unroll}", f"-DFAST_LOAD={self.load}"]
        capped = self.maxrregcount and dtype == "fp32" and not weighted
        return opts + ([f"--maxrregcount={self.maxrregcount}"] if capped else [])


def consumer_spec(v: Variant, dtype: str, maxrregcount: int = DEFAULT_MAXRREGCOUNT,
                  rpf_depth: int = 2, vec: int | None = None,
                  fast: FastOptions | None = None, weighted: bool = False) -> KernelSpec:
    """The consumer of a variant; RPF_DEPTH only reaches the tuned family's RPF (the artifact's is 2).

    The fast family has one entry point per vector width (`vec` elements per lane load, default
    the widest 16-byte load of the type) and weighting (`weighted`: the `_w` entry that scales
    each row by its per-sample weight) and its own knobs (`fast`, default FastOptions())."""
    opts = [f"-DSCALAR_T={SCALAR_CODE[dtype]}"]
    abi = FAMILIES[v.family].abi
    function = v.consumer_function
    if abi == Family.TUNED and v.rung.consumer == ConsumerCode.RPF:
        opts.append(f"-DRPF_DEPTH={rpf_depth}")
    if abi == Family.FAST:
        opts.extend((fast or FastOptions()).options(dtype, weighted))
        function = function.format(vec=vec or widest_vec(dtype), weighted="_w" if weighted else "")
    opts.extend(v.compile_options(maxrregcount))
    return KernelSpec(v.consumer_source, function, tuple(opts))


ELEMENT_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
VECTOR_BYTES = 16   # the widest load a lane of the fast consumer issues (ld.global.v4.b32)


def widest_vec(dtype: str) -> int:
    """Elements in one VECTOR_BYTES load: the fast consumer's default entry point for a type."""
    return VECTOR_BYTES // ELEMENT_BYTES[dtype]


def pin_spec(dtype: str, granularity: Pin | str = Pin.LINE) -> KernelSpec:
    try:
        function = PIN_FUNCTIONS[Pin(granularity)]
    except (ValueError, KeyError):
        raise UserError(f"pin granularity {granularity!r}; valid: "
                        f"{', '.join(p.value for p in PIN_FUNCTIONS)}") from None
    return KernelSpec(PIN_SOURCE, function, (f"-DSCALAR_T={SCALAR_CODE[dtype]}",))


def kernel_resources(kernel: Any, block_threads: int) -> dict[str, Any]:
    """Registers per thread and theoretical occupancy of one compiled kernel at a block size."""
    import cupy

    regs = int(kernel.num_regs)
    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    try:
        blocks = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.ptr, block_threads, 0)
    except Exception:  # older CuPy: derive from registers (allocated per warp in units of 256)
        per_warp = -(-regs * 32 // 256) * 256
        warps = -(-block_threads // 32)
        blocks = min(props["regsPerMultiprocessor"] // (per_warp * warps),
                     props["maxThreadsPerMultiProcessor"] // block_threads, 32)
    occupancy = blocks * block_threads / props["maxThreadsPerMultiProcessor"]
    return {"registers_per_thread": regs, "local_bytes": int(kernel.local_size_bytes),
            "blocks_per_sm": int(blocks), "theoretical_occupancy": round(occupancy, 4)}


def specs_of(v: Variant, dtype: str, maxrregcount: int = DEFAULT_MAXRREGCOUNT, rpf_depth: int = 2,
             fast: FastOptions | None = None) -> list[KernelSpec]:
    """Every kernel a variant compiles before it is timed: its consumer, its pin, and for the fast
    family the weighted entry its check launches (it is built without the register cap)."""
    specs = [consumer_spec(v, dtype, maxrregcount, rpf_depth, fast=fast)]
    if v.rung.pins:
        specs.append(pin_spec(dtype, v.pin))
    if FAMILIES[v.family].abi == Family.FAST:
        specs.append(consumer_spec(v, dtype, maxrregcount, rpf_depth, fast=fast, weighted=True))
    return specs


def precompile(specs: list[KernelSpec], workers: int | None = None) -> int:
    """Compile the modules of `specs` side by side (NVRTC releases the GIL), into the same
    per-process cache get_kernel reads, so the serial get_kernel calls after it find them built.

    Why: a cold cache (a fresh machine) compiled some fifteen modules one after the other, 3-4 s
    on the H200's host. The kernel cache (gpu/runtime.py) keeps every module on disk across
    processes; a warm one makes this cheap. A module that fails here is left to the serial
    call, which raises the compile error as it always did. Returns how many modules it built."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    try:
        import cupy
    except ImportError:       # no GPU stack: nothing to compile (the serial calls say so)
        return 0

    keys = list(dict.fromkeys((s.source, s.options) for s in specs))
    if len(keys) < 2:
        return 0
    try:
        arch, device = device_arch(), cupy.cuda.Device().id
    except Exception:         # CuPy without a device that answers (no GPU, no or an old driver)
        return 0              # nothing to compile ahead: the serial calls say why

    def build(key: tuple[str, tuple[str, ...]]) -> bool:
        try:
            cupy.cuda.Device(device).use()       # this thread's current context: the module loads there
            cupy.cuda.runtime.free(0)
            _module(key[0], key[1], arch)
            return True
        except Exception:
            return False

    with ThreadPoolExecutor(max_workers=max(1, min(len(keys), workers or os.cpu_count() or 1, 16))) as pool:
        return sum(pool.map(build, keys))
