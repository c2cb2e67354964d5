"""Rooflines: how close each consumer gets to the bandwidth this GPU actually delivers.

Two views, kept apart and named:

- measured traffic (layer B): DRAM GB/s = ncu DRAM bytes read / ncu kernel duration, over the
  measured HBM *read* bandwidth (manifest `hbm_read_GBps`); L2 GB/s = L2 sector lookups x 32 B /
  duration, over the measured L2 read bandwidth (`l2_read_GBps`). These say what the memory system
  actually carried.
- logical bytes (layer A): the bytes the consumer *must read* per call (rows + indices + offsets)
  / CUDA-event median, over the device-to-device copy bandwidth (`hbm_copy_GBps`). Bytes served by
  L2 count too, so above 1 means L2 served part of them, not that HBM ran faster.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from l2attr.analysis.common import NA, CellIndex, is_missing, number, rung_label, sort_rows
from l2attr.vocab import Condition, Quantity, Role, Timer


def roofline_fractions(cells: pd.DataFrame, hbm_copy_GBps: float | None,
                       hbm_source: str = "manifest hbm_copy_GBps") -> pd.DataFrame:
    """One row per consumer cell: achieved GB/s, its basis, and the fraction of the copy bandwidth."""
    index = CellIndex(cells)
    rows: list[dict[str, Any]] = []
    for state, profile, rung, quantity, timer in index.keys():
        if quantity != Quantity.CONSUMER or timer != Timer.KERNEL:
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


def measured_roofline(l2: pd.DataFrame, hbm_read_GBps: float | None, l2_read_GBps: float | None,
                      sources: str = "") -> pd.DataFrame:
    """One row per profiled consumer cell (ladder condition): DRAM and L2 bandwidth delivered,
    from ncu's bytes and sectors over ncu's duration, as fractions of the measured read ceilings."""
    rows: list[dict[str, Any]] = []
    if l2.empty:
        return pd.DataFrame(rows)
    cons = l2[(l2["role"] == Role.CONSUMER.value) & (l2["condition"] == Condition.LADDER.value)]
    for rec in cons.to_dict("records"):
        missing: dict[str, str] = {}
        duration = number(rec.get("duration"))
        dram = number(rec.get("dram_read"))
        sectors = number(rec.get("l2_sectors"))
        if is_missing(duration) or duration <= 0:
            missing["dram_GBps"] = missing["l2_GBps"] = "kernel duration (gpu__time_duration) not collected"
        dram_GBps = dram / duration if "dram_GBps" not in missing and not is_missing(dram) else NA
        l2_GBps = sectors * 32 / duration if "l2_GBps" not in missing and not is_missing(sectors) else NA
        if is_missing(dram_GBps):
            missing.setdefault("dram_GBps", "DRAM bytes not collected")
        if is_missing(l2_GBps):
            missing.setdefault("l2_GBps", "L2 lookup counts not collected")
        if hbm_read_GBps is None:
            missing["dram_fraction"] = "no ladder run measured the HBM read bandwidth (hbm_read_GBps)"
        if l2_read_GBps is None:
            missing["l2_fraction"] = "no ladder run measured the L2 read bandwidth (l2_read_GBps)"
        rows.append({
            "profile": rec["profile"], "rung": rec["rung"], "label": rung_label(rec["rung"]),
            "duration_us": duration / 1e3 if not is_missing(duration) else NA,
            "dram_read_bytes": dram, "dram_GBps": dram_GBps,
            "hbm_read_GBps": NA if hbm_read_GBps is None else hbm_read_GBps,
            "dram_fraction": NA if hbm_read_GBps is None or is_missing(dram_GBps) else dram_GBps / hbm_read_GBps,
            "l2_GBps": l2_GBps, "l2_read_GBps": NA if l2_read_GBps is None else l2_read_GBps,
            "l2_fraction": NA if l2_read_GBps is None or is_missing(l2_GBps) else l2_GBps / l2_read_GBps,
            "source": " + ".join(x for x in (rec["source"], sources) if x), "missing": missing,
        })
    return sort_rows(pd.DataFrame(rows))
