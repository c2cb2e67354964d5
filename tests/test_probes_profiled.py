"""tools/probes/profiled.py, what the graph probes share, on the CPU with a stand-in for torch: the
calls traced in labelled ranges, each launch tied to the call it fell in, a step captured once warm."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "probes"))
import profiled  # noqa: E402


class FakeTorch:
    """Records what a probe asks of torch; its profiler writes one user range and launch per call."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.events: list[dict[str, Any]] = []
        self.cuda = SimpleNamespace(synchronize=lambda: self.log.append("sync"), CUDAGraph=lambda: self.graph,
                                    Stream=lambda: SimpleNamespace(wait_stream=lambda s: None),
                                    current_stream=lambda: SimpleNamespace(wait_stream=lambda s: None),
                                    stream=lambda s: contextlib.nullcontext(),
                                    graph=lambda g: self._capturing())
        self.graph = SimpleNamespace(replay=lambda: None)
        self.profiler = SimpleNamespace(ProfilerActivity=SimpleNamespace(CPU="cpu", CUDA="cuda"),
                                        profile=lambda activities: self._profile(), record_function=self._range)

    @contextlib.contextmanager
    def _capturing(self):
        self.log.append("capture")
        yield

    @contextlib.contextmanager
    def _profile(self):
        self.log.append("profile")
        yield SimpleNamespace(export_chrome_trace=lambda p: Path(p).write_text(json.dumps({"traceEvents": self.events})))

    @contextlib.contextmanager
    def _range(self, name: str):
        ts = 100.0 * len(self.events)
        self.events += [{"ph": "X", "cat": "user_annotation", "name": name, "ts": ts, "dur": 50.0},
                        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": ts + 10,
                         "args": {"correlation": len(self.events)}}]
        yield


def test_labelled_calls_and_the_call_each_launch_fell_in() -> None:
    torch, calls = FakeTorch(), []
    events = profiled.labelled_trace(torch, lambda: calls.append("call"), 2, "probe-call-", before=lambda: calls.append("before"))
    assert calls == ["call"] * 3 + ["before", "call"] * 3          # three untraced, then n + 1 traced
    assert torch.log == ["sync", "profile", "sync", "sync", "sync", "sync"]
    assert profiled.call_of_launch(events, "probe-call-") == {0: 0, 2: 1, 4: 2}


def test_a_step_is_captured_after_one_warm_call() -> None:
    torch, calls = FakeTorch(), []
    graph = profiled.captured(torch, lambda: calls.append(torch.log[-1] if torch.log else "warm"))
    assert graph is torch.graph and calls == ["warm", "capture"]
