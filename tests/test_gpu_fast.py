"""GPU tests (mark `gpu`) of the fast family's consumer: every dtype, mode, per-sample weights and
padding_idx against torch.nn.functional.embedding_bag, at the dims the issue names, under several
launch shapes (the shared-memory hand-off between warps of a bag is only exercised with > 1 warp),
and with a row stride that forces the scalar path."""

from __future__ import annotations

import pytest

from l2attr.dlrm.declare import variant

pytestmark = pytest.mark.gpu

SHAPES = [(1, 1, 4), (4, 2, 8), (8, 4, 2), (3, 2, 1)]  # warps per bag, bags per block, unroll


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("dim", [32, 64, 96, 128, 256])
@pytest.mark.parametrize("rung", ["optmt", "l2p_optmt"])
def test_fast_matches_torch_at_every_dim(dtype, dim, rung):
    from l2attr.dlrm.measure.check import TOLERANCE, check_variant
    from l2attr.dlrm.measure.kernels import LaunchShape, VariantKernels

    k = VariantKernels(variant("fast", rung), dtype, LaunchShape())
    errors = check_variant(k, dtype, dim=dim, seed=dim)
    assert len(errors) == 4 and max(errors.values()) <= TOLERANCE[dtype], errors


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "w%d_b%d_u%d" % s)
@pytest.mark.parametrize("dim", [32, 100, 128, 256])
def test_fast_launch_shapes_agree_with_torch(shape, dim):
    from l2attr.dlrm.measure.check import TOLERANCE, check_variant
    from l2attr.dlrm.measure.kernels import LaunchShape, VariantKernels

    w, b, u = shape
    k = VariantKernels(variant("fast", "optmt"), "fp32",
                       LaunchShape(fast_warps_per_bag=w, fast_bags_per_block=b, fast_unroll=u))
    assert max(check_variant(k, "fp32", dim=dim, seed=11).values()) <= TOLERANCE["fp32"]


def test_fast_scalar_path_on_an_odd_row_stride():
    """A weight view whose rows start 4-byte aligned only: the launcher must fall back to 1-wide loads."""
    import torch
    import torch.nn.functional as F

    from l2attr.dlrm.measure.check import relative_error
    from l2attr.dlrm.measure.kernels import LaunchShape, VariantKernels, fast_geometry

    base = torch.rand(3000, 129, device="cuda") * 2 - 1
    weight = base[:, :128]                       # row stride 129 elements
    assert fast_geometry(128, weight.stride(0), 4, weight.data_ptr(), 0, 10, 4, 2).vec == 1
    g = torch.Generator(device="cuda").manual_seed(5)
    indices = torch.randint(0, 3000, (4000,), generator=g, device="cuda")
    offsets = torch.arange(0, 4000, 40, device="cuda")
    out = torch.full((offsets.numel(), 128), float("nan"), device="cuda")
    VariantKernels(variant("fast", "optmt"), "fp32", LaunchShape()).launch_consumer(weight, indices, offsets, out)
    torch.cuda.synchronize()
    ref = F.embedding_bag(indices, weight.double(), offsets, mode="sum")
    assert relative_error(out, ref) <= 1e-5
