"""The access-policy window's costs in words, for the Markdown and the HTML ladder alike: its host
call per call (charged), its persisting-L2 set-aside and reset per repeat (printed beside it),
each as measured or "not measured", never a zero."""

from __future__ import annotations

from typing import Any, Callable

from l2attr.analysis.common import is_missing, rung_label, why
from l2attr.dlrm.declare import RUNG_BY_NAME
from l2attr.report import fmt


def measured(row: dict[str, Any], field: str, formatter: Callable[[Any], str]) -> str:
    """The figure, or 'n/a (why)' with the analysis' reason when it has a short one."""
    value = row.get(field)
    if is_missing(value):
        reason = why(row, field)
        return f"n/a ({reason})" if reason and len(reason) <= 60 else "n/a"
    return formatter(value)


def window_lines(lad: Any) -> list[str]:
    """Per APW+OptMT row: its window's host call per call and its set-aside and reset per repeat,
    each measured or 'not measured' with the reason (never a zero)."""
    if lad is None or lad.empty or "window_call_us" not in lad:
        return []
    out = []
    for r in lad.to_dict("records"):
        decl = RUNG_BY_NAME.get(r["rung"])
        if not (decl and decl.window):
            continue
        parts = [f"window host call {measured(r, 'window_call_us', fmt.us)} per call"]
        for f, what in (("window_setaside_us", "persisting set-aside"), ("window_reset_us", "reset")):
            value = r.get(f)
            parts.append(f"{what} {fmt.us(value)} per repeat" if not is_missing(value) else f"{what}: not measured")
        family = r.get("family") if isinstance(r.get("family"), str) else ""
        out.append(f"{rung_label(r['rung'], family)} on {r['profile']}: " + "; ".join(parts))
    return out
