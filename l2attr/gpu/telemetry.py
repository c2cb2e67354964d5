"""GPU clocks, temperature, power and clock-event reasons through NVML, read once per repeat.

A repeat whose medians move while the clocks move is a GPU-state effect, not a kernel effect;
recording them next to the samples lets a reader tell the two apart. Needs nvidia-ml-py (pynvml);
without it the columns stay empty.
"""

from __future__ import annotations

import math
from typing import Any

COLUMNS = ("sm_clock_mhz", "mem_clock_mhz", "gpu_temp_c", "power_w", "clock_event_reasons")


class Telemetry:
    def __init__(self, device_index: int = 0) -> None:
        self._nvml: Any = None
        self._handle: Any = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
        except Exception:
            self._nvml = None

    @property
    def available(self) -> bool:
        return self._nvml is not None

    def read(self) -> dict[str, float]:
        out = {c: math.nan for c in COLUMNS}
        if not self._nvml:
            return out
        n, h = self._nvml, self._handle
        probes = {
            "sm_clock_mhz": lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM),
            "mem_clock_mhz": lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM),
            "gpu_temp_c": lambda: n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU),
            "power_w": lambda: n.nvmlDeviceGetPowerUsage(h) / 1000.0,
            "clock_event_reasons": lambda: (
                n.nvmlDeviceGetCurrentClocksEventReasons(h)
                if hasattr(n, "nvmlDeviceGetCurrentClocksEventReasons")
                else n.nvmlDeviceGetCurrentClocksThrottleReasons(h)),
        }
        for key, probe in probes.items():
            try:
                out[key] = float(probe())
            except Exception:
                pass
        return out
