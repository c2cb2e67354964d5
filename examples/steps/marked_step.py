"""A script that marks its step for `l2attr step -- python examples/steps/marked_step.py`.

The marked function is a user's own: a LayerNorm -> Linear -> GELU -> Linear block in bf16.
Under `l2attr step` its first call is measured and the script ends; run plainly, it just runs.
"""

import torch
import torch.nn.functional as F

import l2attr

x = torch.randn(4096, 2048, device="cuda", dtype=torch.bfloat16)
w1 = torch.randn(2048, 8192, device="cuda", dtype=torch.bfloat16) / 64
w2 = torch.randn(8192, 2048, device="cuda", dtype=torch.bfloat16) / 128


@l2attr.step_range("mlp-block")
def block(x):
    h = F.layer_norm(x, (2048,))
    return F.gelu(h @ w1) @ w2


for _ in range(3):
    y = block(x)
torch.cuda.synchronize()
print("ran", tuple(y.shape))
