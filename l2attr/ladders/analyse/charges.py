"""The host-side costs of a rung, each named and charged: the pin step's launch + sync, the window's
host call, set-aside and reset.

The kernel timer charges the pin its GPU time only; a caller waits for more: the pin's launch, its
kernel and the stream sync before the consumer may start (the *pin step*, host clock). The
access-policy window rung (APW+OptMT) runs no pin kernel but makes a host call before every
consumer (cuStreamSetAttribute) and, once per repeat, sets aside persisting L2 and afterwards
resets it. Per (l2_state, profile, rung) of a rung with such costs:

* `pin_step_us`: the pin step on the host clock, measured per call (`samples.csv[pin_wall_time_us]`)
  where the run recorded it, else derived from the same host-repeat calls: (whole call - the
  artifact's consumer timer) of the pinning rung minus that of its unpinned comparand (the rung
  below it, the same consumer): what the pin adds to the call beyond the consumer;
* `pin_host_us` = pin_step_us - the pin kernel's median: the launch + sync, the named charge;
* `window_call_us`: the window's host call, measured (`prepare_wall_time_us`) or derived the same way;
* `window_setaside_us`, `window_reset_us`: per repeat where recorded; NaN with "not measured" else.

Intervals of a derived figure are the conservative difference of the two medians' intervals.
Every figure without data is NaN with its reason in `missing`; nothing unmeasured is a zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from l2attr.analysis.common import NA, is_missing, sort_rows
from l2attr.dlrm.declare import RUNG_BY_NAME
from l2attr.measure.stats import summarize
from l2attr.vocab import RungId

RUNG_BASELINE = RungId.BASELINE.value

KEYS = ("l2_state", "profile", "rung")
# samples.csv columns of the recorded charges (optional: older runs lack them)
PIN_WALL, WINDOW_CALL = "pin_wall_time_us", "prepare_wall_time_us"
WINDOW_SETASIDE, WINDOW_RESET = "window_setaside_us", "window_reset_us"
COLUMNS = (*KEYS, "comparand", "pin_step_us", "pin_step_lo_us", "pin_step_hi_us", "pin_step_basis",
           "window_call_us", "window_call_lo_us", "window_call_hi_us", "window_call_basis",
           "window_setaside_us", "window_reset_us", "host_charge_us", "host_charge_lo_us", "host_charge_hi_us",
           "host_charge_name", "source", "missing")
# (the pinning rung and its comparand from two runs: host clocks differ between processes, so a
# difference of their host times would be the processes' difference, not the pin's)
DERIVED = ("derived per call from the host repeats: (whole call - the artifact's consumer timer) of {rung} "
           "minus that of {comparand}, the same consumer without it")
NOT_RECORDED = ("not measured: this run predates the per-repeat timing of the window's persisting set-aside "
                "and reset (samples.csv has no {column})")


def charged_rung(rung: str) -> bool:
    decl = RUNG_BY_NAME.get(rung)
    return bool(decl and (decl.pins or decl.window))


def _summary(values: pd.Series) -> tuple[float, float, float]:
    s = summarize(pd.to_numeric(values, errors="coerce").to_numpy(dtype=float))
    return s["median_us"], s["ci95_lo_us"], s["ci95_hi_us"]


def _host_rows(samples: pd.DataFrame, state: str, profile: str, rung: str) -> pd.DataFrame:
    if samples is None or samples.empty:
        return pd.DataFrame()
    m = samples[(samples["l2_state"] == state) & (samples["profile"] == profile) & (samples["rung"] == rung)]
    return m[m["call_wall_time_us"].notna()] if "call_wall_time_us" in m else m.iloc[0:0]


def _excess(rows: pd.DataFrame) -> tuple[float, float, float]:
    """Median [CI] over host-repeat calls of (whole call - the artifact's consumer timer)."""
    if rows.empty or "consumer_artifact_time_us" not in rows:
        return NA, NA, NA
    d = rows["call_wall_time_us"].astype(float) - rows["consumer_artifact_time_us"].astype(float)
    return _summary(d.dropna())


def _recorded(rows: pd.DataFrame, column: str) -> tuple[float, float, float]:
    if rows.empty or column not in rows or rows[column].isna().all():
        return NA, NA, NA
    return _summary(rows[column].dropna())


def _per_repeat(samples: pd.DataFrame, state: str, profile: str, rung: str, column: str) -> float:
    if samples is None or samples.empty or column not in samples:
        return NA
    m = samples[(samples["l2_state"] == state) & (samples["profile"] == profile) & (samples["rung"] == rung)]
    per = m.dropna(subset=[column]).groupby("repeat")[column].first() if "repeat" in m else m[column].dropna()
    return float(np.median(per)) if len(per) else NA


def _derive(samples: pd.DataFrame, state: str, profile: str, rung: str, comparand: str,
            column: str, missing: dict[str, str], field: str) -> tuple[float, float, float, str]:
    """A host-clock charge per call: recorded in `column`, else derived against the comparand."""
    mine = _host_rows(samples, state, profile, rung)
    value = _recorded(mine, column)
    if not is_missing(value[0]):
        return (*value, f"measured per call (samples.csv[{column}], host repeats)")
    if rung == comparand or not comparand:
        missing[field] = f"{rung} has no unpinned comparand to derive its host charge against"
        return NA, NA, NA, ""
    theirs = _host_rows(samples, state, profile, comparand)
    runs = {str(r) for r in pd.concat([mine.get("run", pd.Series(dtype=str)),
                                       theirs.get("run", pd.Series(dtype=str))]).dropna()}
    if len(runs) > 1:
        missing[field] = "two runs: not derived across processes"
        return NA, NA, NA, ""
    a, b = _excess(mine), _excess(theirs)
    if is_missing(a[0]) or is_missing(b[0]):
        missing[field] = (f"no host-repeat calls of {rung if is_missing(a[0]) else comparand} for "
                          f"{profile}/{state} (whole call and the artifact's timer)")
        return NA, NA, NA, ""
    return a[0] - b[0], a[1] - b[2], a[2] - b[1], DERIVED.format(rung=rung, comparand=comparand)


def host_charges(samples: pd.DataFrame | None, ladder: pd.DataFrame) -> pd.DataFrame:
    """One row per (l2_state, profile, rung) of a rung with host costs (a pin or a window)."""
    rows: list[dict[str, Any]] = []
    if ladder is None or ladder.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    for rec in ladder.to_dict("records"):
        if not charged_rung(rec["rung"]):
            continue
        rows.append(_charge_row(samples, rec))
    return sort_rows(pd.DataFrame(rows, columns=list(COLUMNS)))


def _charge_row(samples: pd.DataFrame | None, rec: dict[str, Any]) -> dict[str, Any]:
    state, profile, rung = rec["l2_state"], rec["profile"], rec["rung"]
    decl = RUNG_BY_NAME[rung]
    comparand = decl.below or ""
    missing: dict[str, str] = {}
    out: dict[str, Any] = {"l2_state": state, "profile": profile, "rung": rung, "comparand": comparand}
    for f in COLUMNS[4:-2]:
        out.setdefault(f, NA)
    if decl.pins:
        med, lo, hi, basis = _derive(samples, state, profile, rung, comparand, PIN_WALL, missing, "pin_step_us")
        out.update(pin_step_us=med, pin_step_lo_us=lo, pin_step_hi_us=hi, pin_step_basis=basis)
        pin = rec.get("pin_us")
        out["host_charge_name"] = "the pin step's host launch + sync"
        if is_missing(med) or is_missing(pin):
            missing["host_charge_us"] = missing.get("pin_step_us") or f"no pin kernel time for {rung}/{profile}"
        else:
            out.update(host_charge_us=med - pin, host_charge_lo_us=lo - pin, host_charge_hi_us=hi - pin)
        for f in ("window_call_us", "window_setaside_us", "window_reset_us"):
            missing[f] = "rung has no access-policy window"
    if decl.window:
        med, lo, hi, basis = _derive(samples, state, profile, rung, comparand, WINDOW_CALL, missing,
                                     "window_call_us")
        out.update(window_call_us=med, window_call_lo_us=lo, window_call_hi_us=hi, window_call_basis=basis)
        out["host_charge_name"] = "the window's host call"
        if is_missing(med):
            missing["host_charge_us"] = missing.get("window_call_us", "not measured")
        else:
            out.update(host_charge_us=med, host_charge_lo_us=lo, host_charge_hi_us=hi)
        for f, column in (("window_setaside_us", WINDOW_SETASIDE), ("window_reset_us", WINDOW_RESET)):
            out[f] = _per_repeat(samples, state, profile, rung, column)
            if is_missing(out[f]):
                missing[f] = NOT_RECORDED.format(column=column)
        missing["pin_step_us"] = "rung has no pin kernel"
    runs = sorted(set(samples["run"].astype(str))) if samples is not None and "run" in samples else []
    out["source"] = " + ".join(f"{r}/samples.csv[{state}|{profile}|{rung},{comparand}: host repeats]" for r in runs)
    out["missing"] = missing
    return out


CARRIED = ("pin_step_us", "pin_step_lo_us", "pin_step_hi_us", "pin_step_basis", "window_call_us",
           "window_setaside_us", "window_reset_us", "host_charge_us", "host_charge_lo_us", "host_charge_hi_us",
           "host_charge_name")
NOTHING = "no pin and no window: nothing runs beyond the consumer, which every rung launches"


def with_charges(ladder: pd.DataFrame, charges: pd.DataFrame) -> pd.DataFrame:
    """The ladder with each rung's host charges and `speedup_host`: the baseline's kernels over
    (this rung's kernels + its named host charge), the pin step's launch + sync or the window's call."""
    if ladder is None or ladder.empty:
        return ladder
    by_key = {tuple(r[k] for k in KEYS): r for r in charges.to_dict("records")} if not charges.empty else {}
    out = []
    for rec in ladder.to_dict("records"):
        rec = dict(rec)
        rec["missing"] = dict(rec.get("missing") or {})
        ch = by_key.get(tuple(rec[k] for k in KEYS))
        if ch is None:
            for f in CARRIED:
                rec[f] = NA
            rec.update(host_charge_us=0.0, host_charge_lo_us=0.0, host_charge_hi_us=0.0, host_charge_name=NOTHING,
                       pin_step_basis="")
            for f in ("pin_step_us", "window_call_us"):
                rec["missing"][f] = NOTHING
        else:
            for f in CARRIED:
                rec[f] = ch[f]
            for f, reason in ch["missing"].items():
                rec["missing"].setdefault(f, reason)
        out.append(rec)
    df = pd.DataFrame(out)
    base = {(r["l2_state"], r["profile"]): r["kernels_us"] for r in out if r["rung"] == RUNG_BASELINE}
    speed = []
    for rec in out:
        b = base.get((rec["l2_state"], rec["profile"]), NA)
        total = rec["kernels_us"] + rec["host_charge_us"] if not (
            is_missing(rec["kernels_us"]) or is_missing(rec["host_charge_us"])) else NA
        speed.append(NA if is_missing(b) or is_missing(total) or total <= 0 else b / total)
        if is_missing(speed[-1]):
            rec["missing"]["speedup_host"] = (rec["missing"].get("host_charge_us") or
                                              rec["missing"].get("speedup_kernels", "not measured"))
    df["speedup_host"] = speed
    df["missing"] = [r["missing"] for r in out]
    return df
