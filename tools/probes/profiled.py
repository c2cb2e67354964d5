"""What the graph probes share (arm.py, graph_kernels.py, program.py): torch.profiler's trace as
chrome events, the kernels launched inside each labelled call, and a step captured as a CUDA graph.

Why one module: the three probes read one trace the same way; a fix to how a launch is matched to
its call (by the runtime event's correlation id inside the call's user range) belongs in one place.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def chrome_events(prof: Any) -> list[dict]:
    """The profiler's trace as chrome-trace events (written to a scratch file, read back)."""
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "t.json")
        prof.export_chrome_trace(p)
        return json.loads(Path(p).read_text())["traceEvents"]


def labelled_trace(torch: Any, call: Callable[[], Any], n: int, label: str,
                   before: Callable[[], Any] | None = None, sync: bool = True) -> list[dict]:
    """n + 1 calls of `call` under torch.profiler, after three untraced ones, each in the user range
    `label + i` (`before` untraced ahead of each, a sync after each when `sync`): the trace's events."""
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for i in range(n + 1):
            if before is not None:
                before()
            with torch.profiler.record_function(f"{label}{i}"):
                call()
            if sync:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
    return chrome_events(prof)


def call_of_launch(events: list[dict], label: str) -> dict[Any, int]:
    """Correlation id of each runtime or driver launch -> the index i of the user range `label + i`
    it fell in (what ties a kernel to the traced call that launched it)."""
    ranges = sorted((float(e["ts"]), float(e["ts"]) + float(e["dur"]), int(e["name"][len(label):]))
                    for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith(label)
                    and e.get("cat") == "user_annotation")
    corr: dict[Any, int] = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
            ts = float(e["ts"])
            for a, b, i in ranges:
                if a <= ts <= b:
                    corr[(e.get("args") or {}).get("correlation")] = i
                    break
    return corr


def captured(torch: Any, fn: Callable[[], Any]) -> Any:
    """`fn` captured as a CUDA graph, after one warm call on a side stream (as torch asks)."""
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        fn()
    return g
