"""A recorded check beside a sweep run: the Nsight Compute retention check of the occupy axis
(tools/capacity_ncu_check.py --run RUN_DIR -> RUN_DIR/occupy_ncu.json).

Why it is read here: the occupy sweep holds part of L2 with evict_last lines; it would emulate a
smaller L2 only if those lines stayed through a cell's traffic. The check measured how many did
(DRAM bytes of reading them again after the traffic, against a normal-priority control), and the
report prints that beside the sweep rather than a label the sweep cannot back.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STAYS = 0.9      # retained share from which the held lines count as staying (a smaller L2)
EVICT_LAST, NORMAL = "evict_last", "normal"      # the probe's two arms (l2attr/dlrm/sweep/occupy_probe.py)


@dataclass
class RetentionCheck:
    source: Path
    traffic_mib: float = math.nan
    rows: list[dict[str, Any]] = field(default_factory=list)   # occupy_mib, arm, retained_share, ...
    problem: str = ""

    def retained(self, arm: str) -> dict[float, float]:
        return {float(r["occupy_mib"]): float(r["retained_share"]) for r in self.rows if r.get("arm") == arm}

    @property
    def stays(self) -> bool | None:
        held = self.retained(EVICT_LAST)
        return None if not held else min(held.values()) >= STAYS

    def lines(self) -> list[str]:
        """What the report prints beside the sweep."""
        head = f"Nsight Compute check of the held lines (tools/capacity_ncu_check.py, {self.source.name})"
        if self.problem:
            return [f"{head}: {self.problem}"]
        held, control = self.retained(EVICT_LAST), self.retained(NORMAL)
        if not held:
            return [f"{head}: no evict_last probe recorded"]
        parts = [f"{mib:g} MiB held: {share * 100:.1f} % still in L2 (normal-priority control "
                 f"{control.get(mib, math.nan) * 100:.1f} %)" for mib, share in sorted(held.items())]
        lines = [f"{head}, after {self.traffic_mib:g} MiB of other traffic: " + "; ".join(parts) + "."]
        lines.append("The held lines stay through the traffic: the points emulate a smaller L2." if self.stays else
                     f"The held lines do not stay through the traffic (below {STAYS * 100:.0f} % retained): the "
                     "points measure L2 partly held by evict_last lines, not a smaller L2.")
        return lines


def read_check(path: Path) -> RetentionCheck | None:
    """The check recorded at `path`, None when there is none; an unreadable one says why."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        d = json.loads(path.read_text())
        rows = [r for r in d["results"] if isinstance(r, dict) and {"occupy_mib", "arm", "retained_share"} <= set(r)]
        for i, r in enumerate(rows):
            wrong = _row_problem(r)
            if wrong:
                return RetentionCheck(path, problem=f"unreadable (result {i}: {wrong})")
        return RetentionCheck(path, float(d.get("traffic_mib", math.nan)), rows)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
        return RetentionCheck(path, problem=f"unreadable ({type(e).__name__}: {str(e)[:120]})")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _row_problem(r: dict[str, Any]) -> str:
    """What is wrong with one probe result, or "": the report prints these figures as they stand."""
    if not (_number(r["occupy_mib"]) and r["occupy_mib"] > 0):
        return f"occupy_mib must be a finite number > 0 (found {r['occupy_mib']!r})"
    if r["arm"] not in (EVICT_LAST, NORMAL):
        return f"arm must be {EVICT_LAST} or {NORMAL} (found {r['arm']!r})"
    if not (_number(r["retained_share"]) and -1.0 <= r["retained_share"] <= 1.0):
        return f"retained_share must be a finite share in [-1, 1] (found {r['retained_share']!r})"
    return ""
