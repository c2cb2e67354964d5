"""GPU tests (mark `gpu`) of what the ladder's L2 residency rests on, on the ladder's own kernels:

(a) the pin lowers the consumer's DRAM bytes on reuse_high;
(b) a persisting reset takes the pin's protection away: the reset lines survive a flush-free step
    but fall to a polluting read that the pinned lines survive (DRAM bytes: the evict-policy
    counters classify requests, not lines, so they cannot show it);
(c) the blocking timer's consumer median agrees with a 300 us spin head start's within 1 % on a
    ladder cell (the fast family's random consumer, the one the launch lag moved most).

(a) and (b) read DRAM bytes per consumer call from Nsight Compute (one metric, one pass) over
tests/gpu_residency_child.py, through the experiment profile path; every margin comes from the
measured per-call values (bootstrap intervals of medians, l2attr.analysis.significance's rule),
never from a number seen in a log.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.gpu

CHILD = Path(__file__).with_name("gpu_residency_child.py")
DRAM = "dram__bytes_read.sum"


def _interval(values: np.ndarray):
    from l2attr.analysis.significance import Interval
    from l2attr.measure.stats import bootstrap_median_ci

    values = np.asarray(values, dtype=float)
    return Interval(float(np.median(values)), *bootstrap_median_ci(values))


def _fewer(small: np.ndarray, large: np.ndarray) -> bool:
    """`small` below `large` beyond noise: the one significance rule (disjoint 95 % intervals of
    the medians, one process, interleaved), applied to bytes instead of microseconds."""
    from l2attr.analysis.significance import compare
    from l2attr.vocab import Judgement

    return compare(_interval(large), _interval(small)).judgement == Judgement.FASTER


@pytest.fixture(scope="module")
def dram(tmp_path_factory) -> pd.DataFrame:
    """Consumer DRAM read bytes per call: experiment x condition x call."""
    ncu = shutil.which("ncu")
    if ncu is None:
        pytest.skip("ncu is not on PATH: the DRAM tests need Nsight Compute")
    from l2attr.experiment.profile import profile_command
    from l2attr.rundir import RunDir
    from l2attr.vocab import Command

    root = tmp_path_factory.mktemp("residency")
    run = RunDir.create(root, "residency", {"kind": Command.EXPERIMENT.value})
    frame = profile_command([sys.executable, str(CHILD), str(root / "cache")], run, metrics=DRAM, ncu=ncu,
                            log=lambda s: None)
    from l2attr.vocab import Role

    return frame[(frame["metric"] == DRAM) & (frame["role"] == Role.CONSUMER.value)]


def _calls(dram: pd.DataFrame, label: str, condition: str) -> np.ndarray:
    """One value per profiled call, in call order (the same calls under every condition)."""
    from gpu_residency_child import CALLS

    rows = dram[(dram["experiment"] == label) & (dram["condition"] == condition)].sort_values("call")
    assert list(rows["call"]) == list(range(1, CALLS + 1)), (label, condition, list(rows["call"]))
    return rows["value"].to_numpy(dtype=float)


@pytest.mark.parametrize("family", ["artifact", "tuned"])
def test_pin_lowers_the_consumers_dram_bytes_on_reuse_high(dram, family):
    from l2attr.vocab import L2Condition

    pinned = _calls(dram, f"{family}-clean", L2Condition.NATURAL.value)
    alone = _calls(dram, f"{family}-clean", L2Condition.NO_PRODUCER.value)
    assert (alone > 0).all()
    assert (pinned < alone).all()            # call by call: the same table and batch, with and without the pin
    assert _fewer(pinned, alone)             # and beyond the calls' own spread


@pytest.mark.parametrize("family", ["artifact", "tuned"])
def test_persisting_reset_lines_survive_a_quiet_step_but_fall_to_pollution(dram, family):
    from l2attr.vocab import L2Condition

    nat, reset = L2Condition.NATURAL.value, L2Condition.RESET_AFTER_PRODUCER.value
    pinned = _calls(dram, f"{family}-clean", nat)
    after_reset = _calls(dram, f"{family}-clean", reset)
    flushed = _calls(dram, f"{family}-clean", L2Condition.FLUSH_AFTER_PRODUCER.value)
    polluted = _calls(dram, f"{family}-polluted", nat)
    reset_polluted = _calls(dram, f"{family}-polluted", reset)
    # Nothing between reset and consumer: the lines are still there, only their mark is gone. The
    # consumer reads less than after a flush, beyond noise, and keeps most (over half) of the
    # pin's saving (a reset that evicted them would leave it at the flushed level).
    assert _fewer(after_reset, flushed)
    saving = np.median(flushed) - np.median(pinned)
    assert saving > 0
    assert np.median(flushed) - np.median(after_reset) > saving / 2
    # A streaming read of twice the L2 in between: the evict-last lines keep part of the saving
    # (the consumer reads less than after a flush), the reset ones lose more of it.
    assert _fewer(polluted, flushed)
    assert _fewer(polluted, reset_polluted)
    assert (polluted < reset_polluted).all()


def test_blocking_timer_matches_a_300us_spin_on_the_fast_random_consumer(tmp_path):
    """One ladder cell (fast OptMT, random profile, natural L2, the artifact's call on 6 tables)
    through the ladder's own CellRunner; repeats alternate between the two timers, so drift
    touches both alike. The ratio of the medians, with the interval the significance rule gives
    it, must lie within 1 % of 1."""
    import torch

    from l2attr.analysis.significance import compare
    from l2attr.dlrm.config import PRESETS
    from l2attr.dlrm.declare import variant
    from l2attr.dlrm.measure.gpu import Gpu
    from l2attr.dlrm.measure.kernels import LaunchShape, VariantKernels
    from l2attr.ladders.measure.protocol import CellRunner
    from l2attr.dlrm.workload import build_workload
    from l2attr.measure.timer import SpinTimer
    from l2attr.vocab import KEPT, Discard, L2Condition, TimerKind

    cfg = PRESETS["artifact"].replace(tables=6)
    gpu = Gpu(cfg, 300.0, lambda s: None, timer=TimerKind.BLOCKING.value)
    timers = {TimerKind.BLOCKING: gpu.timer, TimerKind.SPIN: SpinTimer(gpu.torch, gpu.cupy, 300.0)}
    v = variant("fast", "optmt")
    kernels = VariantKernels(v, cfg.dtype, LaunchShape())
    w = build_workload(cfg, profile="random", cache_dir=tmp_path)
    indices = gpu.upload_indices(w.indices)
    hot = torch.from_numpy(np.ascontiguousarray(w.hot)).cuda()
    runner = CellRunner(gpu, kernels, v, "random", L2Condition.NATURAL.value, indices, hot)
    gpu.warm_up(0.5)
    got: dict[TimerKind, list[pd.DataFrame]] = {k: [] for k in timers}
    for repeat in range(12):
        kind = TimerKind.BLOCKING if repeat % 2 == 0 else TimerKind.SPIN
        gpu.timer = timers[kind]
        got[kind].append(runner.run_repeat(repeat, device_timed=True))
    gpu.timer = timers[TimerKind.BLOCKING]
    rows = {k: pd.concat(v_, ignore_index=True) for k, v_ in got.items()}
    discards = {k.value: r["timer_discard"].fillna(KEPT).value_counts().to_dict() for k, r in rows.items()}
    assert not (rows[TimerKind.BLOCKING]["timer_discard"] == Discard.TIMEOUT.value).any(), discards
    # the medians as the ladder's cells.csv gives them: every sample of the cell's device repeats
    times = {k: r["consumer_time_us"].to_numpy(dtype=float) for k, r in rows.items()}
    assert min(len(x) for x in times.values()) >= 300
    judged = compare(_interval(times[TimerKind.SPIN]), _interval(times[TimerKind.BLOCKING]))
    assert 0.99 <= judged.lo and judged.hi <= 1.01, (judged, {k.value: float(np.median(x)) for k, x in times.items()},
                                                    discards)
