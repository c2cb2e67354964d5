"""`profile --timeline`: pin -> sync -> consumer in time, for the last call of one cell.

With an nsys that can make reports: the sweep under nsys, per-call pin / gap / consumer.
Without one (the H200 here): Nsight Compute alone. One NVTX `call` range around pin -> sync
-> consumer (the control's cell: L2P+OptMT of the headline family on the hottest profile),
replayed whole (`--replay-mode app-range`) twice: once with PM sampling at the chip's
shortest interval (L2 hit rate, DRAM throughput over time), and with `--timeline-totals` once
more for the range's totals of the `l2` metric set. Writes timeline.csv, phases.csv (and
range_metrics.csv).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr import atomic
from l2attr.errors import UserError
from l2attr.dlrm.profile.manifest import child_facts, nsys_timeline_manifest, pm_timeline_manifest
from l2attr.profile.ncu_cmd import report_path
from l2attr.dlrm.profile.plan import CONTROL_RUNG, ProfileSettings, child_command, hottest_profile
from l2attr.profile.runner import Log, check_job, run_job
from l2attr.profile.tools import Tools, detect_chip
from l2attr.rundir import RunDir
from l2attr.vocab import Job, L2Condition, Command
from l2attr.names import NVTX_CALL_INCLUDE


@dataclass
class TimelineOutcome:
    """What a timeline run wrote, for the command to show."""

    run: Path
    table: pd.DataFrame                                   # phases (ncu) or per-call times (nsys)
    wrote: list[str]                                      # file names written in the run dir
    warnings: list[str] = field(default_factory=list)


def run_timeline(s: ProfileSettings, log: Log, tools: Tools | None = None) -> TimelineOutcome:
    """nsys where it can make reports, else ncu's range replay with PM sampling."""
    from l2attr.profile import nsys as nsys_mod

    tools = tools or Tools()
    status = nsys_mod.probe_nsys(runner=tools.run, which=tools.which)
    if status.usable:
        return _run_nsys_timeline(s, log, tools, status)
    return _run_pm_timeline(s, log, tools, status.detail)


def _run_pm_timeline(s: ProfileSettings, log: Log, tools: Tools, why_not_nsys: str) -> TimelineOutcome:
    from l2attr.profile import pmsampling
    from l2attr.profile.metricsets import resolve_metrics
    from l2attr.profile.pmsampling import phases as find_phases
    from l2attr.catalog.sampled import write_section
    from l2attr.profile.pmsampling import range_metrics_ncu_argv, timeline_ncu_argv
    from l2attr.schema import PHASES, TIMELINE

    ncu = s.ncu or tools.which("ncu")
    if not ncu:
        raise UserError(f"no timeline: {why_not_nsys}, and ncu is not on PATH for the range-replay "
                        "timeline (install Nsight Compute or pass --ncu PATH)")
    chip = s.chip or detect_chip(tools.run, tools.which)
    profile = s.control_profile or hottest_profile(s.profiles)
    run = RunDir.create(s.out, s.name, pm_timeline_manifest(s, chip, why_not_nsys, profile))
    child = child_command(s.cfg, [CONTROL_RUNG], [profile], L2Condition.NATURAL.value, 1, run.path / "child",
                          Command.TIMELINE.value, [*s.extra, "--family", s.control_family, "--nvtx-calls"],
                          tools.python)
    sections = run.path / "ncu" / "sections"
    section = write_section(sections, chip)         # None: ncu's stock PmSampling section
    jobs = [(Job.TIMELINE.value, timeline_ncu_argv(
        child, run.path / "ncu" / Job.TIMELINE.value, ncu, NVTX_CALL_INCLUDE, chip=chip, max_passes=s.pm_max_passes,
        **({"section": section, "section_folder": sections} if section else {})))]
    if s.timeline_totals:   # the range's totals of the l2 set: one more replay, ~5 passes
        metrics = resolve_metrics("l2", chip).metrics
        jobs.append((Job.RANGE_METRICS.value, range_metrics_ncu_argv(
            child, run.path / "ncu" / Job.RANGE_METRICS.value, ncu, NVTX_CALL_INCLUDE, metrics)))
    (run.path / "ncu").mkdir(parents=True, exist_ok=True)
    walls: dict[str, float] = {}
    for name, argv in jobs:
        result = run_job(name, argv, log, tools.stream)
        walls[name] = round(result.wall_s, 3)
        try:
            check_job(result, report_path(run.path / "ncu" / name), chip)
        except UserError as exc:
            run.update_manifest(status="failed", error=str(exc), wall_s=walls)
            raise
    pm = pmsampling.read_pm_report(report_path(run.path / "ncu" / Job.TIMELINE.value))
    phases = find_phases(pm.samples)
    run.write(TIMELINE, pm.samples)
    run.write(PHASES, phases)
    wrote = [TIMELINE.filename, PHASES.filename]
    if s.timeline_totals:
        totals = pmsampling.read_range_metrics(report_path(run.path / "ncu" / Job.RANGE_METRICS.value))
        atomic.write_csv(run.path / "range_metrics.csv", totals)
        wrote.append("range_metrics.csv")
    run.update_manifest(status="done", wall_s=walls, warnings=pm.warnings,
                        ranges=pm.ranges.to_dict("records"), jobs=[{"name": n, "argv": a} for n, a in jobs],
                        **child_facts(run.path / "child"))
    return TimelineOutcome(run.path, phases, wrote, pm.warnings)


def _run_nsys_timeline(s: ProfileSettings, log: Log, tools: Tools, status: Any) -> TimelineOutcome:
    """The sweep under nsys, then per-call pin / gap / consumer times (timeline_nsys.csv)."""
    from l2attr.profile import nsys as nsys_mod

    assert status.path is not None
    run = RunDir.create(s.out, s.name, nsys_timeline_manifest(s, status.path, status.version))
    child = child_command(s.cfg, s.rungs, s.profiles, L2Condition.NATURAL.value, s.calls_per_cell, run.path / "child",
                          Command.TIMELINE.value, s.extra, tools.python)
    rep = run.path / "nsys" / Job.TIMELINE.value
    rep.parent.mkdir(parents=True, exist_ok=True)
    steps = (("record", nsys_mod.profile_argv(status.path, child, rep)),
             ("export", nsys_mod.export_argv(status.path, rep.with_suffix(".nsys-rep"), rep.with_suffix(".sqlite"))))
    for label, argv in steps:
        result = run_job(label, argv, log, tools.stream, tool="nsys")
        if result.returncode != 0:
            run.update_manifest(status="failed", error=f"nsys {label} exited with {result.returncode}")
            raise UserError(f"nsys {label} exited with status {result.returncode}; see its output above")
    calls = nsys_mod.read_timeline(rep.with_suffix(".sqlite"))
    atomic.write_csv(run.path / "timeline_nsys.csv", calls)
    run.update_manifest(status="done", timeline_calls=int(len(calls)))
    return TimelineOutcome(run.path, calls, ["timeline_nsys.csv"])
