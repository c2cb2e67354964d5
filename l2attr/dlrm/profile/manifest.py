"""What the runs of profile/ record in their manifests: the inputs and facts, never a verdict.

The validity control is recorded as declared (`control`: rung, family, profile, arms) and
judged from metrics.csv by l2attr.analysis.control, the one judge the CLI and both reports call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.catalog.sets import MetricSet
from l2attr.dlrm.profile.plan import CHILD_BATCHES, CONTROL_RUNG, Plan, ProfileSettings, control_inputs
from l2attr.vocab import Command

PASSES = "profiler__replayer_passes"


def profile_manifest(s: ProfileSettings, chip: str, ncu: str | None, version: str | None, mset: MetricSet,
                     validation: str, warnings: list[str]) -> dict[str, Any]:
    """A profile run's manifest as it starts: what was asked, of which tools, on which chip."""
    return {
        "kind": Command.PROFILE.value, "command": s.command, "config": s.cfg.to_dict(), "chip": chip,
        "ncu": {"path": ncu, "version": version}, "replay_mode": s.opts.replay_mode,
        "app_replay_match": s.opts.app_replay_match, "app_replay_mode": s.opts.app_replay_mode,
        "cache_control": s.opts.cache_control, "clock_control": s.opts.clock_control,
        "nvtx_include": list(s.opts.nvtx_include), "metric_set": mset.name, "metrics": mset.metrics,
        "derived_metrics": [d.name for d in mset.derived], "metric_validation": validation,
        "rungs": list(s.rungs), "profiles": list(s.profiles), "calls_per_cell": s.calls_per_cell,
        "child_workload_overrides": dict(CHILD_BATCHES), "control": control_inputs(s),
        "status": "running", "settings_warnings": warnings,
    }


def profile_finished(metrics: pd.DataFrame, warnings: list[str], walls: dict[str, float],
                     asked: list[str] | None = None) -> dict[str, Any]:
    """What a profile run adds once its reports are imported into `metrics`; `metrics_collected`:
    the asked-for names the import found (the integrity contract holds metrics.csv to them)."""
    got = set(metrics["metric"].astype(str)) if "metric" in metrics else set()
    out = {"status": "done", "warnings": warnings, "replayer_passes": passes_summary(metrics), "wall_s": walls,
           "wall_s_total": round(sum(walls.values()), 3)}
    if asked is not None:
        out["metrics_collected"] = [m for m in asked if m in got]
    return out


def jobs_record(plan: Plan) -> list[dict[str, Any]]:
    """Each ncu job as run: its name, how its rows are labelled, its report and command line."""
    return [{"name": j.name, "condition": j.condition, "report": str(j.report), "argv": plan.argv[j.name]}
            for j in plan.jobs]


def pm_timeline_manifest(s: ProfileSettings, chip: str, why_not_nsys: str, profile: str) -> dict[str, Any]:
    """A timeline run made by ncu's range replay with PM sampling, as it starts."""
    return {"kind": Command.TIMELINE.value, "command": s.command, "config": s.cfg.to_dict(), "chip": chip,
            "method": "ncu app-range replay of one NVTX call range (pin -> sync -> consumer) with PM sampling",
            "nsys": why_not_nsys, "rung": CONTROL_RUNG, "family": s.control_family, "profile": profile,
            "status": "running"}


def nsys_timeline_manifest(s: ProfileSettings, nsys_path: str, nsys_version: str | None) -> dict[str, Any]:
    """A timeline run made by nsys, as it starts."""
    return {"kind": Command.TIMELINE.value, "command": s.command, "config": s.cfg.to_dict(), "method": "nsys",
            "nsys": {"path": nsys_path, "version": nsys_version}, "rungs": list(s.rungs),
            "profiles": list(s.profiles), "calls_per_cell": s.calls_per_cell, "status": "running"}


def passes_summary(df: pd.DataFrame) -> dict[str, Any]:
    """profiler__replayer_passes per report: how many times the child ran."""
    p = df[df["metric"] == PASSES]
    out = {}
    for report, g in p.groupby("report"):
        # kernels, not rows: the folded control's after-pin arm labels some kernels twice
        kernels = int(g["launch"].nunique()) if "launch" in g else int(len(g))
        out[str(report)] = {"min": int(g["value"].min()), "max": int(g["value"].max()), "kernels": kernels}
    return out


def child_facts(child_root: Path) -> dict[str, Any]:
    """GPU, software versions and compiled variants as the profiled children recorded them.

    The parent only starts ncu; the children are the processes that saw the GPU, so their
    manifests are the source of these facts for the profile run's provenance.
    """
    facts: dict[str, Any] = {}
    for manifest in sorted(child_root.glob("*/manifest.json")):
        m = json.loads(manifest.read_text())
        for key in ("gpu", "versions", "variants"):
            if key in m and key not in facts:
                facts[key] = m[key]
    return facts
