"""Shipped experiment (b): a user's own L2 pin in front of a library op.

A decode step of attention reads a whole KV cache; a pin kernel of our own issues
`prefetch.global.L2::evict_last` over a slice of it first (the first half of the batch's K and V,
32 MiB, under the H200's 37.5 MB persisting maximum), then torch's
`scaled_dot_product_attention` reads it. Does the pin pay once its kernel, its launch and its
sync are charged? Conditions: natural (pin -> sync -> SDPA), no_producer (SDPA alone: the
honest comparand) and flush_after_producer (the validity control's cold arm).

    python examples/experiments/kv_pin_sdpa.py --out runs                 # time + profile
    l2attr report runs/*-kv-pin-sdpa -o kv.html
"""

from __future__ import annotations

import argparse

import l2attr

BATCH, HEADS, KV_HEADS, SEQ, DIM = 8, 32, 8, 4096, 128     # Llama-8B-like GQA decode, bf16

PIN_SOURCE = r"""
extern "C" __global__ void pin_evict_last(const char* base, long long bytes) {
    for (long long off = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 128; off < bytes;
         off += (long long)gridDim.x * blockDim.x * 128)
        asm volatile("prefetch.global.L2::evict_last [%0];" :: "l"(base + off));
}
"""


def make(out: str) -> l2attr.Experiment:
    import cupy
    import numpy as np
    import torch
    import torch.nn.functional as F

    kernel = cupy.RawKernel(PIN_SOURCE, "pin_evict_last")

    def setup() -> dict:
        g = torch.Generator(device="cuda").manual_seed(0)
        shape = (BATCH, KV_HEADS, SEQ, DIM)
        return {"q": torch.randn(BATCH, HEADS, 1, DIM, device="cuda", dtype=torch.bfloat16, generator=g),
                "k": torch.randn(shape, device="cuda", dtype=torch.bfloat16, generator=g),
                "v": torch.randn(shape, device="cuda", dtype=torch.bfloat16, generator=g)}

    def pin(s: dict) -> None:
        stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        for t in (s["k"], s["v"]):
            half = t.numel() * t.element_size() // 2          # batch rows 0 .. BATCH/2 - 1
            kernel((264,), (256,), (np.uint64(t.data_ptr()), np.int64(half)), stream=stream)

    def sdpa(s: dict):
        return F.scaled_dot_product_attention(s["q"], s["k"], s["v"], enable_gqa=True)

    def reference(s: dict):
        rep = HEADS // KV_HEADS
        k = s["k"].float().repeat_interleave(rep, dim=1)
        v = s["v"].float().repeat_interleave(rep, dim=1)
        w = torch.softmax(s["q"].float() @ k.transpose(-1, -2) / DIM ** 0.5, dim=-1)
        return w @ v

    return l2attr.Experiment("kv-pin-sdpa", producer=pin, consumer=sdpa, reference=reference, setup=setup,
                             rtol=2e-2, atol=2e-2, calls=30, warmup=5, repeats=3, out=out,
                             labels={"producer": "pin (prefetch.global.L2::evict_last, 32 MiB of KV)",
                                     "consumer": "torch SDPA decode"})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="runs")
    ap.add_argument("--no-profile", action="store_true")
    args = ap.parse_args()
    exp = make(args.out)
    result = exp.time()
    cells = result.cells
    if not cells.empty:
        print(result)
        print(cells[["condition", "quantity", "timer", "median_us", "ci95_lo_us", "ci95_hi_us"]]
              .to_string(index=False))
    if not args.no_profile:
        exp.profile(metrics="l2", run=result)


if __name__ == "__main__":
    main()
