"""The amortisation formula: one pin serving k consumer calls (the ladder's amortisation table and
the sweep's measured curve both take it from here).

    speedup(k) = k * T_ref / (T_pin + k * T_cons)

It reaches 1 at k* = T_pin / (T_ref - T_cons); the break-even call count is the smallest whole
k >= k* (at least 1), or "never" (inf) when the consumer gains nothing (T_cons >= T_ref).
"""

from __future__ import annotations

import math

from l2attr.analysis.common import NA


def amortised_speedup(t_ref: float, t_pin: float, t_cons: float, k: float) -> float:
    """Speedup over the comparand when one pin serves k consumer calls."""
    denominator = t_pin + k * t_cons
    return NA if denominator <= 0 else k * t_ref / denominator


def break_even_point(t_ref: float, t_pin: float, t_cons: float) -> float:
    """k* = T_pin / (T_ref - T_cons), the real-valued break-even; inf when the consumer gains nothing."""
    gain = t_ref - t_cons
    if gain <= 0:
        return math.inf
    return t_pin / gain


def break_even_calls(t_ref: float, t_pin: float, t_cons: float) -> float:
    """Smallest whole k >= 1 with speedup(k) >= 1; inf ("never") when the consumer gains nothing."""
    k_star = break_even_point(t_ref, t_pin, t_cons)
    if math.isinf(k_star):
        return math.inf
    k = max(1, math.ceil(k_star - 1e-9))
    # Guard against floating-point rounding at exact break-even points.
    while amortised_speedup(t_ref, t_pin, t_cons, k) < 1 - 1e-12:
        k += 1
    return float(k)
