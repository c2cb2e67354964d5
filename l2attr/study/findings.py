"""The figures the README's prose states, as named values taken from the analysis of the runs it names.

Why a module: a sentence of prose ("OptMT is within 1.2 % of the baseline", "the pin step costs
20 µs of launch + sync") must come from the same frames the report prints, never be typed in.
Each function here reads an `Analysis` (or a run's own table) and returns plain numbers and the
significance rule's words, keyed by name; tools/docgen/results.py fills the README's prose
templates (tools/docgen/prose/*.md.j2) with them, and tests/test_readme_prose.py fails when a
filled template and the README disagree. Nothing here formats text or decides wording.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from l2attr.analysis.common import is_missing, ordered_profiles
from l2attr.analysis.noise import judge
from l2attr.analysis.significance import Interval
from l2attr.analysis.spread import launch_lag_effect
from l2attr.study.study import Analysis
from l2attr.analysis.load import manifest_value
from l2attr.vocab import Condition, Judgement, L2Condition, Quantity, Role, Command, RungId, Timer, TimerKind

NA = float("nan")
FASTER, SLOWER, NOISE = Judgement.FASTER.value, Judgement.SLOWER.value, Judgement.WITHIN_NOISE.value


def _rows(df: pd.DataFrame, **match: Any) -> pd.DataFrame:
    if df is None or df.empty:
        return pd.DataFrame()
    mask = pd.Series(True, index=df.index)
    for k, v in match.items():
        if k not in df:
            return df.iloc[0:0]
        mask &= df[k] == v
    return df[mask]


def _one(df: pd.DataFrame, field: str, **match: Any) -> Any:
    hit = _rows(df, **match)
    if hit.empty or field not in hit:
        return NA
    value = hit[field].iloc[0]
    return NA if value is None else value


def _consumer(row: pd.Series | dict[str, Any] | None) -> Interval:
    if row is None:
        return Interval(NA, NA, NA)
    return Interval(row["consumer_us"], row["consumer_ci_lo_us"], row["consumer_ci_hi_us"])


def _ladder(an: Analysis, series: str, profile: str, rung: str) -> dict[str, Any] | None:
    hit = _rows(an.ladder, series=series, profile=profile, rung=rung, l2_state=an.state)
    return None if hit.empty else hit.iloc[0].to_dict()


def consumer_word(an: Analysis, base: dict[str, Any] | None, new: dict[str, Any] | None) -> str:
    """The rule's word for `new`'s consumer against `base`'s (kernel timer)."""
    if base is None or new is None:
        return Judgement.NOT_MEASURED.value
    return judge(_consumer(base), _consumer(new), base.get("consumer_run"), new.get("consumer_run"),
                 Quantity.CONSUMER.value, Timer.KERNEL.value, an.cross_process).word


