"""The process tests/test_gpu_residency.py runs under Nsight Compute (not a test itself).

The ladder's own pin and OptMT consumer (artifact and tuned families) on a reuse_high workload
of the artifact's shape (two tables), each call from a flushed L2 with no evict-last lines,
under the conditions the residency tests compare, each its own experiment range (names.py):

    <family>-clean     natural (pin -> consumer), no_producer (consumer alone),
                       reset_after_producer (pin -> persisting reset -> consumer),
                       flush_after_producer (pin -> flush -> consumer)
    <family>-polluted  natural and reset_after_producer with a streaming read of twice the
                       L2 of unrelated data between the pin (or the reset) and the consumer

Only the pin (producer) and the consumer ranges are profiled; the pollution read, the flushes
and the resets run outside them. The same calls (table, batch) run in the same order under
every condition, so call c of one condition pairs with call c of another.

    python tests/gpu_residency_child.py CACHE_DIR
"""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable

import numpy as np

FAMILIES = ("artifact", "tuned")
CALLS = 8      # profiled calls per condition
WARMUP = 2     # calls run before them, not profiled
TABLES = 2


def clean_conditions() -> tuple[str, ...]:
    from l2attr.vocab import L2Condition

    return (L2Condition.NATURAL.value, L2Condition.NO_PRODUCER.value,
            L2Condition.RESET_AFTER_PRODUCER.value, L2Condition.FLUSH_AFTER_PRODUCER.value)


def polluted_conditions() -> tuple[str, ...]:
    from l2attr.vocab import L2Condition

    return (L2Condition.NATURAL.value, L2Condition.RESET_AFTER_PRODUCER.value)


def workload_config() -> Any:
    """The artifact's call (2048 bags x 150 lookups over 500K x 128 fp32 rows, 60K hot rows),
    on two tables and as many batches as one condition's calls need."""
    from l2attr.dlrm.config import PRESETS

    calls = WARMUP + CALLS + 1                    # run_repeat drops the first measured call
    batches = -(-calls // TABLES)
    return PRESETS["artifact"].replace(tables=TABLES, batches=batches - 1, warmup_batches=1)


def _ranges(label: str, condition: str) -> Callable[[Any, int], Any]:
    """The experiment ranges of the producer and the consumer; none around the pollution."""
    from l2attr.annotation import range_context
    from l2attr.vocab import Role

    inner = range_context(label, condition)
    return lambda role, call: nullcontext() if role == Role.POLLUTE else inner(role, call)


def main(cache_dir: Path) -> int:
    import torch

    from l2attr.measure.verbs import Device
    from l2attr.gpu.runtime import READ_SPEC, get_kernel
    from l2attr.dlrm.declare import variant
    from l2attr.dlrm.measure.kernels import LaunchShape, VariantKernels
    from l2attr.dlrm.workload import build_workload
    from l2attr.measure.cell import CallOps, run_repeat
    from l2attr.vocab import RepeatMode, TimerKind

    cfg = workload_config()
    dev = Device(TimerKind.SPIN.value, spin_us=0.0)         # profile mode: no timer runs
    w = build_workload(cfg, profile="reuse_high", cache_dir=cache_dir)
    flat = np.ascontiguousarray(w.indices).reshape(-1)
    spare = np.concatenate([flat, flat[-1:]])                 # a valid id after the last (the ladder's layout)
    indices = torch.from_numpy(spare).cuda()[: flat.size].view(w.indices.shape)
    hot = torch.from_numpy(np.ascontiguousarray(w.hot)).cuda()
    g = torch.Generator(device="cuda").manual_seed(cfg.seed)
    weights = torch.empty((cfg.tables, cfg.rows, cfg.dim), dtype=torch.float32, device="cuda")
    for t in range(cfg.tables):
        weights[t].uniform_(-1.0, 1.0, generator=g)
    offsets = torch.arange(cfg.batch_size, dtype=torch.int64, device="cuda") * cfg.pooling
    out = torch.empty((cfg.batch_size, cfg.dim), dtype=torch.float32, device="cuda")
    junk = torch.randint(0, 2**31 - 1, (2 * dev.l2_bytes // 4,), dtype=torch.int32, device="cuda")
    read = get_kernel(READ_SPEC)
    sms = torch.cuda.get_device_properties(0).multi_processor_count

    def pollute() -> None:
        ptr = np.uint64(junk.data_ptr())
        read((8 * sms,), (256,), (ptr, np.int64(junk.numel() * 4 // 16), np.int32(1), ptr))

    dev.flush_l2()
    if not dev.reset_ok:     # without it evict-last lines outlive every flush: no clean start, no reset arm
        print("gpu_residency_child: cudaCtxResetPersistingL2Cache is unavailable (cuda-python)", file=sys.stderr)
        return 3
    for family in FAMILIES:
        k = VariantKernels(variant(family, "l2p_optmt"), "fp32", LaunchShape())

        def ops_for(between: Callable[[], None] | None) -> Callable[[int], CallOps]:
            def ops(i: int) -> CallOps:
                t, b = i % cfg.tables, (i // cfg.tables) % indices.shape[0]
                wt, idx = weights[t], indices[b, t]
                return CallOps(consumer=lambda: k.launch_consumer(wt, idx, offsets, out),
                               producer=lambda: k.launch_pin(wt, hot), between=between,
                               setup=dev.flush_l2)      # every call from a flushed L2
            return ops

        for label, between, conditions in ((f"{family}-clean", None, clean_conditions()),
                                           (f"{family}-polluted", pollute, polluted_conditions())):
            for cond in conditions:
                run_repeat(dev, ops_for(between), cond, RepeatMode.PROFILE.value, CALLS + 1, WARMUP,
                           ranges=_ranges(label, cond), ranges_from=1)
    dev.sync()
    dev.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1])))
