"""Launch wrappers for the compiled variants: one object per rung that knows its pin and consumer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from l2attr.gpu import compile as kc
from l2attr.ladder import DEFAULT_MAXRREGCOUNT, Rung


@dataclass(frozen=True)
class LaunchShape:
    grid: int = 1024
    block: tuple[int, int] = (32, 8)          # consumer: 32 features x 8 bags, as ATen / the artifact
    pin_grid: int = 1024
    pin_block_line: int = 256                 # per-line pin: 1-D blocks
    pin_block_element: tuple[int, int] = (2, 128)  # per-element pin: the artifact's (2, 128)


def _ptr(tensor: Any) -> Any:
    """A torch tensor's device address as the 64-bit value a RawKernel takes for a pointer."""
    import numpy as np

    return np.uint64(tensor.data_ptr())


class RungKernels:
    """The compiled kernels of one rung plus how to launch them on tensors (torch, on the GPU)."""

    def __init__(self, rung: Rung, dtype: str, shape: LaunchShape,
                 maxrregcount: int = DEFAULT_MAXRREGCOUNT, pin_granularity: str = "line",
                 rpf_depth: int = 2) -> None:
        self.rung, self.shape, self.pin_granularity = rung, shape, pin_granularity
        self.consumer_spec = kc.consumer_spec(rung, dtype, maxrregcount, rpf_depth)
        self.consumer = kc.get_kernel(self.consumer_spec)
        self.pin_spec = kc.pin_spec(dtype, pin_granularity) if rung.pins else None
        self.pin = kc.get_kernel(self.pin_spec) if self.pin_spec else None

    def resources(self) -> dict[str, Any]:
        block = self.shape.block[0] * self.shape.block[1]
        info: dict[str, Any] = {
            "consumer": {"kernel": self.consumer_spec.function, "source": self.consumer_spec.source,
                         "options": list(self.consumer_spec.options),
                         "grid": self.shape.grid, "block": list(self.shape.block),
                         **kc.kernel_resources(self.consumer, block)}}
        if self.pin is not None and self.pin_spec is not None:
            pblock = self._pin_block()
            threads = pblock[0] * (pblock[1] if len(pblock) > 1 else 1)
            info["pin"] = {"kernel": self.pin_spec.function, "source": self.pin_spec.source,
                           "options": list(self.pin_spec.options), "grid": self.shape.pin_grid,
                           "block": list(pblock), **kc.kernel_resources(self.pin, threads)}
        return info

    def _pin_block(self) -> tuple[int, ...]:
        if self.pin_granularity == "element":
            return self.shape.pin_block_element
        return (self.shape.pin_block_line,)

    def launch_consumer(self, weight: Any, indices: Any, offsets: Any, out: Any,
                        mean: bool = False, per_sample_weights: Any = None,
                        padding_idx: int = -1) -> None:
        import numpy as np

        psw = per_sample_weights.data_ptr() if per_sample_weights is not None else 0
        self.consumer(
            (self.shape.grid,), self.shape.block,
            (_ptr(weight), _ptr(indices), _ptr(offsets), _ptr(out),
             np.uint64(psw), np.int64(indices.numel()), np.int64(offsets.numel()),
             np.int32(weight.shape[1]), np.int64(weight.stride(0)), np.int64(padding_idx),
             np.int32(1 if mean else 0)))

    def launch_pin(self, weight: Any, hot: Any) -> None:
        import numpy as np

        assert self.pin is not None
        self.pin((self.shape.pin_grid,), self._pin_block(),
                 (_ptr(weight), _ptr(hot), np.int64(hot.numel()),
                  np.int32(weight.shape[1]), np.int64(weight.stride(0))))