def profile_facts(an: Analysis, series: str, profile: str) -> dict[str, Any]:
    """One profile of one series: the rungs' consumer medians, the verdict's speedups and words,
    the pin's charges and break-even, and its layer-B figures."""
    rungs = {r: _ladder(an, series, profile, r) for r in (RungId.BASELINE, RungId.OPTMT, RungId.RPF_OPTMT,
                                                          RungId.L2P_OPTMT, RungId.COMBINED)}
    med = {r.value: (NA if row is None else row["consumer_us"]) for r, row in rungs.items()}
    v = _rows(an.verdict, series=series, profile=profile)
    out: dict[str, Any] = {"profile": profile, "consumer": med,
                           "verdict": {} if v.empty else v.iloc[0].to_dict()}
    base, optmt, rpf, l2p = (rungs[r] for r in (RungId.BASELINE, RungId.OPTMT, RungId.RPF_OPTMT, RungId.L2P_OPTMT))
    out["optmt_vs_base_pct"] = 100 * (med["optmt"] / med["baseline"] - 1) if base and optmt else NA
    out["optmt_vs_base_word"] = consumer_word(an, base, optmt)
    out["rpf_vs_optmt_pct"] = 100 * (med["rpf_optmt"] / med["optmt"] - 1) if rpf and optmt else NA
    out["rpf_vs_optmt_word"] = consumer_word(an, optmt, rpf)
    out["pin_saving_us"] = med["optmt"] - med["l2p_optmt"] if optmt and l2p else NA
    out["pin_us"] = NA if l2p is None else l2p["pin_us"]
    out["pin_step_us"] = NA if l2p is None else l2p.get("pin_step_us", NA)
    out["pin_host_us"] = NA if l2p is None else l2p.get("host_charge_us", NA)
    out["host_overhead_us"] = {r.value: (NA if row is None else row["host_overhead_us"]) for r, row in rungs.items()}
    pe = _rows(an.pin_effect, series=series, profile=profile, rung=RungId.L2P_OPTMT.value)
    out["hit_rate"] = NA if pe.empty else pe["hit_rate_pct"].iloc[0]
    out["comparand_hit_rate"] = NA if pe.empty else pe["comparand_hit_rate_pct"].iloc[0]
    out["hit_gain_pp"] = NA if pe.empty else pe["hit_gain_pp"].iloc[0]
    out["dram_saved_mb"] = NA if pe.empty else pe["dram_saved_bytes"].iloc[0] / 1e6
    d = _rows(an.dram, series=series, profile=profile, rung=RungId.L2P_OPTMT.value)
    for f in ("pin_dram_read", "consumer_dram_read", "total_dram_read", "unpinned_dram_read", "consumer_fabric"):
        out[f"{f}_mb" if f != "consumer_fabric" else "fabric_sectors"] = (
            NA if d.empty else d[f].iloc[0] / (1e6 if f != "consumer_fabric" else 1.0))
    l2 = _rows(an.l2, series=series, profile=profile, rung=RungId.L2P_OPTMT.value, role=Role.CONSUMER.value,
               condition=Condition.LADDER.value)
    out["read_misses"] = NA if l2.empty else l2["read_lookup_miss"].iloc[0]
    out["consumer_evict_last_hits"] = NA if l2.empty else l2["evict_last_lookup_hit"].iloc[0]
    pin = _rows(an.pin_traffic, series=series, profile=profile, rung=RungId.L2P_OPTMT.value)
    out["pin_evict_last"] = NA if pin.empty else pin["evict_last"].iloc[0]
    pin_l2 = _rows(an.l2, series=series, profile=profile, rung=RungId.L2P_OPTMT.value, role=Role.PIN.value,
                   condition=Condition.LADDER.value)
    out["pin_evict_last_hits"] = NA if pin_l2.empty else pin_l2["evict_last_lookup_hit"].iloc[0]
    out["hot_set_mb"] = NA if pin.empty else pin["hot_set_bytes"].iloc[0] / 1e6
    roof = _rows(an.measured_roofline, series=series, profile=profile, rung=RungId.OPTMT.value)
    out["dram_fraction"] = NA if roof.empty else roof["dram_fraction"].iloc[0]
    out["l2_fraction"] = NA if roof.empty else roof["l2_fraction"].iloc[0]
    out["dram_GBps"] = NA if roof.empty else roof["dram_GBps"].iloc[0]
    fam = _rows(an.families, series=series, profile=profile)
    out["vs_tuned"] = NA if fam.empty else fam["vs_tuned"].iloc[0]
    out["family_sentence"] = "" if fam.empty else fam["sentence"].iloc[0]
    return out


def series_facts(an: Analysis) -> dict[str, dict[str, Any]]:
    """Per series (family/pin): its title, profiles in order, each profile's facts, its spreads."""
    out = {}
    for s in an.series:
        lad = _rows(an.ladder, series=s.name, l2_state=an.state)
        profiles = ordered_profiles(lad["profile"]) if not lad.empty else []
        sp = _rows(an.spread, series=s.name)
        own = lad[lad["rung"] != RungId.TORCH.value] if not lad.empty else lad
        out[s.name] = {"title": s.title, "family": s.family, "pin": s.pin,
                       "runs": sorted({r for f in ("consumer_run", "kernels_run") for r in lad.get(f, []) if r}),
                       "profiles": [profile_facts(an, s.name, p) for p in profiles],
                       "spread": {r["timer"]: r for r in sp.to_dict("records")},
                       # what the artifact's timer adds, over the family's own rungs (not the torch row)
                       "host_overhead_us": list(own["host_overhead_us"].dropna()) if not own.empty else []}
    return out


def tuned_vs_artifact(an: Analysis) -> dict[str, Any]:
    """The artifact consumer against the tuned one, rung for rung (baseline and OptMT): the ratios,
    and the OptMT cap's effect on the tuned consumer (its OptMT against its baseline)."""
    ratios, cap = [], []
    for p in ordered_profiles(an.ladder["profile"]) if not an.ladder.empty else []:
        for rung in (RungId.BASELINE.value, RungId.OPTMT.value):
            a = _one(an.ladder, "consumer_us", series="artifact/element", profile=p, rung=rung, l2_state=an.state)
            t = _one(an.ladder, "consumer_us", series="tuned/line", profile=p, rung=rung, l2_state=an.state)
            if not (is_missing(a) or is_missing(t)):
                ratios.append(a / t)
        base = _ladder(an, "tuned/line", p, RungId.BASELINE.value)
        optmt = _ladder(an, "tuned/line", p, RungId.OPTMT.value)
        if base and optmt:
            cap.append({"saving_us": base["consumer_us"] - optmt["consumer_us"],
                        "word": consumer_word(an, base, optmt)})
    return {"artifact_over_tuned": ratios, "tuned_cap": cap}


def cross_process_facts(an: Analysis) -> list[dict[str, Any]]:
    """The compare section's figures per pair of runs and (quantity, timer)."""
    if an.compare_summary.empty:
        return []
    return an.compare_summary.to_dict("records")


