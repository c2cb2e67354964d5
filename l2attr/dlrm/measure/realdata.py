"""The checks on a profile's real workload, before its cells are timed: every variant's first call
(table 0, first batch) against torch.nn.functional.embedding_bag in float64, poisoned output.

Why its own module: the ladder, the sweeps and the benchmarks run the same check; the reference
is the same for every variant of a profile, so the run makes it once (`reference`).
"""

from __future__ import annotations

from typing import Any, Callable

from l2attr.dlrm.declare import Variant
from l2attr.dlrm.measure.check import relative_error


def real_data_reference(gpu: Any, indices: Any) -> Any:
    """torch.nn.functional.embedding_bag in float64 on the real workload's first call (table 0,
    first batch): what check_real_data compares every variant of a profile with (made once)."""
    import torch.nn.functional as F

    return F.embedding_bag(indices[0, 0], gpu.weights[0].double(), gpu.offsets, mode="sum")


def check_real_data(gpu: Any, kernels: Any, indices: Any, hot: Any,
                    reference: Callable[[], Any] | None = None) -> float:
    """One call on the real workload (table 0, first batch) against torch, poisoned output
    (`reference`: returns real_data_reference of the same indices, made once for all variants)."""
    if kernels is None:
        return 0.0
    g = gpu
    g.out.fill_(float("nan"))
    if kernels.pin is not None:
        kernels.launch_pin(g.weights[0], hot)
    kernels.launch_consumer(g.weights[0], indices[0, 0], g.offsets, g.out)
    g.torch.cuda.synchronize()
    return relative_error(g.out, real_data_reference(g, indices) if reference is None else reference())


def window_for(gpu: Any, variants: list[Variant], indices: Any, hot: Any) -> Any:
    """The APW+OptMT rung's remapped tables and stream window for this workload (None without it)."""
    if not any(v.rung.window for v in variants):
        return None
    from l2attr.gpu.persisting import device_limits
    from l2attr.dlrm.measure.residency import StreamWindow, build_remap

    remap = build_remap(gpu.torch, gpu.weights, hot, indices)
    return StreamWindow(gpu.torch, gpu.cupy, remap, int(hot.numel()), 1.0,
                        device_limits().persisting_max_bytes)


def check_window_data(gpu: Any, kernels: Any, indices: Any, window: Any,
                      reference: Callable[[], Any] | None = None) -> float:
    """One call through the remapped table and indices, window set, against torch on the originals."""
    if kernels is None:
        return 0.0
    g = gpu
    with window.active():
        g.out.fill_(float("nan"))
        window.set(0)
        kernels.launch_consumer(window.remap.weights[0], window.remap.indices[0, 0], g.offsets, g.out)
        g.stream_sync()
    return relative_error(g.out, real_data_reference(g, indices) if reference is None else reference())
