"""Layer A: the latency ladder, marginal deltas, and four speedups that charge the pin differently.

The MICRO'24 artifact started its timer after the pin kernel and the stream sync, so its L2P
speedup is T_base / T_consumer and charges nothing for the pin. Here each rung gets four:

- consumer-only   T_base_consumer / T_consumer        kernel timer (events + spin), no pin
- as the artifact timed it
                  A_base_consumer / A_consumer        the artifact's own timer (event -> launch ->
                                                      stream sync -> event), consumer only, no pin
- kernel-charged  T_base_kernels  / (T_pin + T_consumer)   GPU time of the whole call
- wall-charged    W_base_call / W_call                host wall time of the whole call incl. syncs

`host_overhead_us` = A_consumer - T_consumer: what the artifact's timer adds to the kernel
(launch latency and the round trip through the stream sync), per call.

For kernel-charged, the per-call `kernels` cell (median of pin + consumer per call) is used when
the run recorded it; otherwise the sum of the pin and consumer medians, and `kernels_basis` says
which. A rung without a pin is charged its consumer time.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from l2attr.analysis.common import (NA, CellIndex, first_row, is_missing, join_sources, number, ratio, rung_label,
                                    sort_rows)
from l2attr.dlrm.declare import RUNG_BY_NAME
from l2attr.vocab import Quantity, RungId, Timer

BASELINE = RungId.BASELINE.value

LADDER_COLUMNS = (
    "l2_state", "profile", "rung", "label", "below", "pins",
    "consumer_us", "consumer_ci_lo_us", "consumer_ci_hi_us", "consumer_n",
    "artifact_us", "artifact_ci_lo_us", "artifact_ci_hi_us", "artifact_run", "host_overhead_us",
    "pin_us", "kernels_us", "kernels_basis", "kernels_ci_lo_us", "kernels_ci_hi_us",
    "wall_us", "wall_ci_lo_us", "wall_ci_hi_us", "consumer_run", "kernels_run", "wall_run",
    "delta_consumer_us", "delta_consumer_pct", "delta_kernels_us",
    "speedup_consumer", "speedup_artifact", "speedup_kernels", "speedup_wall",
    "source", "missing",
)


def rung_pins(name: str) -> bool:
    rung = RUNG_BY_NAME.get(name)
    return bool(rung and rung.pins)


def kernels_time(index: CellIndex, state: str, profile: str, rung: str) -> tuple[float, str, str]:
    """(T_pin + T_consumer, basis, reason-if-missing) for one rung of one profile."""
    kernels = index.median(state, profile, rung, Quantity.KERNELS)
    if not is_missing(kernels):
        return kernels, "kernels cell (median of pin + consumer per call)", ""
    consumer = index.median(state, profile, rung, Quantity.CONSUMER)
    if is_missing(consumer):
        return NA, "", f"no consumer cell for {rung}/{profile}/{state}"
    if not rung_pins(rung):
        return consumer, "consumer (rung has no pin)", ""
    pin = index.median(state, profile, rung, Quantity.PIN)
    if is_missing(pin):
        return NA, "", f"{rung} pins but no pin cell was recorded for {profile}/{state}"
    return pin + consumer, "sum of pin and consumer medians (no kernels cell)", ""


def latency_ladder(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per (l2_state, profile, rung): medians, CI, deltas over `below`, three speedups."""
    index = CellIndex(cells)
    combos = sorted({(s, p, r) for s, p, r, _, _ in index.keys()})
    rows = [_ladder_row(index, s, p, r) for s, p, r in combos]
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in LADDER_COLUMNS})
    return sort_rows(pd.DataFrame(rows, columns=list(LADDER_COLUMNS)))


