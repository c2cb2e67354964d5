"""GPU tests of step attribution (mark `gpu`): the self-check pair, and that the read flush leaves
no dirty lines for the next kernel to write back."""

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

    from l2attr.experiment.device import Device

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
