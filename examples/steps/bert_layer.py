"""A BERT-base encoder layer (torch.nn.TransformerEncoderLayer) in fp16, with the MHA fast path on and off.

d_model 768, 12 heads, FFN 3072, GELU, batch_first, post-norm (norm_first False), eval, random
weights (seed 0); input batch 8 x 512 tokens, no mask. Why two steps: with the fast path on, the
whole layer is one aten op (`aten::_transformer_encoder_layer_fwd`) that launches every kernel of
the layer, the case a per-op cold method cannot see into; with it off, the same math runs as one
aten op per projection, attention, norm and activation.

The fast path's conditions (TransformerEncoderLayer.forward, torch >= 2.3) and how they hold here:
`torch.backends.mha.get_fastpath_enabled()`; a batched 3-D input; `self.training` False (eval());
`self_attn.batch_first`; biases on (in_proj_bias not None); q, k, v of one embedding size;
activation "gelu" (F.gelu, so `activation_relu_or_gelu` is 2); both norms' eps equal; an even head
count (12); autocast off; no forward (pre-)hooks on any submodule (newer torch checks it: a tool
that hooks modules to attribute kernels turns the fast path off); every tensor argument on CUDA,
no __torch_function__; and no grad needed (the parameters are frozen, and the steps run under
torch.inference_mode()). The no-fast-path step turns only the global MHA flag
off around its call (a host-side switch, nothing launched), so the layer, weights and input are the
very same; `check()` holds the two outputs to each other and to an fp32 run, and proves from the
profiler's op records that only the first step calls the fused op.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

D_MODEL, HEADS, FFN, BATCH, SEQ = 768, 12, 3072, 8, 512
FACTS = {"series": "bert-layer", "batch": BATCH, "tokens": SEQ, "dtype": "fp16"}
STEPS = {
    "bert-layer-fastpath": {**FACTS, "fastpath": "on"},
    "bert-layer-no-fastpath": {**FACTS, "fastpath": "off"},
}
FUSED_OP = "aten::_transformer_encoder_layer_fwd"
TOLERANCE = 1e-2   # relative L2 error between fp16 runs of one layer (fp16 eps ~1e-3, 768-long sums)


@lru_cache(maxsize=None)
def _state() -> tuple[Any, Any]:
    """Made once, as plain tensors even when the caller is in inference mode (inference tensors
    could not be changed in place, copied or cast outside it later)."""
    import torch

    with torch.inference_mode(False):
        return _make()


def _make() -> tuple[Any, Any]:
    import torch

    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.1, activation="gelu",
                                             batch_first=True, norm_first=False)
    layer = layer.to("cuda", torch.float16).eval().requires_grad_(False)
    x = torch.randn(BATCH, SEQ, D_MODEL, device="cuda", dtype=torch.float16)
    return layer, x


def _run(layer: Any, x: Any, fastpath: bool) -> Any:
    """The layer with the MHA fast path set as asked for this call only (the global flag is put back)."""
    import torch

    before = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(fastpath)
    try:
        return layer(x)
    finally:
        torch.backends.mha.set_fastpath_enabled(before)


def build(names: list[str]) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    import torch

    layer, x = _state()

    def fastpath() -> Any:
        return _run(layer, x, True)

    def no_fastpath() -> Any:
        return _run(layer, x, False)

    fns = {"bert-layer-fastpath": fastpath, "bert-layer-no-fastpath": no_fastpath}
    with torch.inference_mode():      # warm up: cuBLAS handles and workspaces made outside any capture
        for n in names:
            fns[n]()
    torch.cuda.synchronize()
    return {n: (fns[n], ()) for n in names}


def relative_error(out: Any, ref: Any) -> float:
    import torch

    a, b = out.double(), ref.double()
    if not torch.isfinite(a).all():
        return float("inf")
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))


def _ops_called(fn: Callable[[], Any]) -> set[str]:
    """Names of the aten ops one call of `fn` dispatches (the profiler's CPU op records)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    return {e.name for e in prof.events()}


def check() -> list[tuple[bool, str]]:
    """Fast path on vs off vs an fp32 copy of the layer (fast path off), same input; and which
    path each step took."""
    import copy

    import torch

    layer, x = _state()
    built = build(list(STEPS))
    fast_fn, slow_fn = built["bert-layer-fastpath"][0], built["bert-layer-no-fastpath"][0]
    out: list[tuple[bool, str]] = []
    ref_layer = copy.deepcopy(layer).float()
    with torch.inference_mode():
        fast, slow = fast_fn(), slow_fn()
        ref = _run(ref_layer, x.float(), False)
        fused_on = FUSED_OP in _ops_called(fast_fn)
        fused_off = FUSED_OP in _ops_called(slow_fn)
    del ref_layer
    torch.cuda.synchronize()
    for what, a, b in (("fast path vs no fast path", fast, slow), ("fast path vs fp32", fast, ref),
                       ("no fast path vs fp32", slow, ref)):
        e = relative_error(a, b)
        out.append((e <= TOLERANCE, f"bert-layer: {what}: relative error {e:.2e} (tolerance {TOLERANCE:g})"))
    out.append((fused_on, f"bert-layer-fastpath: calls {FUSED_OP}: {fused_on}"))
    out.append((not fused_off, f"bert-layer-no-fastpath: does not call {FUSED_OP}: {not fused_off}"))
    return out
