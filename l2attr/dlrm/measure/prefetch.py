"""Build the run's workloads on background threads while the GPU side starts (compile, checks).

Why: a workload is seconds of host work per profile (generating or parsing the ids, counting
them for the hot set, writing the cache). Built between profiles it left the GPU idle, cooling,
before the next cells (the run warmed it up again for 0.5 s each time). Built while NVRTC
compiles and the variants are checked, it costs nothing there: most of it is numpy copying,
counting and writing with the GIL released, so a few profiles build side by side. Nothing runs
in the background once a timed phase starts: `wait_all` is called before the first timed kernel,
so host timers never share the CPU with it. Workloads that would not all fit in a quarter of the
machine's memory are not built ahead (then built in the loop, as before).

A ladder process starts them, and NVRTC, before it imports torch (`HeadStart`, made by the
ladder command's head_start): `import torch`
is seconds of the process's start, most of it the GIL-holding import of Python modules, while
NVRTC and numpy release the GIL, so the three overlap. Nothing is imported on those threads: the
workload and compiler modules are imported by the caller first.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

Build = Callable[[str], Any]
THREADS = 4


def memory_bytes() -> int:
    """Physical memory of the machine (0 when unknown)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 0


class WorkloadPrefetch:
    """Workloads by name, built ahead side by side; `get` hands one over, `wait_all` waits for all."""

    def __init__(self, build: Build, names: list[str], bytes_each: int, budget: int | None = None) -> None:
        self.build, self.names = build, list(dict.fromkeys(names))
        budget = memory_bytes() // 4 if budget is None else budget
        self.ahead = bool(self.names) and bytes_each * len(self.names) <= budget
        self.build_s = 0.0            # seconds of building, summed over the threads
        self._lock = threading.Lock()
        self._futures: dict[str, Future] = {}
        self._pool: ThreadPoolExecutor | None = None
        if self.ahead:
            self._pool = ThreadPoolExecutor(max_workers=min(THREADS, len(self.names)),
                                            thread_name_prefix="l2attr-workload")
            self._futures = {name: self._pool.submit(self._timed, name) for name in self.names}

    def _timed(self, name: str) -> Any:
        t0 = time.perf_counter()
        try:
            return self.build(name)
        finally:
            with self._lock:
                self.build_s += time.perf_counter() - t0

    def wait_all(self) -> None:
        """Block until every background build is done (before anything is timed)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def get(self, name: str) -> Any:
        """The workload `name`, built ahead or now; the ahead copy is handed over (not kept).
        A build that failed ahead raises its error here, in the caller's thread."""
        self.wait_all()
        future = self._futures.pop(name, None)
        if future is not None:
            return future.result()
        return self._timed(name)


@dataclass
class HeadStart:
    """A fresh ladder run's workloads and kernels, begun before torch is imported."""

    prefetch: WorkloadPrefetch
    compiling: Future | None

