"""A sweep's adaptive repeats: the engine's one rule (measure/adaptive.py) over its points.

Why the point is the cell: a point's arms are compared with each other (pin against no pin, k
against k), so they keep the same repeats; a point stops once every arm's kernel-timed medians
(consumer and pin) have 95 % intervals within the rule's target, or at its limit. The rounds are
the engine's (measure/adaptive.py): a round gives every unfinished point of the profile one repeat,
in the fixed run's order within a repeat (families, points, then each arm device then host), so
drift touches every point alike. sweep_points.csv `stopped` says target or limit per point.
"""

from __future__ import annotations

from typing import Callable, Hashable

import pandas as pd

from l2attr.measure.adaptive import AdaptiveRule, measure_rounds
from l2attr.vocab import RepeatMode, RepeatStop, Role, Timer

# the sweep's default rule under --adaptive: the ladder's target, more seconds (a unit is a batch loop)
SWEEP_DEFAULT = AdaptiveRule(target_rel=0.005, min_repeats=2, max_repeats=12, max_seconds=20.0)
KERNEL_ROLES = (Role.CONSUMER.value, Role.PIN.value)


def kernel_values(frame: pd.DataFrame) -> dict[str, list[float]]:
    """Per arm and role: a repeat's device-timed kernel times (arm:role -> values)."""
    dev = frame[(frame["mode"] == RepeatMode.DEVICE.value) & (frame["timer"] == Timer.KERNEL.value)
                & frame["role"].isin(KERNEL_ROLES)]
    return {f"{arm}:{role}": g["time_us"].astype(float).dropna().tolist()
            for (arm, role), g in dev.groupby(["arm", "role"], sort=False)}


def adaptive_points(cells: list[Hashable], rule: AdaptiveRule,
                    run_repeat: Callable[[Hashable, int], pd.DataFrame | None],
                    on_disk: Callable[[Hashable, int], pd.DataFrame | None]) -> dict[Hashable, RepeatStop | None]:
    """The rounds over one profile's points; `run_repeat(cell, r)` measures every arm and mode of
    repeat r of a point (None when all of it is on disk, then `on_disk` gives its rows)."""
    plan = [(r, True) for r in range(rule.max_repeats)]     # one repeat holds device and host units
    return measure_rounds(cells, plan, lambda c, r, _d: run_repeat(c, r), lambda frames: None, rule,
                          on_disk, values=kernel_values)