def launch_lag_facts(an: Analysis) -> list[dict[str, Any]]:
    """Per ladder run of the study: the late share of its kernel-timer samples and what dropping them
    does to the consumer medians (analysis.spread.launch_lag_effect)."""
    out = []
    for run in an.study.runs_of_kind(Command.LADDER):
        spin = manifest_value(run.manifest, "measure.spin_us")
        timer = str(manifest_value(run.manifest, "measure.timer") or TimerKind.SPIN.value)
        timer = TimerKind.SPIN.value if timer == "unknown" else timer   # runs before the timer was recorded
        if run.samples is None or not isinstance(spin, (int, float)):
            continue
        lag = launch_lag_effect(run.samples, float(spin), timer)
        if lag is not None:
            out.append({"run": run.name, "spin_us": float(spin), "timer": timer, **lag})
    return out


def flush_facts(an: Analysis, flush_state: str = L2Condition.FLUSH.value) -> list[dict[str, Any]]:
    """Per (series, profile, rung) measured under both L2 states: the flushed consumer against the
    natural one (two runs: judged against the cross-process spread)."""
    out = []
    lad = an.ladder
    if lad.empty:
        return out
    for rec in lad[lad["l2_state"] == flush_state].to_dict("records"):
        nat = _rows(lad, series=rec["series"], profile=rec["profile"], rung=rec["rung"], l2_state=an.state)
        if nat.empty:
            continue
        n = nat.iloc[0].to_dict()
        v = judge(_consumer(n), _consumer(rec), n.get("consumer_run"), rec.get("consumer_run"),
                  Quantity.CONSUMER.value, Timer.KERNEL.value, an.cross_process)
        out.append({"series": rec["series"], "family": rec["family"], "profile": rec["profile"], "rung": rec["rung"],
                    "slower_pct": 100 * (rec["consumer_us"] / n["consumer_us"] - 1), "word": v.word,
                    "noise": v.noise})
    return out


def phase_facts(phases: pd.DataFrame) -> dict[str, float]:
    """The timeline's phases of its one call: duration per phase (µs)."""
    if phases is None or phases.empty:
        return {}
    return {str(r["phase"]): float(r["duration_us"]) for r in phases.to_dict("records")}


def ceiling_facts(table: pd.DataFrame) -> dict[str, Any]:
    """benchmarks/gather_ceiling.py's table: the random-row read's share of the measured read-only HBM
    bandwidth (ncu DRAM bytes / ncu duration) at the call's size and at steady state, with what a
    consumer must add, and the fast consumer's own share in the same run."""
    if table is None or table.empty:
        return {}
    name = table["candidate"].astype(str)
    pure = table[(table["kind"] == "ceiling") & ~name.str.contains(r"\+")]
    full = table[name.str.startswith("ceiling+offsets+epilogue")]
    steady = table[table["kind"] == "steady"]
    fast = table[name == "fast (defaults)"]
    return {"call": list(pure["ncu_hbm_fraction"]), "call_us": list(pure["ncu_duration_us"]),
            "steady": list(steady["ncu_hbm_fraction"]), "full": list(full["ncu_hbm_fraction"]),
            "fast": float(fast["ncu_hbm_fraction"].iloc[0]) if len(fast) else NA,
            "lookups": float(pure["lookups"].iloc[0]) if len(pure) else NA}


def ptxas_facts(table: dict[str, Any]) -> dict[str, Any]:
    """kernels/ptxas.json: the artifact family's consumer figures per arch beside the artifact's own
    build (artifact_reference), whether they are equal, and the tuned and fast consumers'."""
    v, ref = table.get("variants", {}), table.get("artifact_reference", {})
    out: dict[str, Any] = {}
    for arch in ("sm_80", "sm_90"):
        base = v["artifact/baseline/none"]["consumer"][arch]
        capped = v["artifact/optmt/none"]["consumer"][arch]
        rpf = v["artifact/rpf_optmt/none"]["consumer"][arch]
        r = ref.get(arch, {})
        plain, rref = r.get("plain", {}), r.get("rpf", {})
        out[arch] = {
            "base": base, "capped": capped, "rpf": rpf, "ref": r,
            "equal": (base["registers"] == plain.get("registers")
                      and capped["spill_stores"] == plain.get("capped_spill_stores")
                      and capped["spill_loads"] == plain.get("capped_spill_loads")
                      and rpf["spill_stores"] == rref.get("capped_spill_stores")
                      and rpf["spill_loads"] == rref.get("capped_spill_loads")),
            "tuned_base": v["tuned/baseline/none"]["consumer"][arch],
            "tuned_capped": v["tuned/optmt/none"]["consumer"][arch],
            "tuned_rpf": v["tuned/rpf_optmt/none"]["consumer"][arch],
            "fast": v["fast/optmt/none"]["consumer"][arch],
        }
    return out


def words(values: list[str]) -> dict[str, int]:
    """How many of the rule's words are faster, slower and within noise (for 'on every profile')."""
    return {w: sum(1 for x in values if x == w) for w in (FASTER, SLOWER, NOISE)}


def finite(values: list[Any]) -> list[float]:
    return [float(x) for x in values if not is_missing(x) and math.isfinite(float(x))]
