"""Build the run's workloads on a background thread while the GPU side starts (compile, checks).

Why: a workload is seconds of host work (numpy, or a trace parse) per profile. Built between
profiles it left the GPU idle, cooling, before the next cells (the run warmed it up again for
0.5 s each time). Built while NVRTC compiles and the variants are checked, it costs nothing
there. Nothing runs in the background once a timed phase starts: `wait_all` is called before
the first timed kernel, so host timers never share the CPU with it. Workloads that would
not all fit in a quarter of the machine's memory are not built ahead (then built in the loop,
as before).
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable

Build = Callable[[str], Any]


def memory_bytes() -> int:
    """Physical memory of the machine (0 when unknown)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 0


class WorkloadPrefetch:
    """Workloads by name, built in order on one thread; `get` waits for one, `wait_all` for all."""

    def __init__(self, build: Build, names: list[str], bytes_each: int, budget: int | None = None) -> None:
        self.build, self.names = build, list(dict.fromkeys(names))
        budget = memory_bytes() // 4 if budget is None else budget
        self.ahead = bool(self.names) and bytes_each * len(self.names) <= budget
        self.built: dict[str, Any] = {}
        self.errors: dict[str, BaseException] = {}
        self.build_s = 0.0
        self._thread: threading.Thread | None = None
        if self.ahead:
            self._thread = threading.Thread(target=self._run, name="l2attr-workloads", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        for name in self.names:
            t0 = time.perf_counter()
            try:
                self.built[name] = self.build(name)
            except BaseException as exc:      # re-raised in the caller's thread by get()
                self.errors[name] = exc
                return
            finally:
                self.build_s += time.perf_counter() - t0

    def wait_all(self) -> None:
        """Block until the background builds are done (before anything is timed)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def get(self, name: str) -> Any:
        """The workload `name`, built ahead or now; the ahead copy is handed over (not kept)."""
        self.wait_all()
        if name in self.errors:
            raise self.errors.pop(name)
        if name in self.built:
            return self.built.pop(name)
        t0 = time.perf_counter()
        try:
            return self.build(name)
        finally:
            self.build_s += time.perf_counter() - t0
