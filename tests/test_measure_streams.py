"""The timers' stream lookup: one torch Stream and one CuPy wrapper per stream, made once, and the
right one after the user switches streams (measure/timer.py `current_streams`)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from l2attr.measure import timer


class FakeTorch:
    """torch with a current stream that can change; counts how often a Stream object is built."""

    def __init__(self, raw_helper: bool) -> None:
        self.ptr, self.built = 1000, 0
        self.cuda = SimpleNamespace(current_stream=self._current)
        if raw_helper:
            self._C = SimpleNamespace(_cuda_getDevice=lambda: 0, _cuda_getCurrentRawStream=lambda dev: self.ptr)

    def _current(self) -> SimpleNamespace:
        self.built += 1
        return SimpleNamespace(cuda_stream=self.ptr)


class FakeCupy:
    def __init__(self) -> None:
        self.wrapped: list[int] = []
        self.cuda = SimpleNamespace(Stream=SimpleNamespace(), ExternalStream=self._external)

    def _external(self, ptr: int) -> tuple[str, int]:
        self.wrapped.append(ptr)
        return ("cupy", ptr)


@pytest.fixture(autouse=True)
def _empty_cache(monkeypatch):
    monkeypatch.setattr(timer, "_STREAMS", {})


def test_the_raw_handle_finds_a_cached_stream_without_building_one():
    t, c = FakeTorch(raw_helper=True), FakeCupy()
    first = timer.current_streams(t, c)
    for _ in range(50):
        assert timer.current_streams(t, c) is first
    assert t.built == 1 and c.wrapped == [1000]
    t.ptr = 2000                                   # the user entered `with torch.cuda.stream(s)`
    tstream, cstream = timer.current_streams(t, c)
    assert tstream.cuda_stream == 2000 and cstream == ("cupy", 2000)
    assert timer.torch_stream(t, c) == ("cupy", 2000)
    t.ptr = 1000
    assert timer.current_streams(t, c) is first and t.built == 2 and c.wrapped == [1000, 2000]


def test_without_the_raw_helper_torch_is_asked_each_time_and_the_wrapper_is_still_made_once():
    t, c = FakeTorch(raw_helper=False), FakeCupy()
    a = timer.current_streams(t, c)
    b = timer.current_streams(t, c)
    assert a is b and t.built == 2 and c.wrapped == [1000]
