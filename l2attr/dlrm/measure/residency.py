"""Residency without a pin kernel: hot rows remapped to one contiguous region per table, and a
stream access-policy window over it. Shared by the window sweep and the ladder's APW+OptMT rung.

The remap is what DLRM systems do: the hot rows (hottest first) copied once to the front of each
table, the others after them in id order, and the index stream rewritten through the inverse
permutation, so the lookups compute the same bags from the copy. The window then covers the
first hot_rows rows of the table being read: cuCtxSetLimit(PERSISTING_L2_CACHE_SIZE) sets aside
persisting L2 (at most persistingL2CacheMaxSize) and cuStreamSetAttribute puts the window on the
stream the kernels run on (hitProp persisting, missProp streaming), before every consumer call.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from l2attr.dlrm.config import WorkloadConfig
from l2attr.errors import UserError
from l2attr.gpu.persisting import DeviceLimits, Driver


@dataclass
class HotRemap:
    weights: Any     # (tables, rows, dim): each table's rows permuted, hot rows first
    indices: Any     # the index stream through the inverse permutation
    perm: Any        # row i of a remapped table is row perm[i] of the original


def build_remap(torch: Any, weights: Any, hot: Any, indices: Any) -> HotRemap:
    """One permuted copy of every table (hot rows first, hottest first) and the remapped indices."""
    rows = weights.shape[1]
    keep = torch.ones(rows, dtype=torch.bool, device=weights.device)
    keep[hot] = False
    perm = torch.cat([hot, torch.nonzero(keep).flatten()])
    inverse = torch.empty_like(perm)
    inverse[perm] = torch.arange(rows, dtype=perm.dtype, device=weights.device)
    remapped = torch.empty_like(weights)
    for t in range(weights.shape[0]):
        remapped[t] = weights[t].index_select(0, perm)
    out = HotRemap(remapped, inverse[indices], perm)
    torch.cuda.synchronize()
    return out


class StreamWindow:
    """One created stream (CuPy's and torch's current while active) carrying the window."""

    def __init__(self, torch: Any, cupy: Any, remap: HotRemap, hot_rows: int, hit_ratio: float,
                 persisting_max_bytes: int, driver: Driver | None = None) -> None:
        self.torch, self.remap, self.hit_ratio = torch, remap, float(hit_ratio)
        self.driver = driver or Driver()
        self.stream = cupy.cuda.Stream(non_blocking=False)
        w = remap.weights
        self.nbytes = int(hot_rows * w.shape[2] * w.element_size())
        self.setaside = min(self.nbytes, int(persisting_max_bytes))
        self.bases = [int(w[t].data_ptr()) for t in range(w.shape[0])]
        self.granted = 0
        self.setaside_us = self.reset_us = float("nan")   # host clock, per active(): charged by name

    @contextmanager
    def on_stream(self) -> Iterator[None]:
        """The created stream current for CuPy launches/events and torch (no window set here)."""
        ext = self.torch.cuda.ExternalStream(self.stream.ptr)
        with self.stream, self.torch.cuda.stream(ext):
            yield

    @contextmanager
    def active(self) -> Iterator[None]:
        """On the stream with the persisting set-aside; afterwards the window is cleared, the
        persisting lines reset and the set-aside put back as it was (the next cell starts clean)."""
        with self.on_stream():
            t0 = time.perf_counter()
            before = self.driver.persisting_limit()
            self.granted = self.driver.set_persisting_limit(self.setaside)
            self.setaside_us = (time.perf_counter() - t0) * 1e6
            try:
                yield
            finally:
                t0 = time.perf_counter()
                self.driver.clear_window(self.stream.ptr)
                self.driver.reset_persisting()
                self.driver.set_persisting_limit(before)   # what the other rungs ran with
                self.reset_us = (time.perf_counter() - t0) * 1e6

    def set(self, table: int) -> None:
        """The host call before a consumer of `table`: its hot region becomes the window."""
        self.driver.set_window(self.stream.ptr, self.bases[table], self.nbytes, self.hit_ratio)


def check_window_fits(cfg: WorkloadConfig, limits: DeviceLimits) -> None:
    """An access-policy window over the hot rows must exist on this GPU and fit its largest window
    (the window sweep and the ladder's APW+OptMT rung)."""
    row_bytes = cfg.dim * cfg.element_bytes
    window = cfg.hot_rows * row_bytes
    if cfg.hot_rows <= 0:
        raise UserError("an access-policy window needs hot rows (--hot-rows > 0): it covers them")
    if limits.window_max_bytes <= 0 or limits.persisting_max_bytes <= 0:
        raise UserError("this GPU reports no persisting L2 (accessPolicyMaxWindowSize or "
                        "persistingL2CacheMaxSize is 0): an access-policy window needs sm_80 or newer")
    if window > limits.window_max_bytes:
        raise UserError(f"the window over {cfg.hot_rows:,} hot rows is {window:,} bytes, larger than "
                        f"accessPolicyMaxWindowSize ({limits.window_max_bytes:,} bytes); use fewer "
                        f"--hot-rows (at most {limits.window_max_bytes // row_bytes:,})")
