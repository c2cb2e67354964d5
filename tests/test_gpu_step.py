"""GPU tests of step attribution (mark `gpu`): the self-check pair, that the read flush leaves no
dirty lines for the next kernel to write back, that the re-warm puts a range back in L2, the
self-check's edge measured apart (with its control), and the self-check as a CUDA-graph step."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "steps"))


def test_self_check_quarter_l2_saves_four_l2_does_not(tmp_path):
    import torch
    from selfcheck import make

    import l2attr

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    small = l2attr.step(make(l2 // 4), name="quarter", repeats=8, warmup=2, out=tmp_path, log=lambda s: None)
    big = l2attr.step(make(4 * l2), name="four", repeats=8, warmup=2, out=tmp_path, log=lambda s: None)
    consumer = lambda a: a.kernels[a.kernels["op"] == "sum"].iloc[0]          # noqa: E731
    assert consumer(small)["judgement"] == "faster"
    assert consumer(big)["judgement"] != "faster"
    assert small.judgement == "faster"


def test_read_flush_leaves_no_write_back_for_the_next_kernel():
    """Dirty a 48 MiB buffer, read-flush, then time a read-only kernel over another buffer: it is
    as fast as after two flushes in a row (nothing left to write back)."""
    import torch

    from l2attr.measure.verbs import Device

    dev = Device("blocking")
    dirty = torch.empty(12 << 20, device="cuda")
    other = torch.randn(12 << 20, device="cuda")

    def arm(make_dirty: bool) -> float:
        times = []
        for _ in range(20):
            dev.flush_l2()
            if make_dirty:
                dirty.fill_(1.0)
                dev.sync()
                dev.flush_l2()
            times.append(dev.timer.time(lambda: other.sum()).time_us)
        return float(np.median(times[3:]))

    clean, after_dirty = arm(False), arm(True)
    assert abs(after_dirty / clean - 1) < 0.03
    dev.close()


def test_rewarm_puts_a_range_back_in_l2():
    """The re-warm the edge measurement relies on: after a clean flush, reading a quarter-L2
    buffer back (kernels/warm_l2.cu) makes a later read of it as fast as right after it was
    written, and faster than cold."""
    import torch

    from l2attr.measure.verbs import Device
    from l2attr.steps.measure.edges import Warmer

    dev = Device("blocking")
    warm = Warmer(dev)
    n = dev.l2_bytes // 4 // 4
    buf = torch.randn(n, device="cuda")

    def arm(prepare) -> float:
        times = []
        for _ in range(25):
            dev.flush_l2()
            prepare()
            dev.sync()
            times.append(dev.timer.time(lambda: buf.sum()).time_us)
        return float(np.median(times[3:]))

    cold = arm(lambda: None)
    written = arm(lambda: buf.mul_(1.0))
    rewarmed = arm(lambda: warm([(buf.data_ptr(), buf.numel() * 4)]))
    assert rewarmed < 0.9 * cold
    assert abs(rewarmed / written - 1) < 0.1
    dev.close()


def test_edge_measured_apart_quarter_l2_saves_four_l2_does_not(tmp_path):
    import torch
    from selfcheck import make

    import l2attr

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    small = l2attr.step(make(l2 // 4), name="quarter", repeats=8, warmup=2, out=tmp_path, edges=1, log=lambda s: None)
    big = l2attr.step(make(4 * l2), name="four", repeats=8, warmup=2, out=tmp_path, edges=1, log=lambda s: None)
    e_small, e_big = small.measured_edges.iloc[0], big.measured_edges.iloc[0]
    # graph surgery: the edge joins kernel nodes 0 -> 1 (the mul's kernel, the sum's), named by kernel
    assert small.manifest["edges_kernel_level"] is True
    assert (e_small["producer"], e_small["consumer"]) == (0, 1)
    assert ("elementwise" in e_small["producer_op"], "reduce" in e_small["consumer_op"]) == (True, True)
    assert e_small["control"] == "holds", e_small.to_dict()       # the re-warm reproduces natural
    assert e_small["judgement"] == "faster" and e_small["saving_us"] > 0
    assert e_big["judgement"] != "faster"
    # edge_cold lies between rewarmed and all-inputs cold (the edge is most of what the sum reads)
    assert e_small["rewarmed_us"] < e_small["edge_cold_us"] <= 1.05 * e_small["cold_us"]


def test_graph_step_quarter_l2(tmp_path):
    import torch
    from selfcheck import make

    import l2attr

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    ans = l2attr.step(make(l2 // 4), name="graph", repeats=8, warmup=2, out=tmp_path, edges=0,
                      log=lambda s: None)
    g = ans.manifest["surgery"]            # graph surgery (l2attr.step's only method): both arms replay the graph
    assert g["matched_kernels"] == g["eager_kernels"] == g["graph_kernels"] == 2
    consumer = ans.kernels[ans.kernels["op"] == "sum"].iloc[0]
    assert consumer["judgement"] == "faster"
    assert ans.step_time.valid and ans.step_time.median < 2 * ans.kernel_time_us + 20
