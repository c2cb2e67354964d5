"""GPU tests of the engine (mark `gpu`): the blocking timer against a long spin, the releases it
waits for, the protocol's flush and persisting reset on real lines, and a never-seen pair timed and
profiled end to end.

The self-check pair: a copy kernel writes a buffer (producer), a sum reads it (consumer). At a
quarter of the L2 the consumer must be faster after the producer than after a flush; at four
times the L2 it must not be."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


def _median(times: list[float]) -> float:
    return float(np.median(times))


def test_blocking_timer_matches_a_300us_spin_and_never_times_out():
    import cupy
    import torch

    from l2attr.measure.timer import BlockingTimer, SpinTimer

    src = torch.empty(1 << 25, dtype=torch.float32, device="cuda").uniform_()   # 128 MiB
    dst = torch.empty_like(src)

    def copy():
        dst.copy_(src)

    blocking, spin = BlockingTimer(torch, cupy), SpinTimer(torch, cupy, 300.0)
    for _ in range(20):
        blocking.time(copy), spin.time(copy)
    b, s = [], []
    for _ in range(200):                       # interleaved, so drift touches both alike
        sb, ss = blocking.time(copy), spin.time(copy)
        assert sb.discard in ("", "throttled")
        b.append(sb.time_us)
        s.append(ss.time_us)
    ratio = _median(b) / _median(s)
    _record_ratio(ratio, _median(b), _median(s))
    assert abs(ratio - 1) < 0.01, f"blocking / spin-300 median ratio {ratio:.4f}"
    assert np.isfinite(sb.sm_clock_mhz) and sb.sm_clock_mhz > 0
    blocking.close()


RATIO_LOG = "L2ATTR_TIMER_RATIO_LOG"


def _record_ratio(ratio: float, blocking_us: float, spin_us: float) -> None:
    """One JSON line per run into $L2ATTR_TIMER_RATIO_LOG, before the bound is checked, so the
    bound can be set from the distribution of many fresh processes (tools/device_adaptive.sh at d1021aa)."""
    import json
    import os

    path = os.environ.get(RATIO_LOG)
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            import torch

            from l2attr.gpu.device import identity

            gpu = identity(torch)        # which machine: the bound is set across several
            fh.write(json.dumps({"ratio": ratio, "blocking_us": blocking_us, "spin_us": spin_us, "gpu": gpu["uuid"],
                                 "host": gpu["host"]}) + "\n")


def test_blocking_timer_holds_no_host_time():
    """Host sleeps 2 ms between launching the blocking kernel and releasing it: the interval of a
    ~10 us kernel stays ~10 us (a spin of 50 us would have run out long before)."""
    import time

    import cupy
    import torch

    from l2attr.measure.timer import BlockingTimer

    x = torch.empty(1 << 22, dtype=torch.float32, device="cuda").uniform_()
    t = BlockingTimer(torch, cupy)
    quick = [t.time(lambda: x.mul_(1.0)).time_us for _ in range(50)]
    slow = [t.time(lambda: (time.sleep(0.002), x.mul_(1.0))).time_us for _ in range(50)]
    assert _median(slow) < _median(quick) * 1.1 + 1.0
    assert _median(slow) < 500
    t.close()


def _pair(nbytes: int, tmp_path, name: str):
    import torch

    import l2attr

    n = nbytes // 4
    src = torch.randn(n, device="cuda")
    buf = torch.empty(n, device="cuda")

    exp = l2attr.Experiment(name, producer=lambda: buf.copy_(src), consumer=lambda: buf.sum(),
                            reference=lambda: src.double().sum(), rtol=1e-3, atol=1e-2,
                            conditions=["natural", "flush_after_producer"], calls=20, warmup=3,
                            repeats=2, out=tmp_path)
    return exp, exp.time(log=lambda s: None)


def test_self_check_quarter_l2_reuses_four_l2_does_not(tmp_path):
    from l2attr.experiment.table import analyse_experiment, load_experiment
    from l2attr.gpu.device import gpu_facts

    l2 = int(gpu_facts()["l2_bytes"])
    small, rs = _pair(l2 // 4, tmp_path, "selfcheck-quarter-l2")
    big, rb = _pair(4 * l2, tmp_path, "selfcheck-4x-l2")
    vs = analyse_experiment(load_experiment(rs.run_dir)).verdict.iloc[0]
    vb = analyse_experiment(load_experiment(rb.run_dir)).verdict.iloc[0]
    assert vs["consumer_judgement"] == "faster" and vs["consumer_speedup"] > 1.1
    assert vb["consumer_judgement"] != "faster"     # no saving beyond noise at 4x the L2


def test_persisting_reset_takes_away_evict_last_protection():
    """Lines pinned with evict_last survive a polluting read of 1.5x L2 (partly); after
    cudaCtxResetPersistingL2Cache they fall to it like any other line: the consumer over the
    pinned bytes is slower after reset + pollution than after pollution alone.

    The consumer only reads the pinned bytes (a sum): a copy, as this test first used, writes as
    many bytes as it reads, and its time hid the difference (on the H200 14.30 against 14.21 µs
    after reset and kept, "within noise" in 3 of 5 fresh runs)."""
    import cupy
    import torch

    from l2attr.measure.verbs import Device
    from l2attr.measure.timer import BlockingTimer

    dev = Device("blocking")
    pin_src = r"""
    extern "C" __global__ void pin(const char* p, long long n) {
      for (long long o = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 128; o < n;
           o += (long long)gridDim.x * blockDim.x * 128)
        asm volatile("prefetch.global.L2::evict_last [%0];" :: "l"(p + o));
    }"""
    pin = cupy.RawKernel(pin_src, "pin")
    hot = torch.randn(24 << 18, device="cuda")            # 24 MiB
    junk = torch.randn(int(1.5 * dev.l2_bytes) // 4, device="cuda")
    t = dev.timer
    assert isinstance(t, BlockingTimer)

    def once(reset: bool) -> float:
        dev.flush_l2()
        pin((264,), (256,), (np.uint64(hot.data_ptr()), np.int64(hot.numel() * 4)))
        dev.sync()
        if reset:
            dev.reset_persisting()
        junk.sum()
        dev.sync()
        return t.time(lambda: hot.sum()).time_us

    kept, reset = [], []
    for i in range(40):                         # interleaved arms: drift touches both alike
        kept.append(once(False))
        reset.append(once(True))
    from l2attr.analysis.significance import Interval, compare
    from l2attr.measure.stats import bootstrap_median_ci

    iv = lambda xs: Interval(float(np.median(xs[5:])), *bootstrap_median_ci(np.array(xs[5:])))  # noqa: E731
    assert dev.reset_ok
    a, b = iv(reset), iv(kept)
    assert compare(a, b).judgement.value == "faster", (   # the pinned copy is faster beyond noise
        f"after reset {a.median:.2f} µs [{a.lo:.2f}, {a.hi:.2f}], kept {b.median:.2f} µs [{b.lo:.2f}, {b.hi:.2f}]")
    dev.close()
