"""GPU tests (mark `gpu`) for `l2attr sweep`: the access-policy window through the driver (set,
read back, cleared), the window and remap arms against torch, and a tiny sweep of every axis."""

from __future__ import annotations

from pathlib import Path

import pytest

from l2attr.cli import main
from l2attr.dlrm.config import PRESETS

pytestmark = pytest.mark.gpu
MiB = 1 << 20


def test_driver_limits_match_cupys_properties_and_the_window_reads_back():
    import cupy
    import torch

    from l2attr.gpu.persisting import (CU_ACCESS_PROPERTY_PERSISTING, CU_ACCESS_PROPERTY_STREAMING, Driver,
                                     persisting_limits)

    torch.zeros(1, device="cuda")                      # the primary context, current on this thread
    props = cupy.cuda.runtime.getDeviceProperties(0)
    d = Driver()
    lim = persisting_limits(d)
    assert lim["l2CacheSize"] == props["l2CacheSize"]
    if "persistingL2CacheMaxSize" in props:
        assert lim["persistingL2CacheMaxSize"] == props["persistingL2CacheMaxSize"]
    if "accessPolicyMaxWindowSize" in props:
        assert lim["accessPolicyMaxWindowSize"] == props["accessPolicyMaxWindowSize"]
    before = d.persisting_limit()
    granted = d.set_persisting_limit(8 * MiB)
    assert 0 < granted <= lim["persistingL2CacheMaxSize"]
    buf = torch.empty(4 * MiB // 4, device="cuda")
    stream = cupy.cuda.Stream(non_blocking=False)
    d.set_window(stream.ptr, buf.data_ptr(), 4 * MiB, 0.5)
    w = d.window(stream.ptr)
    assert (w.num_bytes, w.hit_ratio, w.hit_prop, w.miss_prop) == (
        4 * MiB, 0.5, CU_ACCESS_PROPERTY_PERSISTING, CU_ACCESS_PROPERTY_STREAMING)
    assert abs(w.base_ptr - buf.data_ptr()) < 2 * MiB        # "the driver may align it" (cuda.h)
    d.clear_window(stream.ptr)
    assert d.window(stream.ptr).num_bytes == 0
    d.reset_persisting()
    assert d.set_persisting_limit(before) == before


def test_window_and_remap_arms_compute_embedding_bag():
    """The window arm (remapped table + indices, window set) on every table against torch on the originals."""
    import torch
    import torch.nn.functional as F

    from l2attr.dlrm.measure.check import relative_error
    from l2attr.gpu.persisting import device_limits
    from l2attr.sweep.measure.device import SweepDevice
    from l2attr.sweep.declare import SweepOptions, points
    from l2attr.vocab import Arm, Family, SweepAxis

    cfg = PRESETS["small"]
    opts = SweepOptions(axis=SweepAxis.WINDOW, families=[Family.ARTIFACT, Family.TUNED], profiles=["reuse_high"],
                        hit_ratios=[1.0])
    limits = device_limits()
    dev = SweepDevice(cfg, opts, limits, log=lambda s: None)
    dev.load_profile("reuse_high")
    assert max(dev.real_checks.values()) <= 1e-5
    win = [p for p in points(cfg, opts, limits) if Arm.WINDOW in p.arms][0]
    g = dev.gpu
    for family in opts.families:
        for t in range(cfg.tables):
            with dev.arm(family, win, Arm.WINDOW) as ops:
                g.out.fill_(float("nan"))
                ops.prepare(t)
                w = dev.driver.window(dev.stream.ptr)
                assert w.num_bytes == cfg.hot_rows * cfg.dim * 4
                assert abs(w.base_ptr - dev.remap_w[t].data_ptr()) < 2 * MiB
                ops.consumer(t, 1)()
                g.stream_sync()
            ref = F.embedding_bag(dev.indices[1, t], g.weights[t].double(), g.offsets, mode="sum")
            assert relative_error(g.out, ref) <= 1e-5
    # the hot rows are the front of the remapped table, hottest first
    assert torch.equal(dev.remap_w[0][: cfg.hot_rows], g.weights[0][dev.hot])


@pytest.mark.parametrize("axis, extra", [
    ("amortisation", ["--k", "1,2,4"]),
    ("hotset", ["--hot-sizes", "0,5000,20000"]),
    ("window", ["--hit-ratios", "0.5,1"]),
    ("occupy", ["--occupy-mib", "0,20"]),
    ("pollution", ["--pollute-mib", "0,30"]),
])
def test_tiny_sweep_of_every_axis(axis, extra, tmp_path: Path):
    from l2attr.sweep.analyse.judge import analyse_sweep
    from l2attr.sweep.load import load_sweep

    out = tmp_path / "runs"
    assert main(["sweep", axis, "--preset", "small", "--profiles", "reuse_high,random", "--repeats", "1",
                 "--out", str(out), "--quiet", *extra]) == 0
    (run,) = [p for p in out.iterdir() if p.name.endswith(axis)]
    an = analyse_sweep(load_sweep(run))
    assert not an.table.empty and an.reading
    assert main(["report", str(run), "-o", str(tmp_path / "r.html")]) == 0


def test_ladder_with_the_apw_rung_runs_and_reports(tmp_path: Path):
    """APW+OptMT appears in the ladder like every other rung: checked on real data, timed, reported."""
    import json

    import pandas as pd

    out = tmp_path / "runs"
    assert main(["ladder", "--preset", "small", "--rungs", "optmt,l2p_optmt,apw_optmt", "--profiles", "reuse_high",
                 "--repeats", "1", "--no-bandwidth", "--out", str(out), "--quiet"]) == 0
    (run,) = list(out.glob("*-ladder"))
    cells = pd.read_csv(run / "cells.csv")
    assert {"artifact", "tuned"} <= set(cells[cells.rung == "apw_optmt"]["family"])
    checks = json.loads((run / "manifest.json").read_text())["real_data_checks"]
    assert max(v for k, v in checks.items() if "apw_optmt" in k) <= 1e-5
    assert main(["report", str(run), "-o", str(tmp_path / "r.md")]) == 0
    assert "APW+OptMT" in (tmp_path / "r.md").read_text()
