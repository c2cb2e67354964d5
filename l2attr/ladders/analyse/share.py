"""The L2 share of step time: the consumer time L2 pinning saves, as a percentage of a step.

    share (consumer-only) = (T_cons(OptMT) - T_cons(L2P+OptMT))                 / T_step
    share (pin-charged)   = (T_cons(OptMT) - (T_pin + T_cons)(L2P+OptMT))       / T_step
    share (wall-charged)  = (T_wall(OptMT) - T_wall(L2P+OptMT))                 / T_step

T_step is the median host wall time of one OptMT call: one table x one batch, launch to sync.
OptMT is the comparand because L2P+OptMT is OptMT plus the pin; the saving is what the pin's
L2 residency buys. A real DLRM inference step also runs the MLPs and the other tables, so the
share of a whole step is smaller than this: read it as an upper bound.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from l2attr.analysis.common import NA, is_missing, join_sources, sort_rows
from l2attr.ladders.analyse.ladder import ladder_row
from l2attr.vocab import Role, RungId

PIN_RUNG = RungId.L2P_OPTMT.value
COMPARAND = RungId.OPTMT.value
def t_step_definition(unpinned: str = "OptMT") -> str:
    """What T_step is, said with the unpinned rung in its family's words."""
    return (f"T_step = median host wall time of one {unpinned} call (one table x one batch: "
            "launch, consumer, stream sync). A full DLRM step also runs the MLPs and the "
            "other tables, so the share of a whole step is smaller: these are upper bounds.")


T_STEP_DEFINITION = t_step_definition()


def l2_share_of_step(ladder: pd.DataFrame) -> pd.DataFrame:
    """Per (l2_state, profile): the pin's saving as % of T_step, consumer-only and charged."""
    rows: list[dict[str, Any]] = []
    if ladder.empty:
        return pd.DataFrame(rows)
    for state, profile in sorted({(s, p) for s, p in zip(ladder["l2_state"], ladder["profile"])}):
        ref = ladder_row(ladder, state, profile, COMPARAND)
        pin = ladder_row(ladder, state, profile, PIN_RUNG)
        if ref is None and pin is None:
            continue
        rows.append(_share_row(state, profile, ref, pin))
    return sort_rows(pd.DataFrame(rows))


def _share_row(state: str, profile: str, ref: pd.Series | None, pin: pd.Series | None) -> dict[str, Any]:
    def get(row: pd.Series | None, field: str) -> float:
        return NA if row is None else row[field]

    t_step = get(ref, "wall_us")
    cons_ref, cons_pin = get(ref, "consumer_us"), get(pin, "consumer_us")
    kern_pin, wall_pin = get(pin, "kernels_us"), get(pin, "wall_us")
    missing: dict[str, str] = {}
    if is_missing(t_step):
        missing["t_step_us"] = f"no call (wall) cell for {COMPARAND}/{profile}/{state} (T_step)"
    absent_ref = f"{COMPARAND} not measured for {profile}/{state}"
    absent_pin = f"{PIN_RUNG} not measured for {profile}/{state}"

    def share(saving_a: float, saving_b: float, field: str, what: str) -> float:
        if is_missing(saving_a) or is_missing(saving_b):
            missing[field] = absent_ref if is_missing(saving_a) else f"{absent_pin} ({what})"
            return NA
        if is_missing(t_step):
            missing[field] = missing["t_step_us"]
            return NA
        return 100.0 * (saving_a - saving_b) / t_step

    return {
        "l2_state": state, "profile": profile, "t_step_us": t_step,
        "t_cons_optmt_us": cons_ref, "t_cons_l2p_us": cons_pin, "t_kernels_l2p_us": kern_pin,
        "t_pin_l2p_us": get(pin, "pin_us"),
        "saving_consumer_us": NA if is_missing(cons_ref) or is_missing(cons_pin) else cons_ref - cons_pin,
        "saving_charged_us": NA if is_missing(cons_ref) or is_missing(kern_pin) else cons_ref - kern_pin,
        "share_consumer_pct": share(cons_ref, cons_pin, "share_consumer_pct", Role.CONSUMER.value),
        "share_charged_pct": share(cons_ref, kern_pin, "share_charged_pct", "pin + consumer"),
        "share_wall_pct": share(get(ref, "wall_us"), wall_pin, "share_wall_pct", "call wall"),
        "source": join_sources(r["source"] for r in (ref, pin) if r is not None),
        "missing": missing,
    }
