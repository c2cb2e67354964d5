"""measure/gpu.Gpu (or a test's fake) in the verbs of the one cell protocol (measure/cell.py).

The ladder and the sweeps time through the Gpu their workload built; this adapter is the one place
that maps its names (timed, last_lag_us, reset_l2_priority, stream_sync, host_clock_us) onto the
protocol's, and keeps each timed kernel's host enqueue time in order (the sweep's rows need them).
"""

from __future__ import annotations

from typing import Any, Callable

from l2attr.measure.timer import Sample
from l2attr.vocab import KEPT


class GpuVerbs:
    def __init__(self, gpu: Any) -> None:
        self.gpu, self.timer = gpu, self
        self.lags: list[float] = []

    def time(self, launch: Callable[[], Any]) -> Sample:
        us = self.gpu.timed(launch)
        self.lags.append(self.gpu.last_lag_us)
        return Sample(us, self.gpu.last_lag_us, getattr(self.gpu, "last_discard", KEPT))

    def flush_l2(self) -> None:
        self.gpu.flush_l2()

    def reset_persisting(self) -> None:
        self.gpu.reset_l2_priority()

    def sync(self) -> None:
        self.gpu.stream_sync()

    def host_us(self) -> float:
        return self.gpu.host_clock_us()
