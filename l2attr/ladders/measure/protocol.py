"""The ladder's per-call protocol: one table call of one cell, on the generic cell protocol.

Each call is the artifact's sequence, [pin -> stream sync ->] consumer, run by measure/cell.py
(the one protocol of ladder and experiments: the pin is the producer) and timed two ways in
alternating repeats over the same batches:

* device repeat (timer `kernel`): the pin and the consumer each behind the kernel timer
  (measure/timer.py: the blocking timer by default), so no host launch lag is in the interval;
* host repeat (timers `artifact` and `wall`): the artifact's own timer around the consumer
  (record -> launch -> stream sync -> record -> event sync) and the host clock around
  [pin -> sync] and [window host call ->] consumer: what a caller waits for. A control's flush
  or reset between pin and consumer is not part of the wall.

With `--l2 flush` the L2 is flushed before every call (outside every timer); with
`--l2 flush_after_pin` (a control) between pin and consumer; with `--l2 reset_after_pin` (a
control) the persisting-L2 priorities are reset between pin and consumer. Every repeat starts from a flushed
L2 with evict-last priorities reset. Warm-up batches run and are not kept, nor the first (cold)
measured call of a repeat.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Callable

import pandas as pd

from l2attr.dlrm.declare import Variant
from l2attr.measure.cell import CallOps, GpuVerbs, device_call, host_call
from l2attr.names import NVTX_DOMAIN, range_name
from l2attr.schema import SAMPLES
from l2attr.vocab import Role, ladder_state

NAN = float("nan")


def reference_launch(gpu: Any, idx: Any, t: int) -> Callable[[], None]:
    """torch.nn.functional.embedding_bag on the same call: the reference row."""
    import torch.nn.functional as F

    return lambda: F.embedding_bag(idx, gpu.weights[t], gpu.offsets, mode="sum")


class CellRunner:
    """Times one (variant, profile) cell on one uploaded workload.

    `gpu` provides flush_l2, stream_sync, timed, artifact_timed, host_clock_us, last_lag_us,
    telemetry, cfg, weights and offsets (measure/gpu.py, or a fake in the tests); `kernels`
    provides launch_pin / launch_consumer (None for the torch reference row).
    """

    def __init__(self, gpu: Any, kernels: Any, v: Variant, profile: str, l2_state: str,
                 indices: Any, hot: Any, nvtx_last: int = 0, nvtx_calls: bool = False,
                 window: Any = None) -> None:
        self.gpu, self.kernels, self.variant, self.profile = gpu, kernels, v, profile
        self.device = GpuVerbs(gpu)
        self.l2_state = ladder_state(l2_state)   # run as its generic condition (vocab/conditions.py)
        self.indices, self.hot, self.nvtx_last = indices, hot, nvtx_last
        self.nvtx_calls = nvtx_calls   # also one `call` range around pin -> sync -> consumer
        self._ranges_made: dict[tuple[Role, int, int], Any] = {}
        # APW+OptMT (rung.window): a measure.residency.StreamWindow, its remapped tables and indices
        self.window = window if v.rung.window else None
        if v.rung.window and window is None:
            raise ValueError(f"{v.label} needs the remapped tables and a stream window")

    # -- launches -------------------------------------------------------------------------------
    def _consumer(self, t: int, b: int) -> Callable[[], None]:
        g = self.gpu
        idx = self.indices[b, t]
        if self.kernels is None:  # torch reference row
            return reference_launch(g, idx, t)
        if self.window is not None:   # the hot rows' copy at the table's front, remapped ids
            w, idx = self.window.remap.weights[t], self.window.remap.indices[b, t]
            return lambda: self.kernels.launch_consumer(w, idx, g.offsets, g.out)
        return lambda: self.kernels.launch_consumer(g.weights[t], idx, g.offsets, g.out)

    def _pin(self, t: int) -> Callable[[], None]:
        return lambda: self.kernels.launch_pin(self.gpu.weights[t], self.hot)

    def _range(self, on: bool, role: Role, t: int, b: int) -> Any:
        """The NVTX range of one role of call (t, b), made once per cell: every repeat reuses it
        (building the name cost ~10 us per call on the H200's host, 60K times a default ladder)."""
        if not on:
            return nullcontext()
        ranges = self._ranges_made
        made = ranges.get((role, t, b))
        if made is None:
            import nvtx

            v = self.variant
            made = ranges[(role, t, b)] = nvtx.annotate(range_name(role, v.family, v.rung.name, v.pin, self.profile,
                                                                   self.l2_state, t, b), domain=NVTX_DOMAIN)
        return made

    def _ranges(self, on: bool, t: int, b: int) -> Callable[[Role, int], Any]:
        """The generic protocol's (role, call) ranges in the ladder's grammar (its producer is the pin)."""
        return lambda role, call: self._range(on, Role.PIN if role == Role.PRODUCER else role, t, b)

    # -- one call -------------------------------------------------------------------------------
    def call(self, t: int, b: int, device_timed: bool, nvtx_on: bool) -> dict[str, float]:
        with self._range(nvtx_on and self.nvtx_calls, Role.CALL, t, b):
            return self._call(t, b, device_timed, nvtx_on)

    def _call(self, t: int, b: int, device_timed: bool, nvtx_on: bool) -> dict[str, float]:
        """One call through the generic cell protocol (measure/cell.py): the pin is the producer,
        the artifact's own timer the consumer's host timer, the window's host call `prepare`."""
        window = self.window
        ops = CallOps(consumer=self._consumer(t, b), producer=self._pin(t) if self.variant.rung.pins else None,
                      prepare=(lambda: window.set(t)) if window is not None else None,
                      consumer_host_timer=self.gpu.artifact_timed)
        run = device_call if device_timed else host_call
        r = run(self.device, ops, self.l2_state.generic, b, self._ranges(nvtx_on, t, b))
        lags = [x for x in (r["producer_enqueue_us"], r["consumer_enqueue_us"]) if x == x]
        return {"pin_time_us": r["producer_time_us"], "consumer_time_us": r["consumer_time_us"],
                "consumer_artifact_time_us": r["consumer_host_timer_us"],
                "call_wall_time_us": r["call_wall_us"], "launch_lag_us": max(lags) if lags else NAN,
                "timer_discard": r["discard"] if device_timed else "",
                # the host costs charged by name (ladders/analyse/charges.py): the pin step on the host clock
                # (host repeats) and the window's host call (device repeats, outside the kernel timer)
                "pin_wall_time_us": r["producer_wall_us"], "prepare_wall_time_us": r["prepare_wall_us"]}

    # -- one repeat -----------------------------------------------------------------------------
    def run_repeat(self, repeat: int, device_timed: bool) -> pd.DataFrame:
        """One pass over all batches. It starts from a flushed L2 with no evict-last lines left:
        pins never un-pin, so without this a cell would inherit the pins of the cells before it
        (seen on the H200: repeat medians drifting by up to 16 % with the cell order)."""
        if self.window is not None:
            with self.window.active():   # its stream and persisting set-aside; reset afterwards
                rows = self._run_repeat(repeat, device_timed)
            # set-aside and reset once per repeat, host clock: charged by name, never hidden
            return rows.assign(window_setaside_us=getattr(self.window, "setaside_us", NAN),
                               window_reset_us=getattr(self.window, "reset_us", NAN))
        return self._run_repeat(repeat, device_timed)

    def _run_repeat(self, repeat: int, device_timed: bool) -> pd.DataFrame:
        cfg, v = self.gpu.cfg, self.variant
        self.gpu.flush_l2()
        state_before = self.gpu.telemetry.read()
        total = cfg.batches * cfg.tables
        rows = []
        for b in range(cfg.warmup_batches + cfg.batches):
            for t in range(cfg.tables):
                measured = b - cfg.warmup_batches
                k = measured * cfg.tables + t           # index among measured calls
                nvtx_on = measured >= 0 and (self.nvtx_last == 0 or k >= total - self.nvtx_last)
                r = self.call(t, b, device_timed, nvtx_on)
                if measured < 0 or k == 0:              # warm-up, and the cold first sample
                    continue
                rows.append({"family": v.family.value, "rung": v.rung.name, "pin": v.pin.value,
                             "profile": self.profile, "l2_state": self.l2_state.value,
                             "repeat": repeat, "batch": measured, "table": t, **r})
        # GPU state at the end of the repeat (clocks under load), the same for all its rows.
        state = self.gpu.telemetry.read()
        state["gpu_temp_c"] = max(state["gpu_temp_c"], state_before["gpu_temp_c"])
        columns = [*SAMPLES.columns, "launch_lag_us", "timer_discard", "pin_wall_time_us", "prepare_wall_time_us"]
        return pd.DataFrame(rows, columns=columns).assign(**state)


def samples_per_repeat(cfg: Any) -> int:
    """Rows one complete repeat writes: every measured call but the cold first."""
    return cfg.batches * cfg.tables - 1
