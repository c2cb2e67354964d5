"""Whether a figure spec has anything to draw: an empty chart is never drawn.

Why: the fast family's "pin-charged vs consumer-only" charts were drawn with every y value null
(the family has no baseline rung), so the page showed two empty frames while the browser test
counted them as drawn. A figure without one finite value in its traces becomes "not measured".
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

VALUE_KEYS = ("y", "z", "values")     # bars and lines, heatmaps, pies


def _numbers(value: Any) -> np.ndarray:
    """A trace array as floats: plain JSON lists, or plotly's typed arrays ({dtype, bdata})."""
    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value.get("dtype", "f8"))).astype(float)
    if isinstance(value, (list, tuple)):
        flat: list[float] = []
        for v in value:
            if isinstance(v, (list, tuple, dict)):
                flat.extend(_numbers(v).tolist())
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                flat.append(float(v))
        return np.array(flat, dtype=float)
    return np.array([], dtype=float)


def trace_has_data(trace: dict[str, Any]) -> bool:
    key = "x" if trace.get("orientation") == "h" else None
    for k in (key, *VALUE_KEYS):
        if k and k in trace and np.isfinite(_numbers(trace[k])).any():
            return True
    return False


def has_data(spec: dict[str, Any]) -> bool:
    """True when some trace of the {data, layout} spec has a finite value to draw."""
    return any(trace_has_data(t) for t in spec.get("data", []) if isinstance(t, dict))


def drawable(specs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The specs with something to draw; the others' slots say "not measured" (macros.chart)."""
    return {fid: spec for fid, spec in specs.items() if has_data(spec)}


__all__ = ["has_data", "drawable", "trace_has_data"]
