"""GPU tests (mark `gpu`): variants against PyTorch, the pin's harmlessness, a small ladder run."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from l2attr.cli import main
from l2attr.config import PRESETS
from l2attr.ladder import RUNGS

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("rung", RUNGS, ids=lambda r: r.name)
def test_variant_matches_torch(rung, dtype):
    from l2attr.measure.check import TOLERANCE, check_variant
    from l2attr.measure.kernels import LaunchShape, RungKernels

    k = RungKernels(rung, dtype, LaunchShape())
    errors = check_variant(k, dtype, dim=128, seed=3)
    assert max(errors.values()) <= TOLERANCE[dtype]
    for granularity in ("element",):
        if rung.pins:
            k2 = RungKernels(rung, dtype, LaunchShape(), pin_granularity=granularity)
            assert max(check_variant(k2, dtype, dim=96, seed=4).values()) <= TOLERANCE[dtype]


def test_resources_recorded_and_cap_respected():
    from l2attr.measure.kernels import LaunchShape, RungKernels

    for rung in RUNGS:
        info = RungKernels(rung, "fp32", LaunchShape()).resources()
        regs = info["consumer"]["registers_per_thread"]
        assert 0 < regs <= (42 if rung.register_cap else 255)
        assert 0 < info["consumer"]["theoretical_occupancy"] <= 1
        assert ("pin" in info) == rung.pins


def test_small_ladder_run(tmp_path, capsys):
    rc = main(["ladder", "--preset", "small", "--repeats", "2", "--profiles", "reuse_high,random",
               "--out", str(tmp_path), "--quiet"])
    assert rc == 0
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir() and not p.name.startswith(".")]
    manifest = json.loads((run / "manifest.json").read_text())
    cfg = PRESETS["small"]
    samples = pd.read_csv(run / "samples.csv")
    per_repeat = cfg.batches * cfg.tables - 1            # the cold first sample is dropped
    assert len(samples) == 2 * 6 * 3 * per_repeat        # profiles x (5 rungs + torch) x (2 + host)
    assert (samples.dropna(subset=["consumer_time_us"]).consumer_time_us > 0).all()
    pins = samples[samples.rung.isin(["l2p_optmt", "combined"])].dropna(subset=["consumer_time_us"])
    assert pins.pin_time_us.notna().all()
    cells = pd.read_csv(run / "cells.csv")
    assert set(cells.quantity) >= {"consumer", "kernels", "call", "pin"}
    assert manifest["variants"]["optmt"]["consumer"]["registers_per_thread"] <= 42
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
