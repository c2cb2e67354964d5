"""Shipped experiment (a): a GEMM writes an activation, a LayerNorm reads it next.

Transient activation reuse as in eager-mode inference: is the GEMM's output still in L2 when the
next kernel reads it, and what is that worth? Two sizes, one well below the H200's 60 MB L2
(8 MiB) and one well above it (256 MiB, about 4x). Conditions: `natural` (GEMM -> sync ->
LayerNorm) against `flush_after_producer` (the GEMM's lines flushed before the LayerNorm: the
cold consumer). The producer is not optional here, so there is no break-even: the answer is the
consumer's saving.

    python examples/experiments/activation_handoff.py --out runs          # time + profile
    l2attr report runs/*-act-8MiB -o act-8MiB.html
"""

from __future__ import annotations

import argparse

import l2attr

SIZES = {"act-8MiB": (2048, 2048), "act-256MiB": (16384, 8192)}   # (tokens, hidden) of bf16
K = 1024


def make(name: str, tokens: int, hidden: int, out: str) -> l2attr.Experiment:
    import torch
    import torch.nn.functional as F

    def setup() -> dict:
        g = torch.Generator(device="cuda").manual_seed(0)
        return {"x": torch.randn(tokens, K, device="cuda", dtype=torch.bfloat16, generator=g),
                "w": torch.randn(K, hidden, device="cuda", dtype=torch.bfloat16, generator=g) / K ** 0.5,
                "act": torch.empty(tokens, hidden, device="cuda", dtype=torch.bfloat16)}

    def gemm(s: dict) -> None:
        torch.matmul(s["x"], s["w"], out=s["act"])

    def layer_norm(s: dict):
        return F.layer_norm(s["act"], (hidden,))

    def reference(s: dict):
        a = (s["x"].float() @ s["w"].float()).bfloat16().float()
        return F.layer_norm(a, (hidden,))

    return l2attr.Experiment(name, producer=gemm, consumer=layer_norm, reference=reference, setup=setup,
                             conditions=["natural", "flush_after_producer"], rtol=5e-2, atol=5e-2,
                             calls=30, warmup=5, repeats=3, out=out,
                             labels={"producer": "GEMM (torch.matmul)", "consumer": "LayerNorm"})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="runs")
    ap.add_argument("--no-profile", action="store_true")
    args = ap.parse_args()
    for name, (tokens, hidden) in SIZES.items():
        exp = make(name, tokens, hidden, args.out)
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
