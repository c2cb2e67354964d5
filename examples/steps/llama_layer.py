"""A Llama-shaped decoder layer in bf16 (random weights made here): decode and prefill steps.

hidden 4096, 32 query heads, 8 KV heads (GQA), head dim 128, SwiGLU MLP 14336, RMSNorm; decode
appends one token per sequence to a KV cache and attends over it, prefill runs a causal prompt.
The grid: decode at batch {1, 16} x KV {2K, 8K} and batch 8 x KV 4K, prefill at {512, 2K}
tokens; and the batch-8 decode again as replays of a CUDA graph (l2attr captures it).

    python examples/steps/llama_layer.py --out runs            # the whole grid
    python examples/steps/llama_layer.py --out runs --only llama-decode-b1-kv2k
"""

from __future__ import annotations

import argparse

import l2attr

HIDDEN, HEADS, KV_HEADS, DIM, FFN = 4096, 32, 8, 128, 14336


def layer():
    import torch
    import torch.nn.functional as F

    class RMSNorm(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(HIDDEN))

        def forward(self, x):
            return F.rms_norm(x, (HIDDEN,), self.weight, 1e-5)

    class Attention(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q = torch.nn.Linear(HIDDEN, HEADS * DIM, bias=False)
            self.kv = torch.nn.Linear(HIDDEN, 2 * KV_HEADS * DIM, bias=False)
            self.o = torch.nn.Linear(HEADS * DIM, HIDDEN, bias=False)

        def forward(self, x, cache=None, pos=None):
            b, t, _ = x.shape
            q = self.q(x).view(b, t, HEADS, DIM).transpose(1, 2)
            k, v = self.kv(x).view(b, t, 2, KV_HEADS, DIM).unbind(2)
            k, v = k.transpose(1, 2), v.transpose(1, 2)
            if cache is not None:                       # decode: write the new token, attend to all
                kc, vc = cache
                kc[:, :, pos:pos + t] = k
                vc[:, :, pos:pos + t] = v
                y = F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True)
            else:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            return self.o(y.transpose(1, 2).reshape(b, t, HEADS * DIM))

    class MLP(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gate_up = torch.nn.Linear(HIDDEN, 2 * FFN, bias=False)
            self.down = torch.nn.Linear(FFN, HIDDEN, bias=False)

        def forward(self, x):
            g, u = self.gate_up(x).chunk(2, dim=-1)
            return self.down(F.silu(g) * u)

    class DecoderLayer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm1, self.attn, self.norm2, self.mlp = RMSNorm(), Attention(), RMSNorm(), MLP()

        def forward(self, x, cache=None, pos=None):
            x = x + self.attn(self.norm1(x), cache, pos)
            return x + self.mlp(self.norm2(x))

    torch.manual_seed(0)
    return DecoderLayer().to("cuda", torch.bfloat16).eval()


SERIES = "llama-layer"
DECODE = [(1, 2048), (1, 8192), (8, 4096), (16, 2048), (16, 8192)]     # (batch, KV tokens)
PREFILL = [512, 2048]                                                  # prompt tokens, batch 1
GRAPH = [(8, 4096)]                                                    # decode shapes also run as a CUDA graph


def grid(model):
    """name -> (step function, facts for the report, graph?) for every shape of the grid."""
    import torch

    out = {}

    def decode(batch: int, kv: int):
        x = torch.randn(batch, 1, HIDDEN, device="cuda", dtype=torch.bfloat16)
        cache = tuple(torch.randn(batch, KV_HEADS, kv, DIM, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        return lambda: model(x, cache, kv - 1)

    def prefill(tokens: int):
        x = torch.randn(1, tokens, HIDDEN, device="cuda", dtype=torch.bfloat16)
        return lambda: model(x)

    for b, kv in DECODE:
        out[f"llama-decode-b{b}-kv{kv // 1024}k"] = (decode(b, kv), {"series": SERIES, "phase": "decode", "batch": b,
                                                                     "tokens": kv}, False)
    for t in PREFILL:
        name = f"llama-prefill-{t // 1024}k" if t % 1024 == 0 else f"llama-prefill-{t}"
        out[name] = (prefill(t), {"series": SERIES, "phase": "prefill", "batch": 1, "tokens": t}, False)
    for b, kv in GRAPH:
        out[f"llama-decode-b{b}-kv{kv // 1024}k-graph"] = (decode(b, kv), {"series": SERIES, "phase": "decode, CUDA graph",
                                                                           "batch": b, "tokens": kv}, True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="runs")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--edges", type=int, default=5, help="top edges measured by selective eviction")
    ap.add_argument("--only", nargs="*", help="these runs of the grid only")
    args = ap.parse_args()
    import torch

    model = layer()
    with torch.inference_mode():
        for name, (fn, facts, graph) in grid(model).items():
            if args.only and name not in args.only:
                continue
            ans = l2attr.step(fn, name=name, repeats=args.repeats, out=args.out, edges=args.edges, graph=graph,
                              facts=facts)
            print(ans.headline(name))


if __name__ == "__main__":
    main()
