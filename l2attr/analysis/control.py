"""The validity control: can this profiler setup see the L2 state the pin leaves behind?

Three arms of one cell (L2P+OptMT on the hottest profile), each profiled the same way as the sweep:
the consumer right after its pin, after pin + L2 flush (the pin's effect removed), and after
pin + `cudaCtxResetPersistingL2Cache` (lines stay, their evict_last priority goes). Judged once, here,
from metrics.csv (the per-call table: counts summed per call, the headline rate from the sums):
`l2attr profile`'s closing line, the HTML report and the Markdown report all call `run_control`.
The manifest records only that the control ran and on which cell (`control`), never a verdict.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from l2attr.analysis.calls import EVICT_LAST_SHARE, call_table, headline_rate, label
from l2attr.analysis.load import Run, Study
from l2attr.manifest_model import ProfileManifest, typed
from l2attr.vocab import Condition, Job, Role, Command, Verdict

MIN_HIT_GAIN_POINTS = 5.0
MIN_DRAM_REDUCTION = 0.10
ARMS = {"after_pin": Condition.CONTROL_AFTER_PIN.value, "after_flush": Condition.CONTROL_AFTER_FLUSH.value,
        "after_reset": Condition.CONTROL_AFTER_RESET.value}


def _arm_stats(calls: pd.DataFrame, rate: str) -> dict[str, Any] | None:
    hits = calls[rate].dropna() if rate in calls else pd.Series(dtype=float)
    if hits.empty:
        return None
    out: dict[str, Any] = {"calls": int(len(calls)), "hit_rate_median": float(hits.median()),
                           "hit_rate_min": float(hits.min()), "hit_rate_max": float(hits.max())}
    for key in ("dram_read", "evict_last_lookup_hit", EVICT_LAST_SHARE):
        values = calls[key].dropna() if key in calls else pd.Series(dtype=float)
        out[f"{key}_median"] = float(values.median()) if len(values) else None
    return out


def validity_control(metrics: pd.DataFrame, min_gain: float = MIN_HIT_GAIN_POINTS,
                     min_reduction: float = MIN_DRAM_REDUCTION) -> dict[str, Any]:
    """Verdict `clear` when, after the pin, the consumer's headline hit rate beats the one after
    pin + flush by >= min_gain points, its DRAM read is >= min_reduction lower, and the two arms'
    per-call hit-rate ranges do not overlap. The reset arm is reported beside it: the evict-last
    lookup hits the consumer still finds once the pin's priority is reset."""
    rate = headline_rate()
    calls = call_table(metrics)
    if not calls.empty and "role" in calls:
        calls = calls[calls["role"] == Role.CONSUMER.value]
    result: dict[str, Any] = {
        "rule": f"{label(rate)} gain >= {min_gain:g} points, DRAM-read reduction >= {min_reduction:.0%}, "
                "and non-overlapping per-call ranges",
        "hit_rate_metric": rate, "hit_rate_label": label(rate)}
    stats = {name: _arm_stats(calls[calls["condition"] == cond], rate) if "condition" in calls else None
             for name, cond in ARMS.items()}
    result.update({name: s for name, s in stats.items() if s is not None})
    pin, flush = stats["after_pin"], stats["after_flush"]
    if pin is None or flush is None:
        result.update(verdict=Verdict.INCONCLUSIVE.value, reason="control rows or hit-rate counts missing")
        return result
    gain = pin["hit_rate_median"] - flush["hit_rate_median"]
    reduction = None
    if pin["dram_read_median"] is not None and flush["dram_read_median"]:
        reduction = 1.0 - pin["dram_read_median"] / flush["dram_read_median"]
    separated = pin["hit_rate_min"] > flush["hit_rate_max"]
    clear = gain >= min_gain and reduction is not None and reduction >= min_reduction and separated
    result.update(hit_rate_gain_points=gain, dram_read_reduction=reduction, ranges_separated=separated,
                  verdict=(Verdict.CLEAR if clear else Verdict.NOT_CLEAR).value)
    return result


def declared(manifest: dict[str, Any]) -> bool | None:
    """Whether a profile run ran the control, from its inputs: the manifest's `control` (null
    without one); before that field, a job labelled `control`; None when the manifest says neither."""
    facts = typed(manifest, model=ProfileManifest)
    if "control" in facts.model_fields_set:
        return facts.control is not None
    if facts.jobs is not None:
        return any(j.condition == Job.CONTROL for j in facts.jobs)
    return None


def has_control_rows(metrics: pd.DataFrame | None) -> bool:
    """Whether metrics.csv holds the control's arms (what the run did, whatever its manifest says)."""
    return metrics is not None and "condition" in metrics and bool(metrics["condition"].isin(list(ARMS.values())).any())


def run_control(run: Run) -> dict[str, Any] | None:
    """The validity control of one profile run, judged from its metrics.csv; None for a run made
    without one (`--no-control`)."""
    if declared(run.manifest) is False and not has_control_rows(run.metrics):
        return None
    return validity_control(run.metrics if run.metrics is not None else pd.DataFrame())


def study_controls(study: Study) -> dict[str, dict[str, Any] | None]:
    """Every profile run's control, by run name, in the study's order."""
    return {run.name: run_control(run) for run in study.runs_of_kind(Command.PROFILE)}


def describe_control(vc: dict[str, Any]) -> str:
    """One line for the CLI and the manifest reader."""
    if vc.get("verdict") == Verdict.INCONCLUSIVE.value:
        return f"validity control: inconclusive ({vc.get('reason', '')})"
    pin, flush = vc["after_pin"], vc["after_flush"]
    red = vc.get("dram_read_reduction")
    dram = ""
    if red is not None:
        change = f"{red:.1%} less" if red >= 0 else f"{-red:.1%} more"
        dram = (f"; DRAM read {flush['dram_read_median'] / 1e6:.1f} MB after pin+flush vs "
                f"{pin['dram_read_median'] / 1e6:.1f} MB after pin ({change})")
    reset = vc.get("after_reset")
    reset_txt = ""
    if reset and reset.get("evict_last_lookup_hit_median") is not None:
        reset_txt = (f"; evict-last lookup hits {pin.get('evict_last_lookup_hit_median') or 0:,.0f} after pin vs "
                     f"{reset['evict_last_lookup_hit_median']:,.0f} after pin + persisting-L2 reset")
    verdict = ("clearly above noise: the pin's L2 state survives this profiler setup"
               if vc["verdict"] == Verdict.CLEAR.value else
               "NOT clearly above noise: the profiler setup may erase the pin's effect, or the pin "
               "does not help this profile")
    return (f"validity control ({vc.get('hit_rate_label', vc['hit_rate_metric'])}): consumer "
            f"{flush['hit_rate_median']:.2f} % after pin+flush vs {pin['hit_rate_median']:.2f} % after pin "
            f"({vc['hit_rate_gain_points']:+.2f} points){dram}{reset_txt} -> {verdict}")
