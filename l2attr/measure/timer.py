"""Kernel timers: CUDA events around one launch, with the host's launch lag kept out.

An event pair measures the GPU's time from the start event to the stop event. If the GPU reaches
the start event before the host has enqueued the timed kernel, the interval holds host time too
(a fixed spin head start leaves a share of samples launched late: docs/facts.md#launch-lag). Two ways:

* `BlockingTimer` (default): a one-thread kernel waits on a flag in host-mapped memory; the host
  enqueues the start event, the launch and the stop event, then sets the flag. Late samples are
  impossible by construction; a bounded wait marks a sample `timeout` (then host time may be in
  it) instead of hanging. The waiting thread also measures the SM clock (cycles per global-timer
  ns) right before the timed kernel, for the throttle check.
* `SpinTimer`: a GPU spin of fixed length before the start event (the old way); a sample whose
  enqueue took longer than the spin is marked `late`.

Both return a `Sample`; the verbs need a GPU, the decisions (`judge_*`) are plain functions.
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass
from typing import Any, Callable

from l2attr.vocab import KEPT, Discard, TimerKind

Launch = Callable[[], Any]
NAN = float("nan")
# Below this share of the default SM clock a sample counts as throttled.
MIN_CLOCK_RATIO = 0.90
# A clock measured over a shorter wait than this is too coarse to judge (global timer ticks).
MIN_CLOCK_WINDOW_NS = 2000


@dataclass(frozen=True)
class Sample:
    """One timed launch: GPU time, host enqueue time, why it is discarded ('' kept), SM clock."""

    time_us: float
    enqueue_us: float
    discard: str = KEPT
    sm_clock_mhz: float = NAN


def judge_blocking(timed_out: bool, cycles: int, ns: int, default_mhz: float,
                   min_ratio: float = MIN_CLOCK_RATIO) -> tuple[str, float]:
    """(discard reason, SM clock MHz) of a blocking-timer sample from what its kernel wrote."""
    mhz = cycles / ns * 1e3 if ns > 0 else NAN
    if timed_out:
        return Discard.TIMEOUT.value, mhz
    if ns >= MIN_CLOCK_WINDOW_NS and default_mhz > 0 and mhz < min_ratio * default_mhz:
        return Discard.THROTTLED.value, mhz
    return KEPT, mhz


def judge_spin(enqueue_us: float, spin_us: float) -> str:
    """A spin-timer sample is late when the host needed longer to enqueue than the spin lasted."""
    return Discard.LATE.value if spin_us <= 0 or enqueue_us >= spin_us else KEPT


class _Events:
    """A start/stop event pair on one stream, in torch's API (the user's ops run on torch's stream)."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)

    def interval_us(self) -> float:
        self.stop.synchronize()
        return float(self.start.elapsed_time(self.stop)) * 1000.0


_STREAMS: dict[int, tuple[Any, Any]] = {}


def _current_ptr(torch: Any) -> int | None:
    """The raw handle of torch's current stream without building a torch Stream object (that costs
    ~20 µs per call: 120K calls in a default ladder); None where torch lacks the private helper."""
    c = getattr(torch, "_C", None)
    raw, dev = getattr(c, "_cuda_getCurrentRawStream", None), getattr(c, "_cuda_getDevice", None)
    if raw is None or dev is None:
        return None
    try:
        return int(raw(dev()))
    except (TypeError, RuntimeError):
        return None


def current_streams(torch: Any, cupy: Any) -> tuple[Any, Any]:
    """(torch's current stream, the same stream as a CuPy stream), made once per stream: l2attr's
    kernels and events queue beside the user's, and a timed launch costs no stream lookups."""
    ptr = _current_ptr(torch)
    if ptr is None or ptr not in _STREAMS:
        current = torch.cuda.current_stream()
        ptr = int(current.cuda_stream)
        if ptr not in _STREAMS:
            _STREAMS[ptr] = (current, _wrap(cupy, current, ptr))
    return _STREAMS[ptr]


def torch_stream(torch: Any, cupy: Any) -> Any:
    """torch's current stream as a CuPy stream (see `current_streams`)."""
    return current_streams(torch, cupy)[1]


