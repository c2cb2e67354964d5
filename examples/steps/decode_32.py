"""A 32-layer Llama-shaped decode step, eager: batch 8, one new token per sequence over a 4K KV cache.

The layer of llama_layer.py stacked 32 times, each with its own weights (about 0.44 GB of bf16
per layer, 14 GB in all) and its own KV cache (2 x 64 MiB per layer); tools/check_shipped_steps.py
prints how many kernels a step launches. Why: the depth of a real model's decode step, for the
bound on how long `l2attr step` may take on one (benchmarks/bench_steps.py, <= 2 min on the H200).

llama_layer.layer() seeds torch before it builds, so its layers all come out alike; each copy
here is drawn again from its own generator (seed = layer index), in the distribution
torch.nn.Linear draws from (uniform within 1/sqrt(fan_in)), so the stack does not repeat one layer.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

LAYERS, BATCH, KV = 32, 8, 4096
STEPS = {"llama-decode-32l-b8-kv4k": {"series": "llama-32l", "phase": "decode", "layers": LAYERS,
                                      "batch": BATCH, "tokens": KV}}


@lru_cache(maxsize=None)
def _state() -> dict[str, Any]:
    """Made once, as plain tensors even when the caller is in inference mode (inference tensors
    could not be changed in place, copied or cast outside it later)."""
    import torch

    with torch.inference_mode(False):
        return _make()


def _make() -> dict[str, Any]:
    import copy

    import torch
    from llama_layer import DIM, HIDDEN, KV_HEADS, layer

    first = layer()
    layers = []
    for i in range(LAYERS):
        m = first if i == 0 else copy.deepcopy(first)       # copied on the GPU, then drawn anew
        g = torch.Generator(device="cuda").manual_seed(i)
        with torch.no_grad():
            for p in m.parameters():
                if p.dim() == 2:                             # Linear weights; the norms stay ones
                    bound = p.shape[1] ** -0.5
                    p.uniform_(-bound, bound, generator=g)
        layers.append(m.requires_grad_(False))
    g = torch.Generator(device="cuda").manual_seed(LAYERS)
    bf16 = {"device": "cuda", "dtype": torch.bfloat16}
    caches = [tuple(torch.randn(BATCH, KV_HEADS, KV, DIM, generator=g, **bf16) for _ in range(2))
              for _ in range(LAYERS)]
    x = torch.randn(BATCH, 1, HIDDEN, generator=g, **bf16)
    return {"layers": layers, "caches": caches, "x": x}


def build(names: list[str]) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    import torch

    s = _state()
    layers, caches, x = s["layers"], s["caches"], s["x"]

    def decode() -> Any:
        """Each layer writes the new token's K, V at position KV - 1 (the same values every call)."""
        h = x
        for m, cache in zip(layers, caches):
            h = m(h, cache, KV - 1)
        return h

    with torch.inference_mode():
        decode()
    torch.cuda.synchronize()
    return {n: (decode, ()) for n in names}


def check() -> list[tuple[bool, str]]:
    """The weights are independent (no two layers alike) and the step's output is finite."""
    import torch

    s = _state()
    layers = s["layers"]
    q = [m.attn.q.weight for m in layers]
    alike = [i for i in range(1, LAYERS) if torch.equal(q[i], q[i - 1])]
    fn = build(list(STEPS))["llama-decode-32l-b8-kv4k"][0]
    with torch.inference_mode():
        out = fn()
    finite = bool(torch.isfinite(out).all())
    spread = float(out.float().std())
    return [(not alike, f"llama-decode-32l: layers whose q weights equal the layer before: {alike or 'none'}"),
            (finite and spread > 0, f"llama-decode-32l: output finite {finite}, std {spread:.3g}")]
