"""The GPU verbs the cell protocol needs for any pair: flush, persisting reset, sync, clocks, timer.

Nothing here knows a workload: the flush is a read of twice the L2 (clean lines, no write-back
for the next kernel to pay: docs/facts.md#read-flush), preceded by cudaCtxResetPersistingL2Cache so that
evict_last lines cannot survive it.
"""

from __future__ import annotations

import time
from typing import Any

from l2attr.measure.timer import current_streams, make_timer, torch_stream


class Device:
    """One GPU, the current torch stream, and the kernel timer of the run."""

    def __init__(self, timer: str, spin_us: float = 300.0, timeout_ms: float = 500.0) -> None:
        import numpy as np

        from l2attr.gpu.runtime import FLUSH_SPEC, get_kernel, require_gpu

        self.torch, self.cupy = require_gpu()
        self.np = np
        props = self.cupy.cuda.runtime.getDeviceProperties(self.cupy.cuda.Device().id)
        self.l2_bytes = int(props["l2CacheSize"])
        self._flush = get_kernel(FLUSH_SPEC)
        self._flush_buf = self.torch.randint(0, 2**31 - 1, (2 * self.l2_bytes // 4,),
                                             dtype=self.torch.int32, device="cuda")
        self.timer = make_timer(timer, self.torch, self.cupy, spin_us, timeout_ms)
        self.reset_ok = False

    def _stream(self) -> Any:
        return torch_stream(self.torch, self.cupy)

    def reset_persisting(self) -> None:
        from l2attr.gpu.runtime import reset_persisting_l2

        self.sync()
        self.reset_ok = reset_persisting_l2()
        self.sync()

    def flush_l2(self) -> None:
        self.reset_persisting()
        buf = self._flush_buf
        ptr = self.np.uint64(buf.data_ptr())
        self._flush((1024,), (256,), (ptr, self.np.int64(buf.numel()), ptr), stream=self._stream())
        self.sync()

    def sync(self) -> None:
        current_streams(self.torch, self.cupy)[0].synchronize()

    def host_us(self) -> float:
        return time.perf_counter() * 1e6

    def facts(self) -> dict[str, Any]:
        """What the manifest records of the GPU (identity included) and the software."""
        from l2attr.gpu.device import gpu_facts, software_versions

        return {"gpu": gpu_facts(), "software": software_versions()}

    def close(self) -> None:
        self.timer.close()
