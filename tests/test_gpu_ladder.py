"""GPU tests (mark `gpu`): every variant of every family against PyTorch, the resources each
compiles to, the artifact RPF's read past the bag, and a small ladder run end to end."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from l2attr.cli import main
from l2attr.dlrm.config import PRESETS
from l2attr.dlrm.declare import FAMILIES, FAMILY_ORDER, RUNGS, variant

pytestmark = pytest.mark.gpu

VARIANTS = [variant(f, r, p) for f in FAMILY_ORDER for p in FAMILIES[f].pins for r in RUNGS
            if FAMILIES[f].implements(r) and (r.pins or p == FAMILIES[f].default_pin)]


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("v", VARIANTS, ids=lambda v: "/".join(v.key))
def test_variant_matches_torch(v, dtype):
    """Sum, mean, padding_idx and per-sample weights, awkward bag lengths, poisoned output."""
    from l2attr.dlrm.measure.check import TOLERANCE, check_variant
    from l2attr.dlrm.measure.kernels import LaunchShape, VariantKernels

    k = VariantKernels(v, dtype, LaunchShape())
    errors = check_variant(k, dtype, dim=128, seed=3)
    assert len(errors) == 4 and max(errors.values()) <= TOLERANCE[dtype]
    if dtype == "fp32":
        assert max(check_variant(k, dtype, dim=96, seed=4).values()) <= TOLERANCE[dtype]


def test_resources_match_the_committed_ptxas_figures():
    """What the driver loaded (registers, local memory) is what kernels/ptxas.json records for this arch."""
    import cupy

    from l2attr.dlrm import ptxas
    from l2attr.dlrm.measure.kernels import LaunchShape, VariantKernels

    arch = f"sm_{cupy.cuda.Device().compute_capability}"
    table = ptxas.committed()["variants"]
    for v in VARIANTS:
        info = VariantKernels(v, "fp32", LaunchShape()).resources()
        regs = info["consumer"]["registers_per_thread"]
        assert 0 < regs <= (42 if v.rung.register_cap and FAMILIES[v.family].register_cap else 255)
        assert 0 < info["consumer"]["theoretical_occupancy"] <= 1
        assert ("pin" in info) == v.rung.pins
        if arch in ptxas.ARCHS:   # NVRTC and nvcc share ptxas: the same registers
            assert regs == table["/".join(v.key)]["consumer"][arch]["registers"], v.label


def test_artifact_rpf_refuses_an_index_buffer_without_the_spare_element():
    import torch

    from l2attr.dlrm.measure.kernels import LaunchShape, VariantKernels

    k = VariantKernels(variant("artifact", "rpf_optmt"), "fp32", LaunchShape())
    weight = torch.rand(100, 128, device="cuda")
    tight = torch.randint(0, 100, (7,), device="cuda")          # its own storage, nothing after it
    out = torch.empty(2, 128, device="cuda")
    with pytest.raises(ValueError, match="spare element"):
        k.launch_consumer(weight, tight, torch.tensor([0, 3], device="cuda"), out)


def test_artifact_rpf_odd_bags_read_the_next_bags_first_row_and_stay_correct():
    """Bags of length 3: the prefetch at the last lookup loads the next bag's first row, unused."""
    import torch
    import torch.nn.functional as F

    from l2attr.dlrm.measure.kernels import LaunchShape, VariantKernels, with_index_slack

    k = VariantKernels(variant("artifact", "rpf_optmt"), "fp32", LaunchShape())
    weight = torch.rand(50, 128, device="cuda") * 2 - 1
    idx = with_index_slack(torch.randint(0, 50, (9,), device="cuda"))
    offsets = torch.tensor([0, 3, 6], device="cuda")
    out = torch.full((3, 128), float("nan"), device="cuda")
    k.launch_consumer(weight, idx, offsets, out)
    torch.cuda.synchronize()
    ref = F.embedding_bag(idx, weight.double(), offsets, mode="sum").float()
    assert torch.allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_small_ladder_run(tmp_path, capsys):
    rc = main(["ladder", "--preset", "small", "--repeats", "2", "--profiles", "reuse_high,random",
               "--out", str(tmp_path), "--quiet"])
    assert rc == 0
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir() and not p.name.startswith(".")]
    manifest = json.loads((run / "manifest.json").read_text())
    cfg = PRESETS["small"]
    samples = pd.read_csv(run / "samples.csv")
    per_repeat = cfg.batches * cfg.tables - 1            # the cold first sample is dropped
    variants = 2 * 5 + 2 + 1                             # artifact, tuned x 5 rungs, fast x 2, torch
    assert len(samples) == 2 * variants * (2 + 2) * per_repeat   # profiles x variants x (2 device + 2 host)
    assert set(samples.family) == {"artifact", "tuned", "fast", "reference"}
    device = samples.dropna(subset=["consumer_time_us"])
    host = samples.dropna(subset=["call_wall_time_us"])
    assert (device.consumer_time_us > 0).all() and len(device) == len(host)
    assert (host.consumer_artifact_time_us > 0).all()
    pins = device[device.rung.isin(["l2p_optmt", "combined"])]
    assert pins.pin_time_us.notna().all()
    assert set(pins[pins.family == "artifact"].pin) == {"element"}
    assert set(pins[pins.family == "tuned"].pin) == {"line"}
    cells = pd.read_csv(run / "cells.csv")
    assert set(zip(cells.quantity, cells.timer)) >= {("consumer", "kernel"), ("kernels", "kernel"),
                                                     ("call", "wall"), ("pin", "kernel"),
                                                     ("consumer", "artifact")}
    assert manifest["variants"]["artifact/optmt/none"]["consumer"]["registers_per_thread"] <= 42
    assert manifest["ptxas"]["variants"]["artifact/optmt/none"]["consumer"]["sm_90"]["spill_stores"] > 0
    assert manifest["hbm_copy_GBps"] > 100
    # resume: nothing left to do, the tables stay the same
    rc = main(["ladder", "--resume", str(run), "--quiet"])
    assert rc == 0
    assert len(pd.read_csv(run / "samples.csv")) == len(samples)


def test_refuses_workload_larger_than_gpu(tmp_path, capsys):
    rc = main(["ladder", "--tables", "1000", "--rows", "10000000", "--out", str(tmp_path)])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "GiB" in err[0]
    assert not any(tmp_path.iterdir())