def _wrap(cupy: Any, stream: Any, ptr: int) -> Any:
    """CuPy >= 14 takes a foreign stream through the CUDA stream protocol (`__cuda_stream__`);
    older CuPy (or a torch without the protocol) through the raw handle."""
    from_external = getattr(cupy.cuda.Stream, "from_external", None)
    if from_external is not None and hasattr(stream, "__cuda_stream__"):
        try:
            return from_external(stream)
        except (TypeError, ValueError, AttributeError):
            pass
    return cupy.cuda.ExternalStream(ptr)


class BlockingTimer:
    """Events behind a kernel that waits for the host's release (see the module docstring)."""

    kind = TimerKind.BLOCKING

    def __init__(self, torch: Any, cupy: Any, timeout_ms: float = 500.0,
                 min_clock_ratio: float = MIN_CLOCK_RATIO) -> None:
        import numpy as np

        from l2attr.gpu.runtime import BLOCK_SPEC, get_kernel

        self.torch, self.cupy, self.np = torch, cupy, np
        self.kernel = get_kernel(BLOCK_SPEC)
        self.timeout_ns = np.int64(timeout_ms * 1e6)
        self.min_clock_ratio = min_clock_ratio
        rt = cupy.cuda.runtime
        self._host = rt.hostAlloc(64, 2)               # cudaHostAllocMapped
        try:
            self._dev = rt.hostGetDevicePointer(self._host, 0)
        except AttributeError:   # older CuPy: with unified addressing the host pointer is the device's
            self._dev = self._host
        self.words = np.ctypeslib.as_array((ctypes.c_int64 * 4).from_address(self._host))
        props = rt.getDeviceProperties(cupy.cuda.Device().id)
        self.default_mhz = float(props["clockRate"]) / 1e3
        self.events = _Events(torch)

    def time(self, launch: Launch) -> Sample:
        w, ev = self.words, self.events
        w[:] = 0
        tstream, stream = current_streams(self.torch, self.cupy)
        t0 = time.perf_counter()
        self.kernel((1,), (1,), (self.np.uint64(self._dev), self.timeout_ns), stream=stream)
        ev.start.record(tstream)
        launch()
        ev.stop.record(tstream)
        enqueue_us = (time.perf_counter() - t0) * 1e6
        w[0] = 1                                        # release: everything is queued
        us = ev.interval_us()
        discard, mhz = judge_blocking(bool(w[1]), int(w[2]), int(w[3]), self.default_mhz,
                                      self.min_clock_ratio)
        return Sample(us, enqueue_us, discard, mhz)

    def close(self) -> None:
        if self._host:
            self.cupy.cuda.runtime.freeHost(self._host)
            self._host = 0


class SpinTimer:
    """Events behind a fixed GPU spin (kept as an option; may let host time in: `late`)."""

    kind = TimerKind.SPIN

    def __init__(self, torch: Any, cupy: Any, spin_us: float = 300.0) -> None:
        import numpy as np

        from l2attr.gpu.runtime import SPIN_SPEC, get_kernel

        self.torch, self.cupy, self.np = torch, cupy, np
        self.kernel = get_kernel(SPIN_SPEC)
        self.spin_us = spin_us
        self.events = _Events(torch)

    def time(self, launch: Launch) -> Sample:
        ev = self.events
        tstream, stream = current_streams(self.torch, self.cupy)
        if self.spin_us > 0:
            self.kernel((1,), (1,), (self.np.int64(self.spin_us * 1000),), stream=stream)
        t0 = time.perf_counter()
        ev.start.record(tstream)
        launch()
        ev.stop.record(tstream)
        enqueue_us = (time.perf_counter() - t0) * 1e6
        us = ev.interval_us()
        return Sample(us, enqueue_us, judge_spin(enqueue_us, self.spin_us))

    def close(self) -> None:
        pass


def make_timer(kind: str, torch: Any, cupy: Any, spin_us: float = 300.0,
               timeout_ms: float = 500.0) -> BlockingTimer | SpinTimer:
    if TimerKind(kind) == TimerKind.BLOCKING:
        return BlockingTimer(torch, cupy, timeout_ms)
    return SpinTimer(torch, cupy, spin_us)

