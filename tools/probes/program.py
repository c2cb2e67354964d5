"""Probe: why a step's natural graph replay and the function called on its own give different
kernel sums (selfcheck: replay slower; prefill-512: replay faster). Kernel sums per call (CUPTI,
torch.profiler) in four ways: stream calls with a sync after each / back to back, graph replays
with a sync after each / back to back. Prints one line per (step, way): median and range, µs.
    python3 tools/probes/program.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "examples" / "steps")]
from profiled import captured, chrome_events  # noqa: E402  (tools/probes/profiled.py)


def sums(torch, call, n: int, sync: bool, before=None) -> list[float]:
    """Per call of `call` (after three untraced ones, `before` run untraced ahead of each), the sum
    of its kernels' CUPTI durations; the first traced call dropped."""
    from l2attr.steps.measure.trace import Slots, launched

    for _ in range(3):
        call()
    torch.cuda.synchronize()
    slots = Slots()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for i in range(n):
            if before is not None:
                before()
            with slots.range(torch, step=i):
                call()
            if sync:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
    rows = launched({"traceEvents": chrome_events(prof)}, slots)
    per: dict[int, float] = {}
    for r in rows:
        per[r["step"]] = per.get(r["step"], 0.0) + r["duration_us"]
    return [per[k] for k in sorted(per)][1:]


def main() -> None:
    import torch

    from llama_layer import grid, layer
    from selfcheck import make

    steps = {"selfcheck-quarter-l2": make(torch.cuda.get_device_properties(0).L2_cache_size // 4)}
    with torch.inference_mode():
        steps["llama-prefill-512"] = grid(layer())["llama-prefill-512"][0]
        for name, fn in steps.items():
            g = captured(torch, fn)
            for way, call, sync in (("call+sync", fn, True), ("call back-to-back", fn, False),
                                    ("replay+sync", g.replay, True), ("replay back-to-back", g.replay, False)):
                x = sums(torch, call, 21, sync)
                print(f"{name:22s} {way:20s} median {statistics.median(x):8.2f} µs  [{min(x):.2f}, {max(x):.2f}]  n={len(x)}",
                      flush=True)


if __name__ == "__main__":
    main()
