"""The persisting-L2 set-aside, the stream access-policy window and the device's L2 limits.

Shared by the ladder's APW+OptMT rung (dlrm/measure/residency.py) and the window sweep, so it sits
below both.

Why ctypes on libcuda: neither CuPy nor torch exposes cuStreamSetAttribute, and the driver
library is on every machine that can run a kernel. The structures below copy cuda.h (CUDA 13):

    typedef struct CUaccessPolicyWindow_st {       // 32 bytes on 64-bit
        void *base_ptr;  size_t num_bytes;  float hitRatio;
        CUaccessProperty hitProp;  CUaccessProperty missProp;   // enums: 4-byte int
    } CUaccessPolicyWindow;
    typedef union CUlaunchAttributeValue_union { char pad[64]; CUaccessPolicyWindow accessPolicyWindow; ... }
        CUstreamAttrValue;                          // 64 bytes
    CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1,
    CU_ACCESS_PROPERTY_NORMAL/STREAMING/PERSISTING = 0/1/2,
    CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 108, ..._MAX_ACCESS_POLICY_WINDOW_SIZE = 109.

tests/test_sweep_window_abi.py compiles a host program against the local cuda.h and checks these
sizes, offsets and values. Every call's CUresult is checked; a failure names the call and the
driver's error name. The calls act on the thread's current context (the primary context torch
and CuPy made current), so they must come from the thread that runs the kernels.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

from l2attr.errors import UserError

CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06
CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1      # == CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW
CU_ACCESS_PROPERTY_NORMAL = 0
CU_ACCESS_PROPERTY_STREAMING = 1
CU_ACCESS_PROPERTY_PERSISTING = 2
CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 108
CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE = 109
CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38


class AccessPolicyWindow(ctypes.Structure):
    _fields_ = [("base_ptr", ctypes.c_void_p), ("num_bytes", ctypes.c_size_t), ("hitRatio", ctypes.c_float),
                ("hitProp", ctypes.c_int), ("missProp", ctypes.c_int)]


class StreamAttrValue(ctypes.Union):
    _fields_ = [("pad", ctypes.c_char * 64), ("accessPolicyWindow", AccessPolicyWindow)]


@dataclass(frozen=True)
class WindowState:
    base_ptr: int
    num_bytes: int
    hit_ratio: float
    hit_prop: int
    miss_prop: int


class Driver:
    """The few driver entry points the window needs, with their argument types declared."""

    def __init__(self, lib: Any | None = None) -> None:
        if lib is None:
            try:
                lib = ctypes.CDLL("libcuda.so.1")
            except OSError as exc:
                raise UserError(f"cannot load the CUDA driver library libcuda.so.1 ({exc})") from None
        self.lib = lib
        c = ctypes
        self._sig("cuInit", [c.c_uint])
        self._sig("cuGetErrorName", [c.c_int, c.POINTER(c.c_char_p)])
        self._sig("cuCtxSetLimit", [c.c_int, c.c_size_t])
        self._sig("cuCtxGetLimit", [c.POINTER(c.c_size_t), c.c_int])
        self._sig("cuCtxResetPersistingL2Cache", [])
        self._sig("cuStreamSetAttribute", [c.c_void_p, c.c_int, c.POINTER(StreamAttrValue)])
        self._sig("cuStreamGetAttribute", [c.c_void_p, c.c_int, c.POINTER(StreamAttrValue)])
        self._sig("cuDeviceGetAttribute", [c.POINTER(c.c_int), c.c_int, c.c_int])
        self._sig("cuDeviceGet", [c.POINTER(c.c_int), c.c_int])

    def _sig(self, name: str, argtypes: list[Any]) -> None:
        fn = getattr(self.lib, name)
        fn.argtypes, fn.restype = argtypes, ctypes.c_int

    def check(self, result: int, what: str) -> None:
        if result != 0:
            name = ctypes.c_char_p()
            self.lib.cuGetErrorName(result, ctypes.byref(name))
            text = name.value.decode() if name.value else f"CUresult {result}"
            raise UserError(f"{what} failed: {text}")

    # -- device facts ---------------------------------------------------------------------------
    def device_attribute(self, attribute: int, ordinal: int = 0) -> int:
        dev, value = ctypes.c_int(), ctypes.c_int()
        self.check(self.lib.cuInit(0), "cuInit")   # idempotent; needed before any device query
        self.check(self.lib.cuDeviceGet(ctypes.byref(dev), ordinal), "cuDeviceGet")
        self.check(self.lib.cuDeviceGetAttribute(ctypes.byref(value), attribute, dev.value),
                   f"cuDeviceGetAttribute({attribute})")
        return int(value.value)

    # -- persisting set-aside -------------------------------------------------------------------
    def set_persisting_limit(self, nbytes: int) -> int:
        """cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE); returns what the driver granted."""
        self.check(self.lib.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, int(nbytes)),
                   f"cuCtxSetLimit(PERSISTING_L2_CACHE_SIZE, {int(nbytes)})")
        return self.persisting_limit()

    def persisting_limit(self) -> int:
        value = ctypes.c_size_t()
        self.check(self.lib.cuCtxGetLimit(ctypes.byref(value), CU_LIMIT_PERSISTING_L2_CACHE_SIZE),
                   "cuCtxGetLimit(PERSISTING_L2_CACHE_SIZE)")
        return int(value.value)

    def reset_persisting(self) -> None:
        self.check(self.lib.cuCtxResetPersistingL2Cache(), "cuCtxResetPersistingL2Cache")

    # -- the stream's window ----------------------------------------------------------------------
    def set_window(self, stream: int, base: int, nbytes: int, hit_ratio: float,
                   hit_prop: int = CU_ACCESS_PROPERTY_PERSISTING,
                   miss_prop: int = CU_ACCESS_PROPERTY_STREAMING) -> None:
        value = StreamAttrValue()
        w = value.accessPolicyWindow
        w.base_ptr, w.num_bytes, w.hitRatio = ctypes.c_void_p(int(base)), int(nbytes), float(hit_ratio)
        w.hitProp, w.missProp = int(hit_prop), int(miss_prop)
        self.check(self.lib.cuStreamSetAttribute(ctypes.c_void_p(int(stream)),
                                                 CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, ctypes.byref(value)),
                   "cuStreamSetAttribute(ACCESS_POLICY_WINDOW)")

    def clear_window(self, stream: int) -> None:
        """A window of 0 bytes switches the policy off (CUDA programming guide)."""
        self.set_window(stream, 0, 0, 0.0, CU_ACCESS_PROPERTY_NORMAL, CU_ACCESS_PROPERTY_NORMAL)

    def window(self, stream: int) -> WindowState:
        value = StreamAttrValue()
        self.check(self.lib.cuStreamGetAttribute(ctypes.c_void_p(int(stream)),
                                                 CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, ctypes.byref(value)),
                   "cuStreamGetAttribute(ACCESS_POLICY_WINDOW)")
        w = value.accessPolicyWindow
        return WindowState(int(w.base_ptr or 0), int(w.num_bytes), float(w.hitRatio), int(w.hitProp),
                           int(w.missProp))


def persisting_limits(driver: Driver | None = None, ordinal: int = 0) -> dict[str, int]:
    """persistingL2CacheMaxSize and accessPolicyMaxWindowSize straight from the driver."""
    d = driver or Driver()
    return {"l2CacheSize": d.device_attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, ordinal),
            "persistingL2CacheMaxSize": d.device_attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, ordinal),
            "accessPolicyMaxWindowSize": d.device_attribute(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, ordinal)}


@dataclass(frozen=True)
class DeviceLimits:
    """The device facts a window or an effective-L2 size is checked against (no GPU work)."""

    l2_bytes: int
    persisting_max_bytes: int
    window_max_bytes: int


def device_limits() -> DeviceLimits:
    """L2, persisting-L2 and window limits of device 0 (property queries only, no GPU work)."""
    from l2attr.gpu.runtime import require_gpu

    _, cupy = require_gpu(import_torch=False)
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    persist, window = props.get("persistingL2CacheMaxSize"), props.get("accessPolicyMaxWindowSize")
    if persist is None or window is None:
        d = persisting_limits()
        persist, window = d["persistingL2CacheMaxSize"], d["accessPolicyMaxWindowSize"]
    return DeviceLimits(int(props["l2CacheSize"]), int(persist), int(window))
