"""Roofline fraction: how close each consumer gets to the HBM bandwidth this GPU actually delivers.

    fraction = achieved GB/s / measured device-to-device copy GB/s (manifest `hbm_copy_GBps`)

achieved GB/s is cells.csv's `achieved_GBps` when present, else bytes_per_call / median. The
bytes are those the consumer *must read* per call (rows + indices + offsets); bytes served by
L2 count too, so a fraction above 1 means L2 served part of the traffic, not that HBM ran faster
than its copy bandwidth.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from l2attr.analysis.common import NA, CellIndex, is_missing, number, rung_label, sort_rows


def roofline_fractions(cells: pd.DataFrame, hbm_copy_GBps: float | None,
                       hbm_source: str = "manifest hbm_copy_GBps") -> pd.DataFrame:
    """One row per consumer cell: achieved GB/s, its basis, and the fraction of the copy bandwidth."""
    index = CellIndex(cells)
    rows: list[dict[str, Any]] = []
    for state, profile, rung, quantity, timer in index.keys():
        if quantity != "consumer" or timer != "kernel":
            continue
        rec = index.get(state, profile, rung, quantity) or {}
        missing: dict[str, str] = {}
        achieved = number(rec.get("achieved_GBps"))
        basis = "cells.csv achieved_GBps"
        if is_missing(achieved) or achieved <= 0:
            bytes_per_call, median = number(rec.get("bytes_per_call")), number(rec.get("median_us"))
            if not is_missing(bytes_per_call) and bytes_per_call > 0 and not is_missing(median) and median > 0:
                achieved = bytes_per_call / median / 1e3   # bytes per microsecond -> GB/s
                basis = "bytes_per_call / median_us"
            else:
                achieved, basis = NA, ""
                missing["achieved_GBps"] = "cells.csv has neither achieved_GBps nor bytes_per_call for this cell"
        if hbm_copy_GBps is None or hbm_copy_GBps <= 0:
            missing["fraction"] = "no measured hbm_copy_GBps in the manifest"
        elif "achieved_GBps" in missing:
            missing["fraction"] = missing["achieved_GBps"]
        rows.append({
            "l2_state": state, "profile": profile, "rung": rung, "label": rung_label(rung),
            "bytes_per_call": number(rec.get("bytes_per_call")), "median_us": number(rec.get("median_us")),
            "achieved_GBps": achieved, "achieved_basis": basis,
            "hbm_copy_GBps": NA if hbm_copy_GBps is None else float(hbm_copy_GBps),
            "fraction": NA if "fraction" in missing else achieved / hbm_copy_GBps,
            "source": f"{rec.get('run', '?')}/cells.csv[{state}|{profile}|{rung}|consumer] + {hbm_source}",
            "missing": missing,
        })
    return sort_rows(pd.DataFrame(rows))
