"""The ctypes copies of cuda.h's window structures and constants, checked against the local cuda.h
(a host-only C program compiled with nvcc; skip without it). A wrong offset would hand the driver
a window over the wrong bytes, or none, with no error."""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import pytest

from l2attr.gpu import persisting as w

NVCC = shutil.which("nvcc")

PROGRAM = r"""
#include <cuda.h>
#include <stddef.h>
#include <stdio.h>
int main(void) {
  printf("window_size %zu\n", sizeof(CUaccessPolicyWindow));
  printf("base_ptr %zu\nnum_bytes %zu\nhitRatio %zu\nhitProp %zu\nmissProp %zu\n",
         offsetof(CUaccessPolicyWindow, base_ptr), offsetof(CUaccessPolicyWindow, num_bytes),
         offsetof(CUaccessPolicyWindow, hitRatio), offsetof(CUaccessPolicyWindow, hitProp),
         offsetof(CUaccessPolicyWindow, missProp));
  printf("value_size %zu\nvalue_window %zu\n", sizeof(CUstreamAttrValue),
         offsetof(CUstreamAttrValue, accessPolicyWindow));
  printf("enum_size %zu\n", sizeof(CUaccessProperty));
  printf("CU_LIMIT_PERSISTING_L2_CACHE_SIZE %d\n", (int)CU_LIMIT_PERSISTING_L2_CACHE_SIZE);
  printf("CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW %d\n", (int)CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW);
  printf("CU_ACCESS_PROPERTY_NORMAL %d\nCU_ACCESS_PROPERTY_STREAMING %d\nCU_ACCESS_PROPERTY_PERSISTING %d\n",
         (int)CU_ACCESS_PROPERTY_NORMAL, (int)CU_ACCESS_PROPERTY_STREAMING, (int)CU_ACCESS_PROPERTY_PERSISTING);
  printf("CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE %d\n", (int)CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
  printf("CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE %d\n", (int)CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE);
  printf("CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE %d\n", (int)CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  return 0;
}
"""


@pytest.fixture(scope="module")
def header_facts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    if NVCC is None:
        pytest.skip("nvcc not on PATH")
    d = tmp_path_factory.mktemp("abi")
    src, exe = d / "abi.cpp", d / "abi"
    src.write_text(PROGRAM)
    subprocess.run([NVCC, "-o", str(exe), str(src)], check=True, capture_output=True, timeout=120)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=30).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


def test_window_struct_layout_matches_cuda_h(header_facts: dict[str, int]) -> None:
    W = w.AccessPolicyWindow
    assert ctypes.sizeof(W) == header_facts["window_size"] == 32
    for field in ("base_ptr", "num_bytes", "hitRatio", "hitProp", "missProp"):
        assert getattr(W, field).offset == header_facts[field], field
    assert ctypes.sizeof(w.StreamAttrValue) == header_facts["value_size"] == 64
    assert w.StreamAttrValue.accessPolicyWindow.offset == header_facts["value_window"] == 0
    assert ctypes.sizeof(ctypes.c_int) == header_facts["enum_size"]


def test_constants_match_cuda_h(header_facts: dict[str, int]) -> None:
    for name in ("CU_LIMIT_PERSISTING_L2_CACHE_SIZE", "CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW",
                 "CU_ACCESS_PROPERTY_NORMAL", "CU_ACCESS_PROPERTY_STREAMING", "CU_ACCESS_PROPERTY_PERSISTING",
                 "CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE",
                 "CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE", "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE"):
        assert getattr(w, name) == header_facts[name], name


class FakeLib:
    """libcuda stand-in: records calls, answers with a chosen CUresult."""

    def __init__(self, result: int = 0) -> None:
        self.result, self.calls, self.window = result, [], None

    def __getattr__(self, name: str):
        if name.startswith("cu"):
            fn = _Fn(self, name)
            setattr(self, name, fn)
            return fn
        raise AttributeError(name)


class _Fn:
    def __init__(self, lib: FakeLib, name: str) -> None:
        self.lib, self.name, self.argtypes, self.restype = lib, name, None, None

    def __call__(self, *args):
        self.lib.calls.append(self.name)
        if self.name == "cuGetErrorName":
            args[1]._obj.value = b"CUDA_ERROR_INVALID_VALUE"
            return 0
        if self.name == "cuStreamSetAttribute":
            win = args[2]._obj.accessPolicyWindow          # byref(value): the union itself
            self.lib.window = (win.base_ptr, win.num_bytes, win.hitRatio, win.hitProp, win.missProp)
        return self.lib.result


def test_set_window_fills_the_struct_and_a_failure_names_the_call() -> None:
    lib = FakeLib()
    d = w.Driver(lib)
    d.set_window(0x1234, 0x7F0000000000, 30_720_000, 0.75)
    base, nbytes, ratio, hit, miss = lib.window
    assert (base, nbytes, hit, miss) == (0x7F0000000000, 30_720_000, 2, 1)
    assert abs(ratio - 0.75) < 1e-7
    bad = w.Driver(FakeLib(result=1))
    with pytest.raises(Exception, match=r"cuStreamSetAttribute\(ACCESS_POLICY_WINDOW\) failed: CUDA_ERROR_INVALID_VALUE"):
        bad.set_window(1, 2, 3, 1.0)
