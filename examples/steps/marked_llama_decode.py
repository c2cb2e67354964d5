"""The Llama decode step (batch 8, KV 4096), marked for `l2attr step --ncu -- python ...`."""

import torch

import l2attr
from llama_layer import DIM, HIDDEN, KV_HEADS, layer

model = layer()
x = torch.randn(8, 1, HIDDEN, device="cuda", dtype=torch.bfloat16)
cache = tuple(torch.randn(8, KV_HEADS, 4096, DIM, device="cuda", dtype=torch.bfloat16) for _ in range(2))


@l2attr.step_range("llama-decode-b8-kv4k-marked")
def decode():
    with torch.inference_mode():
        return model(x, cache, 4095)


for _ in range(3):
    decode()
torch.cuda.synchronize()
