"""A DLRM inference step: bottom MLP, 12 EmbeddingBags at the artifact's shape, interaction, top MLP.

Three variants of the same step (random weights made here; indices from l2attr's reuse_medium
profile): no pin; the L2P pin (prefetch.global.L2::evict_last over each table's 60K hot rows)
right before each EmbeddingBag; and the pins issued on a side stream while the bottom MLP runs,
event-ordered before their EmbeddingBags (how a serving system would hide the pin's cost).

    python examples/steps/dlrm_step.py --out runs
"""

from __future__ import annotations

import argparse

import l2attr

TABLES, ROWS, DIM, BATCH, POOLING, HOT = 12, 500_000, 128, 2048, 150, 60_000

PIN = r"""
extern "C" __global__ void pin_rows(const float* table, const long long* rows, int n, int dim) {
    const int lines = dim * 4 / 128;                     // 128-byte lines per row
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (long long)n * lines;
         i += (long long)gridDim.x * blockDim.x) {
        const char* p = (const char*)(table + rows[i / lines] * dim) + (i % lines) * 128;
        asm volatile("prefetch.global.L2::evict_last [%0];" :: "l"(p));
    }
}
"""


def build():
    import cupy
    import numpy as np
    import torch
    import torch.nn.functional as F

    from l2attr.dlrm.config import WorkloadConfig
    from l2attr.dlrm.workload import build_workload

    g = torch.Generator(device="cuda").manual_seed(0)
    cfg = WorkloadConfig(tables=TABLES, rows=ROWS, dim=DIM, batch_size=BATCH, pooling=POOLING, batches=1,
                         warmup_batches=0, hot_rows=HOT)
    w = build_workload(cfg, profile="reuse_medium")
    idx = [torch.from_numpy(np.ascontiguousarray(w.indices[0, t])).cuda() for t in range(TABLES)]
    hot = torch.from_numpy(np.ascontiguousarray(w.hot)).cuda()
    offsets = torch.arange(BATCH, device="cuda", dtype=torch.int64) * POOLING
    tables = [torch.empty(ROWS, DIM, device="cuda").uniform_(-1, 1, generator=g) for _ in range(TABLES)]
    dense = torch.randn(BATCH, 13, device="cuda")

    def mlp(sizes):
        layers = []
        for a, b in zip(sizes, sizes[1:]):
            layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
        return torch.nn.Sequential(*layers[:-1]).cuda().eval()

    bottom = mlp([13, 512, 256, DIM])
    pairs = (TABLES + 1) * TABLES // 2
    top = mlp([DIM + pairs, 1024, 1024, 512, 256, 1])
    tri = torch.triu_indices(TABLES + 1, TABLES + 1, offset=1, device="cuda")
    kernel = cupy.RawKernel(PIN, "pin_rows")
    side = torch.cuda.Stream()

    def pin(t: int, stream) -> None:
        kernel((264,), (256,), (np.uint64(tables[t].data_ptr()), np.uint64(hot.data_ptr()), np.int32(HOT),
                                np.int32(DIM)), stream=cupy.cuda.ExternalStream(stream.cuda_stream))

    def step(variant: str):
        done = None
        if variant == "side-stream":
            side.wait_stream(torch.cuda.current_stream())       # forked from the step's stream (capturable)
            with torch.cuda.stream(side):
                for t in range(TABLES):
                    pin(t, side)
                done = torch.cuda.Event()
                done.record(side)
        z = bottom(dense)
        if done is not None:
            torch.cuda.current_stream().wait_event(done)
        embs = []
        for t in range(TABLES):
            if variant == "inline":
                pin(t, torch.cuda.current_stream())
            embs.append(F.embedding_bag(idx[t], tables[t], offsets, mode="sum"))
        feats = torch.stack([z, *embs], dim=1)                          # [B, 13, 128]
        inter = torch.bmm(feats, feats.transpose(1, 2))[:, tri[0], tri[1]]
        return top(torch.cat([z, inter], dim=1))

    return step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="runs")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--edges", type=int, default=5, help="top edges measured by selective eviction")
    args = ap.parse_args()
    import torch

    step = build()
    with torch.inference_mode():
        for variant in ("no-pin", "inline", "side-stream"):
            name = f"dlrm-step-{variant}"
            ans = l2attr.step(step, variant, name=name, repeats=args.repeats, out=args.out, edges=args.edges,
                              facts={"series": "dlrm", "pins": variant})
            print(ans.headline(name), f"| natural GPU span {ans.span_us:.1f} µs")


if __name__ == "__main__":
    main()
