"""Check every variant against torch.nn.functional.embedding_bag before anything is timed.

Fresh random data each check (never zeros), bags of every awkward length (empty, shorter than
the RPF depth, odd), a poisoned (NaN) output so an unwritten element cannot pass, and a float64
reference. Index buffers carry one spare element after the last index, as every buffer l2attr
times does (the artifact's RPF may read it). A variant that misses the tolerance stops the run with its name and its error.
"""

from __future__ import annotations

from typing import Any

from l2attr.errors import UserError
from l2attr.dlrm.measure.kernels import VariantKernels, with_index_slack

TOLERANCE = {"fp32": 1e-5, "fp16": 2e-3, "bf16": 1e-2}


def relative_error(out: Any, ref: Any) -> float:
    import torch

    out64, ref64 = out.double(), ref.double()
    if not torch.isfinite(out64).all():
        return float("inf")
    return float(torch.linalg.vector_norm(out64 - ref64) / torch.linalg.vector_norm(ref64))


def _random_case(torch: Any, dtype: Any, rows: int, dim: int, bags: int, seed: int,
                 device: str = "cuda") -> tuple[Any, Any, Any]:
    g = torch.Generator(device=device).manual_seed(seed)
    weight = (torch.rand(rows, dim, generator=g, device=device) * 2 - 1).to(dtype)
    lengths = torch.randint(0, 12, (bags,), generator=g, device=device)
    lengths[:6] = torch.tensor([0, 1, 2, 3, 0, 5], device=device)  # empty, < depth, odd, trailing
    lengths[-1] = 3
    offsets = torch.zeros(bags, dtype=torch.int64, device=device)
    offsets[1:] = torch.cumsum(lengths, 0)[:-1]
    indices = with_index_slack(torch.randint(0, rows, (int(lengths.sum()),), generator=g, device=device))
    return weight, indices, offsets


CASES = (("sum", None, False), ("mean", None, False), ("sum", 7, False), ("sum", None, True))


def check_variant(kernels: VariantKernels, dtype_name: str, dim: int, seed: int) -> dict[str, float]:
    """Sum and mean, padding_idx, per-sample weights, on fresh data; returns the errors measured."""
    import torch
    import torch.nn.functional as F

    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype_name]
    errors: dict[str, float] = {}
    for case, (mode, padding, weighted) in enumerate(CASES):
        weight, indices, offsets = _random_case(torch, dtype, rows=5000, dim=dim, bags=3000,
                                                seed=seed * 101 + case)
        if padding is not None:
            indices[::5] = padding
        psw = None
        if weighted:
            g = torch.Generator(device="cuda").manual_seed(seed * 7 + case)
            psw = (torch.rand(indices.numel(), generator=g, device="cuda") + 0.5)
        hot = torch.unique(indices)[:1000].contiguous()
        out = torch.full((offsets.numel(), dim), float("nan"), dtype=dtype, device="cuda")
        if kernels.pin is not None:
            kernels.launch_pin(weight, hot)
        kernel_psw = None if psw is None else psw.to(kernels.per_sample_weights_dtype(dtype))
        kernels.launch_consumer(weight, indices, offsets, out, mean=(mode == "mean"),
                                per_sample_weights=kernel_psw,
                                padding_idx=-1 if padding is None else padding)
        torch.cuda.synchronize()
        ref_psw = None if kernel_psw is None else kernel_psw.double()
        ref = F.embedding_bag(indices, weight.double(), offsets, mode=mode,
                              padding_idx=padding, per_sample_weights=ref_psw)
        key = f"{mode}{'' if padding is None else '_padding'}{'_weighted' if weighted else ''}"
        errors[key] = relative_error(out, ref)
    worst = max(errors.values())
    if not worst <= TOLERANCE[dtype_name]:
        raise UserError(f"variant {kernels.variant.label} is wrong: relative error {worst:.3g} "
                        f"> {TOLERANCE[dtype_name]:g} vs torch.nn.functional.embedding_bag "
                        f"({', '.join(f'{k}={v:.3g}' for k, v in errors.items())})")
    return errors
