"""The whole step on the GPU clock, untraced: what a pin on a side stream must shorten to pay."""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from l2attr.schema import STEP_TIMES


def time_steps(dev: Any, step: Callable[[], Any], repeats: int) -> pd.DataFrame:
    """Blocking-timer events around the step's launches (no launch lag before the first kernel; the
    host gaps between an eager step's kernels are part of it and stay in)."""
    from l2attr.measure.timer import BlockingTimer

    timer = BlockingTimer(dev.torch, dev.cupy, timeout_ms=2000.0)
    rows = []
    for i in range(2 * repeats + 2):
        s = timer.time(step)
        if i >= 2:                                       # two more warm-ups
            rows.append({"repeat": i - 2, "step_us": s.time_us, "discard": s.discard})
    timer.close()
    return pd.DataFrame(rows, columns=list(STEP_TIMES.columns))
