"""The Llama-shaped decoder layer of llama_layer.py under torch.compile: decode (batch 8, KV 4K) and prefill (512).

`torch.compile(layer, fullgraph=True, dynamic=False)` in the default mode: Inductor's Triton
kernels (fused norms, SiLU x up, the KV-cache writes) plus the GEMMs and attention it leaves to
cuBLAS / the SDPA kernels. Why ship it: a compiled program launches kernels no aten op of the eager
layer names, so a tool that re-runs the layer eagerly measures a different program; `check()`
proves the compiled step launches Triton kernels, and holds its output to the eager layer's.

Compiling and autotuning happen in `build()` (two calls under torch.inference_mode()), never inside
a capture; the steps must then be called under inference_mode too (Dynamo guards on the grad mode,
and a call outside it would compile again). Inductor's default-mode program launches its Triton
kernels and library calls on torch's current stream, so a torch.cuda.CUDAGraph capture of a call
records every one of them as a kernel node.

Why no mode="reduce-overhead" steps: that mode wraps the program in CUDA-graph trees, which run
it plainly on a first call and record a graph of their own on a later one (with device
synchronizations and a capture on their own stream; a device sync is not allowed while an outer
capture runs, so the recording cannot happen inside it). Once recorded, each call copies its
inputs into the trees' static buffers, launches their graph and keeps host-side books of which
outputs are still alive: an outer capture of that call would hold at best one graph launch, not
the kernels l2attr's surgery needs as nodes, and its replays would skip the books. And the decode
step writes its KV cache, an input: the trees skip graphs for a program that mutates inputs that
are not static (parameters, buffers, marked addresses) and then run it without them, silently.
The default mode captured by the caller is the same program without that layer.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

DECODE_BATCH, DECODE_KV, PREFILL_TOKENS = 8, 4096, 512
COMPILE = {"fullgraph": True, "dynamic": False}      # mode: torch's default
SERIES = "llama-compiled"
STEPS = {
    "llama-compiled-decode-b8-kv4k": {"series": SERIES, "phase": "decode", "batch": DECODE_BATCH,
                                      "tokens": DECODE_KV, "compile": "default, fullgraph"},
    "llama-compiled-prefill-512": {"series": SERIES, "phase": "prefill", "batch": 1, "tokens": PREFILL_TOKENS,
                                   "compile": "default, fullgraph"},
}
TOLERANCE = 2e-2   # relative L2 error, compiled vs eager in bf16 (bf16 eps 7.8e-3; fused vs unfused rounding)


@lru_cache(maxsize=None)
def _state() -> dict[str, Any]:
    """Made once, as plain tensors even when the caller is in inference mode (inference tensors
    could not be changed in place, copied or cast outside it later)."""
    import torch

    with torch.inference_mode(False):
        return _make()


def _make() -> dict[str, Any]:
    """The eager layer, its compiled twin (the same module: the same weights) and the inputs."""
    import torch
    from llama_layer import DIM, HIDDEN, KV_HEADS, layer

    model = layer()
    g = torch.Generator(device="cuda").manual_seed(1)
    bf16 = {"device": "cuda", "dtype": torch.bfloat16}
    x_decode = torch.randn(DECODE_BATCH, 1, HIDDEN, generator=g, **bf16)
    cache = tuple(torch.randn(DECODE_BATCH, KV_HEADS, DECODE_KV, DIM, generator=g, **bf16) for _ in range(2))
    x_prefill = torch.randn(1, PREFILL_TOKENS, HIDDEN, generator=g, **bf16)
    return {"model": model, "compiled": torch.compile(model, **COMPILE),
            "decode": (x_decode, cache, DECODE_KV - 1), "prefill": (x_prefill,)}


def _args(name: str) -> tuple[Any, ...]:
    return _state()["decode" if "decode" in name else "prefill"]


def build(names: list[str]) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    """The compiled layer and its arguments per step, compiled and warmed up here. The decode step
    writes the newest token's K and V at position KV - 1 of the cache each call: the same values,
    so every call computes the same thing."""
    import torch

    compiled = _state()["compiled"]
    with torch.inference_mode():
        for n in names:
            for _ in range(2):              # compile, autotune, load every kernel before any capture
                compiled(*_args(n))
    torch.cuda.synchronize()
    return {n: (compiled, _args(n)) for n in names}


def _kernel_names(fn: Callable[[], Any]) -> list[str]:
    """The GPU kernels one call of `fn` launches (the profiler's CUDA records)."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
    return [e.name for e in prof.events() if e.device_type == DeviceType.CUDA]


def check() -> list[tuple[bool, str]]:
    """Compiled vs eager output per step, and that the compiled program runs Triton kernels."""
    import torch

    from bert_layer import relative_error

    s = _state()
    out: list[tuple[bool, str]] = []
    with torch.inference_mode():
        for name in STEPS:
            args = _args(name)
            got, want = s["compiled"](*args), s["model"](*args)
            e = relative_error(got, want)
            out.append((e <= TOLERANCE, f"{name}: compiled vs eager: relative error {e:.2e} "
                                        f"(tolerance {TOLERANCE:g})"))
            kernels = _kernel_names(lambda: s["compiled"](*args))
            triton = [k for k in kernels if k.startswith("triton_")]
            out.append((bool(triton), f"{name}: {len(triton)} of {len(kernels)} kernels are Triton's "
                                      f"({', '.join(sorted(set(triton))[:3])}{', ...' if len(set(triton)) > 3 else ''})"))
    torch.cuda.synchronize()
    return out
