"""The self-check step, marked for `l2attr step --ncu -- python examples/steps/marked_selfcheck.py`:
a copy writes a quarter of the L2, a sum reads it. Under Nsight Compute the sum should read ~0 MB
of DRAM with cache control none and the whole buffer with cache control all."""

import torch

import l2attr

n = torch.cuda.get_device_properties(0).L2_cache_size // 4 // 4
src = torch.randn(n, device="cuda")
buf = torch.empty_like(src)


@l2attr.step_range("selfcheck-quarter-l2-marked")
def two_kernels():
    torch.mul(src, 2.0, out=buf)
    return buf.sum()


for _ in range(3):
    two_kernels()
torch.cuda.synchronize()
