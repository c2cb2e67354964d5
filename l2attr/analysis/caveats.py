"""Caveats: what a reader must know before believing the numbers, collected from every input.

Sources: the validity control (can this setup see cross-kernel L2 state at all?), the Nsight
Compute settings known to erase it (kernel replay, cache flushing), warnings the runs recorded,
metrics that were missing or all zero, combining notes, and assumptions behind the analysis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import pandas as pd

from l2attr.analysis.load import Study, manifest_first, manifest_value
from l2attr.dlrm.declare import RUNG_BY_NAME
from l2attr.manifest_model import typed
from l2attr.rundir import MANIFEST
from l2attr.schema import METRICS
from l2attr.vocab import Ncu, L2Condition, Profile, RepeatStop, Command, TimerKind, Verdict

LEVELS = ("error", "warn", "info")


@dataclass(frozen=True)
class Caveat:
    level: str      # error: the numbers mislead; warn: read with care; info: how to read
    text: str
    origin: str     # where it came from (run dir / manifest field, or "analysis")


def validity_caveats(study: Study, controls: dict[str, dict[str, Any] | None]) -> list[Caveat]:
    """The validity control of each profile run (analysis.control's judgement of its metrics.csv):
    clear, not clear, inconclusive, or not run."""
    out = []
    for run in study.runs_of_kind(Command.PROFILE):
        vc = controls.get(run.name)
        if vc is None:
            out.append(Caveat("warn", f"profile run {run.name} ran without the validity control: nothing shows "
                                      "that this profiler setup can see L2 state left by an earlier kernel",
                              f"{run.name}/{MANIFEST}[control]"))
            continue
        origin = f"{run.name}/{METRICS.filename}[control_after_*]"
        detail = validity_detail(vc)
        verdict = vc.get("verdict")
        if verdict == Verdict.NOT_CLEAR.value:
            out.append(Caveat("error", "The validity control failed: this setup cannot see cross-kernel L2 "
                                       "effects (or the pin does not help the control profile), so layer-B "
                                       "differences between pinning and non-pinning rungs are not evidence "
                                       f"either way. {detail}", origin))
        elif verdict == Verdict.CLEAR.value:
            out.append(Caveat("info", f"Validity control passed: the pin's L2 state is visible to the "
                                      f"profiled consumer. {detail}", origin))
        else:
            out.append(Caveat("warn", f"validity control verdict {verdict!r}: nothing shows that this profiler "
                                      f"setup sees the pin's L2 state. {detail}", origin))
    return out


def validity_detail(vc: dict[str, Any]) -> str:
    """The control's numbers in one line: hit rate and DRAM bytes after pin vs after flush."""
    pin, flush = vc.get("after_pin"), vc.get("after_flush")
    parts = []
    if isinstance(pin, dict) and isinstance(flush, dict):
        metric = vc.get("hit_rate_label") or vc.get("hit_rate_metric") or "hit rate"
        parts.append(f"consumer {metric}: {_num(flush.get('hit_rate_median'))} % after pin + flush vs "
                     f"{_num(pin.get('hit_rate_median'))} % after pin")
        f_dram, p_dram = flush.get("dram_read_median"), pin.get("dram_read_median")
        if f_dram and p_dram:
            parts.append(f"DRAM read {f_dram / 1e6:,.1f} MB vs {p_dram / 1e6:,.1f} MB")
        reset = vc.get("after_reset")
        if isinstance(reset, dict):
            parts.append(f"after pin + persisting-L2 reset {_num(reset.get('hit_rate_median'))} %"
                         + (f", DRAM {reset['dram_read_median'] / 1e6:,.1f} MB" if reset.get("dram_read_median") else ""))
    else:
        for key, value in vc.items():
            if key not in ("verdict", "rule", "reason") and not isinstance(value, (dict, list)):
                parts.append(f"{key.replace('_', ' ')}: {_num(value)}")
    if vc.get("reason"):
        parts.append(f"reason: {vc['reason']}")
    if vc.get("rule"):
        parts.append(f"rule: {vc['rule']}")
    return ("(" + "; ".join(parts) + ")") if parts else ""


def _num(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def ncu_setting_caveats(study: Study) -> list[Caveat]:
    """Nsight Compute settings that are known to erase or distort cross-kernel L2 state."""
    out = []
    for run in study.runs_of_kind(Command.PROFILE):
        origin = f"{run.name}/manifest.json[ncu]"
        replay = manifest_first(run.manifest, "ncu.replay_mode", "replay_mode")
        cache = manifest_first(run.manifest, "ncu.cache_control", "cache_control")
        clock = manifest_first(run.manifest, "ncu.clock_control", "clock_control")
        if replay == Ncu.KERNEL:
            out.append(Caveat("error", "ncu ran with --replay-mode kernel: kernel replay restores memory "
                                       "between passes and the L2 state left by the pin does not survive "
                                       "(measured: identical consumer hit rate with and without the pin)", origin))
        if cache not in (Ncu.NONE, "unknown"):
            out.append(Caveat("error", f"ncu cache control was {cache!r}: caches are flushed before each "
                                       "profiled kernel, so no kernel can see another's L2 state", origin))
        if clock not in (Ncu.NONE, "unknown"):
            out.append(Caveat("warn", f"ncu clock control was {clock!r}: clocks locked to base, so ncu "
                                      "durations are not comparable to the layer-A latencies", origin))
        if "unknown" in (replay, cache):
            out.append(Caveat("warn", f"profile run {run.name} does not record the ncu replay mode and cache "
                                      "control: cannot tell whether cross-kernel L2 state survived", origin))
    return out


def run_warning_caveats(study: Study) -> list[Caveat]:
    out = [Caveat("warn", note, "combining run dirs") for note in study.notes]
    out += [Caveat("error", note, "combining run dirs") for note in getattr(study, "mixed", [])]
    for run in study.runs:
        status, error = run.model.status, run.model.error
        if status not in (None, "done"):
            out.append(Caveat("warn", f"run {run.name} has status {status!r}: it may be incomplete"
                                      + (f" ({error})" if error else ""),
                              f"{run.name}/manifest.json[status]"))
        for key in ("warnings", "settings_warnings"):
            warnings = getattr(run.model, key)
            if isinstance(warnings, list):
                out.extend(Caveat("warn", str(w), f"{run.name}/manifest.json[{key}]") for w in warnings)
    return out + noisy_cell_caveats(study)


def noisy_cell_caveats(study: Study) -> list[Caveat]:
    """Cells of an adaptive run that reached max repeats or seconds before their interval closed
    (cells.csv `stopped` = limit, measure/adaptive.py): their medians are less certain than the
    target the run asked for."""

    cells = study.cells
    if cells.empty or "stopped" not in cells.columns:
        return []
    out = []
    for run_name, c in cells[cells["stopped"].astype(str) == RepeatStop.LIMIT.value].groupby("run", sort=False):
        rule = typed(next((r.manifest for r in study.runs if r.name == run_name), {})).adaptive
        note = limit_note(c, ("family", "rung", "profile", "l2_state"), rule and {"target_rel": rule.target_rel})
        out.append(Caveat("warn", f"run {run_name}: {note}", f"{run_name}/cells.csv[stopped]"))
    return out


def analysis_caveats(study: Study, ladder: pd.DataFrame, roofline: pd.DataFrame,
                     gradient: pd.DataFrame, metric_warnings: list[str], state: str) -> list[Caveat]:
    """How to read the analysis: what was not measured and which assumptions the numbers carry."""
    from l2attr.dlrm.declare import RUNGS

    out = [Caveat("warn", w, "metrics.csv") for w in metric_warnings]
    if not study.has_layer_a:
        out.append(Caveat("info", "Layer A (latency ladder) not measured: no ladder run among the inputs; "
                                  "speedups, amortisation and step-time shares are not shown.", "inputs"))
    if not study.has_layer_b:
        out.append(Caveat("info", "Layer B (Nsight Compute attribution) not measured: no profile run among "
                                  "the inputs; hit rates and DRAM bytes are not shown.", "inputs"))
    if not ladder.empty:
        measured = set(ladder["rung"])
        absent = [r.name for r in RUNGS if r.name not in measured]
        if absent:
            out.append(Caveat("info", f"rungs not run: {', '.join(absent)} (their cells show n/a)", "cells.csv"))
        states = sorted(set(ladder["l2_state"]))
        if len(states) > 1:
            out.append(Caveat("info", f"cells were measured under L2 states {', '.join(states)}; charts and the "
                                      f"verdict use '{state}', the tables list every state", "cells.csv"))
        elif state != L2Condition.NATURAL:
            out.append(Caveat("warn", f"only the '{state}' L2 state was measured: the L2 is flushed, which is "
                                      "not the regime the artifact timed", "cells.csv"))
        out.append(Caveat("info", "Amortisation assumes the pinned rows stay resident while one pin serves k "
                                  "consumer calls; the run measured k = 1 (one pin per call, as the artifact "
                                  "does). Other kernels between calls would evict them.", "analysis"))
    if not roofline.empty and (roofline["fraction"] > 1).any():
        out.append(Caveat("info", "Some roofline fractions exceed 1: the bytes a consumer must read count "
                                  "L2 hits too, so above 1 means L2 served part of the traffic.", "analysis"))
    if not gradient.empty and gradient["hot_profile"].iloc[0] not in (None, Profile.REUSE_HIGH):
        out.append(Caveat("info", f"reuse_high was not profiled; the hotness gradient compares "
                                  f"{gradient['hot_profile'].iloc[0]} with random instead", "analysis"))
    out.extend(launch_lag_caveats(study))
    granularity: dict[str, list[str]] = {}
    for run in study.runs:
        gran = manifest_value(run.manifest, "measure.pin_granularity")
        if gran != "unknown":
            granularity.setdefault(str(gran), []).append(run.name)
    for gran, names in granularity.items():
        out.append(Caveat("info", f"pin granularity: {gran} (the artifact issues one prefetch per element, "
                                  "32 per 128-byte line)",
                          ", ".join(f"{n}/manifest.json[measure.pin_granularity]" for n in names)))
    return out


# a consumer median that moves more than this when lagged samples are dropped is worth a warning
LAG_SHIFT_WARN_PCT = 1.0


def launch_lag_caveats(study: Study) -> list[Caveat]:
    """Per ladder run: the share of samples launched after the spin ran out, and whether it matters."""
    from l2attr.analysis.spread import describe_launch_lag, launch_lag_effect

    out = []
    for run in study.runs:
        spin = manifest_value(run.manifest, "measure.spin_us")
        if run.samples is None or not isinstance(spin, (int, float)):
            continue
        timer = str(manifest_value(run.manifest, "measure.timer") or TimerKind.SPIN.value)
        lag = launch_lag_effect(run.samples, float(spin), timer)
        if lag is None or lag["lagged_pct"] == 0:
            continue
        level = "warn" if float(lag["max_shift_pct"]) > LAG_SHIFT_WARN_PCT else "info"
        out.append(Caveat(level, f"run {run.name}: {describe_launch_lag(lag, float(spin), timer)}",
                          f"{run.name}/samples.csv[launch_lag_us]"))
    return out


def charge_caveats(ladder: pd.DataFrame) -> list[Caveat]:
    """How each named host charge was obtained (measured per call, or derived from the host repeats),
    and the window's costs that no run measured: said, never shown as a zero."""
    if ladder is None or ladder.empty or "host_charge_name" not in ladder:
        return []
    out = []
    pins = ladder[ladder["pin_step_basis"].astype(str).str.len() > 0] if "pin_step_basis" in ladder else ladder.iloc[0:0]
    for basis, g in pins.groupby("pin_step_basis", sort=False):
        series = ", ".join(sorted(set(g.get("series", pd.Series(["this series"])).astype(str))))
        out.append(Caveat("info", f"The pin step's host launch + sync ({series}): {basis}. It is charged by name in "
                                  "the '+ launch + sync' speedups and in the wall-charged break-even.", "analysis"))
    untimed = pins[pins["pin_step_us"].isna()] if "pin_step_us" in pins else pins.iloc[0:0]
    two = ladder[ladder["missing"].map(lambda m: "two runs" in str((m or {}).get("pin_step_us", "")))]
    if len(two) and untimed.empty:
        series = ", ".join(sorted(set(two.get("series", pd.Series(["this series"])).astype(str))))
        out.append(Caveat("info", f"The pin step's host launch + sync is not derived for {series}: the pinning rung and "
                                  "its comparand come from two runs, whose host clocks differ.", "analysis"))
    windows = ladder[ladder["rung"].map(lambda r: bool(RUNG_BY_NAME[r].window) if r in RUNG_BY_NAME else False)]
    if len(windows):
        gone = [f for f in ("window_setaside_us", "window_reset_us") if windows[f].isna().all()]
        if gone:
            out.append(Caveat("warn", "APW+OptMT: the window's persisting-L2 set-aside and reset (once per repeat, host "
                                      "clock) were not measured by these runs and are not charged: "
                                      f"{', '.join(gone)} not measured (the runs of examples/charges/ record them); its host "
                                      "call before every consumer is charged as its host charge.", "samples.csv"))
    return out


def sort_caveats(caveats: list[Caveat]) -> list[Caveat]:
    return sorted(caveats, key=lambda c: LEVELS.index(c.level) if c.level in LEVELS else len(LEVELS))

# -- cells of an adaptive run that stopped at the limit ----------------------------------------
#
# Why one place: the ladder's cells, an experiment's conditions and a sweep's points all carry the
# engine's `stopped` column (measure/adaptive.py: target or limit); a cell at the limit has a median
# less certain than the run's target, and every report page says so in the same words.
def limit_names(table: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    """The cells (keys joined by /) whose `stopped` is limit; none in a fixed run."""
    if table.empty or "stopped" not in table.columns:
        return []
    hit = table[table["stopped"].astype(str) == RepeatStop.LIMIT.value]
    return sorted({"/".join(map(str, k)) for k in hit[list(keys)].to_numpy()})


def limit_note(table: pd.DataFrame, keys: Sequence[str], rule: dict[str, Any] | None) -> str:
    """'N cell(s) noisy: stopped at the limit (...): a, b', or '' when none."""
    names = limit_names(table, keys)
    if not names:
        return ""
    target = (f" (its 95 % interval did not close to ±{float(rule['target_rel']):.1%} of the median)"
              if rule and rule.get("target_rel") else "")
    return f"{len(names)} cell(s) noisy: stopped at the limit{target}: {', '.join(names)}"
