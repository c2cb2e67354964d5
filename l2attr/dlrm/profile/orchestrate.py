"""Run the ladder under Nsight Compute: check the tools, plan, run each ncu job, import, write.

The steps live in their own modules (plan: what to run; tools: what the machine's tools say;
runner: running them; manifest: what is recorded); this is their order. Nothing is judged or
printed here: the validity control is judged from metrics.csv by l2attr.analysis.control, and
l2attr.commands shows the outcome.

The parent's two questions to ncu (its version, the metric names it knows for the chip) are
asked side by side; both are answered before any run dir or child exists, so a name ncu does not
know is still one line and no work. The parent's seconds around the children are recorded
(`parent_s`: tools, report import) beside the children's walls.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from l2attr.catalog.sets import MetricSet
from l2attr.errors import UserError
from l2attr.dlrm.profile.manifest import child_facts, jobs_record, profile_finished, profile_manifest
from l2attr.profile.ncu_import import ImportResult
from l2attr.dlrm.profile.plan import Plan, ProfileSettings, control_cell, job_condition, label_rows, make_plan
from l2attr.profile.runner import Log, check_job, run_job
from l2attr.profile.tools import Tools, detect_chip, ncu_version, validate_metric_names


@dataclass
class ProfileOutcome:
    """What a profile run decided and, unless it was a dry run, where it wrote what."""

    chip: str
    metric_set: MetricSet
    validation: str                      # whether and how the metric names were checked
    plan: Plan
    run: Path | None = None              # None: a dry run
    imported: ImportResult | None = None
    settings_warnings: list[str] = field(default_factory=list)


def run_profile(s: ProfileSettings, log: Log, tools: Tools | None = None) -> ProfileOutcome:
    """The whole `l2attr profile` run; a UserError for anything that stops it."""
    from l2attr.profile.metricsets import resolve_metrics
    from l2attr.profile.ncu_cmd import check_options
    from l2attr.rundir import RunDir

    tools = tools or Tools()
    t0 = time.perf_counter()
    chip = s.chip or detect_chip(tools.run, tools.which)
    mset = resolve_metrics(s.metrics, chip)
    warnings = check_options(s.opts)
    ncu = s.ncu or tools.which("ncu")
    if not ncu and not s.dry_run:
        raise UserError("ncu not found on PATH (install Nsight Compute or pass --ncu PATH); "
                        "`l2attr profile --import REPORT.ncu-rep` works without it")
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="ncu-ask") as pool:
        version_f = pool.submit(ncu_version, ncu, tools) if ncu else None
        note_f = pool.submit(validate_metric_names, mset.metrics, chip, ncu, tools) if s.validate_metrics else None
        version = version_f.result() if version_f is not None else None
        note = note_f.result() if note_f is not None else "metric names not validated (--no-validate-metrics)"
    ncu_exe = ncu or "ncu"

    def plan_in(run_dir: Path) -> Plan:
        return make_plan(run_dir, s.cfg, s.rungs, s.profiles, s.calls_per_cell, mset.metrics, s.opts, ncu_exe,
                         s.control, s.control_profile, s.extra, tools.python, s.control_family)

    if s.dry_run:
        return ProfileOutcome(chip, mset, note, plan_in(Path("<RUN_DIR>")), settings_warnings=warnings)

    run = RunDir.create(s.out, s.name, profile_manifest(s, chip, ncu, version, mset, note, warnings))
    plan = plan_in(run.path)
    run.update_manifest(jobs=jobs_record(plan))
    log.line(f"run dir {run.path}  (chip {chip}, ncu {version or '?'}, {note})")
    for w in warnings:
        log.line(f"warning: {w}")
    parent = {"tools_s": round(time.perf_counter() - t0, 3)}

    walls: dict[str, float] = {}
    for job in plan.jobs:
        job.output.parent.mkdir(parents=True, exist_ok=True)  # ncu does not create folders
        result = run_job(job.name, plan.argv[job.name], log, tools.stream)
        walls[job.name] = round(result.wall_s, 3)
        run.update_manifest(wall_s=walls)
        try:
            check_job(result, job.report, chip)
        except UserError as exc:
            run.update_manifest(status="failed", error=str(exc))
            raise
    run.update_manifest(**child_facts(run.path / "child"))
    t1 = time.perf_counter()
    out = finish(run, s, plan, mset, walls, ProfileOutcome(chip, mset, note, plan, run.path, None, warnings))
    parent["import_s"] = round(time.perf_counter() - t1, 3)
    run.update_manifest(parent_s=parent)
    return out


def finish(run, s: ProfileSettings, plan: Plan, mset: MetricSet, walls, outcome: "ProfileOutcome") -> "ProfileOutcome":
    """After the children: import every report, label the control's rows, write metrics.csv and
    the manifest's finish (one path for the one-process and the workers' profile)."""
    from l2attr.profile.ncu_import import import_reports
    from l2attr.schema import METRICS

    imported = import_reports([(j.report, job_condition(j)) for j in plan.jobs], expected=mset.metrics,
                              keep_all=s.keep_all)
    cell = control_cell(s.rungs, s.profiles, s.control_profile, s.control_family) if s.control else None
    imported = ImportResult(label_rows(imported.table, cell), imported.warnings, imported.chip)
    run.write(METRICS, imported.table)
    run.update_manifest(**profile_finished(imported.table, imported.warnings, walls, mset.metrics))
    outcome.imported = imported
    return outcome