def _ladder_row(index: CellIndex, state: str, profile: str, rung: str) -> dict[str, Any]:
    missing: dict[str, str] = {}
    decl = RUNG_BY_NAME.get(rung)
    below = decl.below if decl else None
    cons = index.get(state, profile, rung, Quantity.CONSUMER)
    wall = index.get(state, profile, rung, Quantity.CALL)
    kern = index.get(state, profile, rung, Quantity.KERNELS)
    art = index.get(state, profile, rung, Quantity.CONSUMER, Timer.ARTIFACT)
    artifact_us = index.median(state, profile, rung, Quantity.CONSUMER, Timer.ARTIFACT)
    if is_missing(artifact_us):
        missing["artifact_us"] = f"no artifact-timer consumer cell for {rung}/{profile}/{state} (no host repeats?)"
    consumer_us = NA if cons is None else number(cons.get("median_us"))
    if is_missing(consumer_us):
        missing["consumer_us"] = f"no consumer cell for {rung}/{profile}/{state} in cells.csv"
    wall_us = NA if wall is None else number(wall.get("median_us"))
    if is_missing(wall_us):
        missing["wall_us"] = f"no call (wall) cell for {rung}/{profile}/{state} in cells.csv"
    host_overhead = NA if is_missing(artifact_us) or is_missing(consumer_us) else artifact_us - consumer_us
    if is_missing(host_overhead):
        missing["host_overhead_us"] = missing.get("artifact_us") or missing.get("consumer_us", "not measured")
    pin_us = index.median(state, profile, rung, Quantity.PIN) if rung_pins(rung) else NA
    if is_missing(pin_us):
        missing["pin_us"] = ("rung has no pin kernel" if not rung_pins(rung)
                             else f"no pin cell for {rung}/{profile}/{state}")
    kernels_us, basis, reason = kernels_time(index, state, profile, rung)
    if reason:
        missing["kernels_us"] = reason

    # Marginal deltas over the rung below (what this rung's one technique adds).
    delta_c = delta_k = delta_pct = NA
    sources = [index.source(state, profile, rung,
                            (Quantity.CONSUMER, "consumer@artifact", Quantity.PIN, Quantity.KERNELS, Quantity.CALL))]
    if below is None:
        for f in ("delta_consumer_us", "delta_consumer_pct", "delta_kernels_us"):
            missing[f] = "first rung (nothing below it)" if rung == BASELINE else "reference row, not a rung"
    else:
        below_c = index.median(state, profile, below, Quantity.CONSUMER)
        below_k, _, below_reason = kernels_time(index, state, profile, below)
        sources.append(index.source(state, profile, below, (Quantity.CONSUMER, Quantity.PIN, Quantity.KERNELS)))
        if is_missing(below_c):
            for f in ("delta_consumer_us", "delta_consumer_pct"):
                missing[f] = f"rung below ({below}) not measured for {profile}/{state}"
        elif not is_missing(consumer_us):
            delta_c = consumer_us - below_c
            delta_pct = 100.0 * delta_c / below_c
        else:
            missing["delta_consumer_us"] = missing["delta_consumer_pct"] = missing["consumer_us"]
        if is_missing(below_k) or is_missing(kernels_us):
            missing["delta_kernels_us"] = below_reason or missing.get("kernels_us", "not measured")
        else:
            delta_k = kernels_us - below_k

    # Speedups over the baseline, three ways.
    base_c = index.median(state, profile, BASELINE, Quantity.CONSUMER)
    base_k, _, base_k_reason = kernels_time(index, state, profile, BASELINE)
    base_w = index.median(state, profile, BASELINE, Quantity.CALL)
    base_a = index.median(state, profile, BASELINE, Quantity.CONSUMER, Timer.ARTIFACT)
    if rung != BASELINE:
        sources.append(index.source(state, profile, BASELINE, (Quantity.CONSUMER, "consumer@artifact", Quantity.KERNELS,
                                                                  Quantity.CALL)))
    no_base = f"baseline not measured for {profile}/{state}"
    speedup_c = ratio(base_c, consumer_us)
    if is_missing(speedup_c):
        missing["speedup_consumer"] = no_base if is_missing(base_c) else missing.get("consumer_us", "not measured")
    speedup_a = ratio(base_a, artifact_us)
    if is_missing(speedup_a):
        missing["speedup_artifact"] = (f"no artifact-timer cell for baseline/{profile}/{state}" if is_missing(base_a)
                                       else missing.get("artifact_us", "not measured"))
    speedup_k = ratio(base_k, kernels_us)
    if is_missing(speedup_k):
        missing["speedup_kernels"] = (base_k_reason or no_base) if is_missing(base_k) \
            else missing.get("kernels_us", "not measured")
    speedup_w = ratio(base_w, wall_us)
    if is_missing(speedup_w):
        missing["speedup_wall"] = (f"no call (wall) cell for baseline/{profile}/{state}" if is_missing(base_w)
                                   else missing.get("wall_us", "not measured"))
    return {
        "l2_state": state, "profile": profile, "rung": rung, "label": rung_label(rung),
        "below": below, "pins": rung_pins(rung),
        "consumer_us": consumer_us,
        "consumer_ci_lo_us": NA if cons is None else number(cons.get("ci95_lo_us")),
        "consumer_ci_hi_us": NA if cons is None else number(cons.get("ci95_hi_us")),
        "consumer_n": NA if cons is None else number(cons.get("n_samples")),
        "artifact_us": artifact_us, "artifact_ci_lo_us": _field(art, "ci95_lo_us"),
        "artifact_ci_hi_us": _field(art, "ci95_hi_us"), "artifact_run": _run(art), "host_overhead_us": host_overhead,
        "pin_us": pin_us, "kernels_us": kernels_us, "kernels_basis": basis,
        "kernels_ci_lo_us": _field(kern, "ci95_lo_us") if kern is not None else _field(cons, "ci95_lo_us", rung),
        "kernels_ci_hi_us": _field(kern, "ci95_hi_us") if kern is not None else _field(cons, "ci95_hi_us", rung),
        "wall_us": wall_us,
        "wall_ci_lo_us": NA if wall is None else number(wall.get("ci95_lo_us")),
        "wall_ci_hi_us": NA if wall is None else number(wall.get("ci95_hi_us")),
        "delta_consumer_us": delta_c, "delta_consumer_pct": delta_pct, "delta_kernels_us": delta_k,
        "speedup_consumer": speedup_c, "speedup_artifact": speedup_a, "speedup_kernels": speedup_k,
        "speedup_wall": speedup_w,
        "consumer_run": _run(cons), "kernels_run": _run(kern if kern is not None else cons), "wall_run": _run(wall),
        "source": join_sources(sources), "missing": missing,
    }


def _field(rec: dict[str, Any] | None, field: str, rung: str | None = None) -> float:
    """A number of a cells.csv row; with `rung`, only where that rung has no pin (its consumer
    interval is then its kernels' interval)."""
    if rec is None or (rung is not None and rung_pins(rung)):
        return NA
    return number(rec.get(field))


def _run(rec: dict[str, Any] | None) -> str:
    return "" if rec is None else str(rec.get("run", ""))


def ladder_row(ladder: pd.DataFrame, state: str, profile: str, rung: str) -> pd.Series | None:
    """The ladder row of one rung, or None when that rung was not measured there."""
    return first_row(ladder, l2_state=state, profile=profile, rung=rung)
