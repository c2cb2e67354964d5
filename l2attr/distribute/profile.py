"""`l2attr profile --workers N`: one Nsight Compute child per family x profile (the control folded in).

Application replay reruns a whole child process once per pass, and ncu takes a per-device lock,
so each unit is one ncu child on one GPU, holding that GPU's profiling lock (units.py); GPUs
profile in parallel. A unit runs in a scratch folder on its worker and returns its report and
its child ladder's run dir; the lead writes them under ncu/ and child/ as one-process runs lay
them out, then imports every report into metrics.csv exactly as `l2attr profile` does.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

from l2attr import atomic
from l2attr.distribute.cluster import using_cluster
from l2attr.distribute.options import Distribute
from l2attr.distribute.record import probe_workers, record_unit, run_gpu
from l2attr.distribute.units import Arrived, Counter, Unit, missing_error, run_units
from l2attr.errors import UserError
from l2attr.dlrm.declare import FAMILIES, rung
from l2attr.dlrm.profile.plan import (CONTROL_RUNG, NcuJob, Plan, ProfileSettings, child_command, control_cell,
                                        job_argv)
from l2attr.profile.ncu_cmd import NcuOptions
from l2attr.vocab import Condition, ConsumerCode, Family, Job, L2Condition

def unit_jobs(run_dir: Path, s: ProfileSettings, families: Sequence[Family], python: str = sys.executable) -> list[NcuJob]:
    """The profile's ncu jobs, one per family x profile: each family's child runs the rungs it
    implements (the torch reference with the first family only); the validity control's arms are
    folded into its family x profile child as extra cells, as the one-process plan folds them."""
    calls = s.calls_per_cell if s.calls_per_cell is not None else s.cfg.tables
    cell = control_cell(s.rungs, s.profiles, s.control_profile, s.control_family) if s.control else None
    jobs, folded, first = [], False, True
    for fam in families:
        rungs = [r for r in s.rungs if rung(r).consumer == ConsumerCode.TORCH and first
                 or rung(r).consumer != ConsumerCode.TORCH and FAMILIES[fam].implements(rung(r))]
        if not any(rung(r).consumer != ConsumerCode.TORCH for r in rungs) and not (first and rungs):
            continue
        first = False
        for profile in s.profiles:
            name = f"{Job.SWEEP.value}-{fam.value}-{profile}"
            extra = [*s.extra, "--family", fam.value]
            if cell is not None and (fam.value, profile) == (cell.family, cell.profile):
                extra += cell.extra_cell_flags()
                folded = True
            jobs.append(NcuJob(name, Condition.LADDER.value,
                               tuple(child_command(s.cfg, rungs, [profile], L2Condition.NATURAL.value, calls,
                                                   run_dir / "child", name, extra, python)),
                               run_dir / "ncu" / name))
    if not jobs:
        raise UserError(f"--rungs {','.join(s.rungs)}: none of the families implements them")
    if cell is not None and not folded:
        raise UserError(f"the validity control ({cell.family} {CONTROL_RUNG} on {cell.profile}) has no unit to run "
                        "in: profile that family and profile, or pass --no-control")
    return jobs


def unit_plan(run_dir: Path, s: ProfileSettings, families: Sequence[Family], metrics: Sequence[str],
              ncu: str, python: str = sys.executable) -> Plan:
    jobs = unit_jobs(run_dir, s, families, python)
    return Plan(jobs, {j.name: job_argv(j, metrics, s.opts, ncu) for j in jobs})


def profile_unit(s: ProfileSettings, families: list[Family], name: str, metrics: list[str], opts: NcuOptions,
                 ncu: str) -> dict[str, Any]:
    """On a worker: the one ncu job `name` in a scratch folder; its report and child run dir back."""
    from l2attr.profile.runner import run_job

    lines: list[str] = []

    class Collect:
        def line(self, text: str) -> None:
            lines.append(text)

        def rule(self, title: str) -> None:
            lines.append(f"--- {title}")

        def stream(self, text: str) -> None:
            lines.append(text.rstrip("\n"))

    with tempfile.TemporaryDirectory(prefix="l2attr-ncu-") as tmp:
        root = Path(tmp)
        (job,) = [j for j in unit_jobs(root, s, families) if j.name == name]
        job.output.parent.mkdir(parents=True, exist_ok=True)
        argv = job_argv(job, metrics, opts, ncu)
        result = run_job(job.name, argv, Collect())
        report = job.report.read_bytes() if job.report.is_file() else None
        child = {str(p.relative_to(root / "child")): p.read_bytes()
                 for p in sorted((root / "child").rglob("*")) if p.is_file()}
    return {"returncode": result.returncode, "wall_s": result.wall_s, "tail": result.tail, "argv": argv,
            "report": report, "child": child, "log": lines}


def write_unit(run_dir: Path, job: NcuJob, a: Arrived, chip: str | None) -> None:
    """The lead's write of one ncu unit: its report (atomically), its child's files, then the check."""
    from l2attr.profile.runner import JobResult, check_job

    v = a.value
    if v["report"] is not None:
        atomic.write_bytes(job.report, v["report"])
    for rel, data in v["child"].items():
        atomic.write_bytes(run_dir / "child" / rel, data)
    check_job(JobResult(job.name, v["returncode"], v["wall_s"], v["tail"]), job.report, chip)


def _jobs(plan: Plan, ran: dict[str, list[str]]) -> list[dict[str, Any]]:
    """Each ncu unit as planned here, with the command line its worker ran once it has come back."""
    return [{"name": j.name, "condition": j.condition, "report": str(j.report),
             "argv": ran.get(j.name, plan.argv[j.name])} for j in plan.jobs]


def profile_on_workers(s: ProfileSettings, families: list[Family], dist: Distribute, log: Any,
                       tools: Any = None, client: Any = None,
                       unit_fn: Callable[..., dict[str, Any]] = profile_unit,
                       probe_fn: Callable[..., dict[str, Any]] | None = None) -> Any:
    """The whole `l2attr profile` on workers; returns orchestrate's ProfileOutcome."""
    from l2attr.distribute.record import probe
    from l2attr.dlrm.profile.manifest import child_facts, profile_manifest
    from l2attr.dlrm.profile.orchestrate import ProfileOutcome, finish
    from l2attr.profile.metricsets import resolve_metrics
    from l2attr.profile.ncu_cmd import check_options
    from l2attr.profile.tools import Tools, ncu_version, validate_metric_names
    from l2attr.rundir import RunDir

    tools = tools or Tools()
    ncu = s.ncu or tools.which("ncu")
    warnings = check_options(s.opts)
    if s.dry_run:            # what would run, as units: no cluster, no run dir
        from l2attr.profile.tools import detect_chip

        chip = s.chip or detect_chip(tools.run, tools.which)
        mset = resolve_metrics(s.metrics, chip)
        note = (validate_metric_names(mset.metrics, chip, ncu, tools) if s.validate_metrics and ncu
                else "metric names not validated")
        return ProfileOutcome(chip, mset, note, unit_plan(Path("<RUN_DIR>"), s, families, mset.metrics,
                                                          ncu or "ncu", tools.python), settings_warnings=warnings)
    if not ncu:
        raise UserError("ncu not found on PATH (install Nsight Compute or pass --ncu PATH); the workers run "
                        "the same ncu")
    with using_cluster(dist, log.line, client) as c:
        probes = probe_workers(c, None, (), fn=probe_fn or probe)
        gpu, gpus = run_gpu(probes)
        chip = s.chip or str(gpu.get("chip") or "")
        mset = resolve_metrics(s.metrics, chip)
        version = ncu_version(ncu, tools)
        note = (validate_metric_names(mset.metrics, chip, ncu, tools) if s.validate_metrics
                else "metric names not validated (--no-validate-metrics)")
        run = RunDir.create(s.out, s.name, {**profile_manifest(s, chip, ncu, version, mset, note, warnings),
                                            "gpu": gpu, "gpus": gpus, "distribute": dist.manifest()})
        plan = unit_plan(run.path, s, families, mset.metrics, ncu, tools.python)
        log.line(f"run dir {run.path}  (chip {chip}, ncu {version or '?'}, {note}; {len(plan.jobs)} ncu units)")
        for w in warnings:
            log.line(f"warning: {w}")
        run.update_manifest(jobs=_jobs(plan, {}))
        by_name = {j.name: j for j in plan.jobs}
        walls: dict[str, float] = {}
        argvs: dict[str, list[str]] = {}
        counter = Counter(len(plan.jobs), log.line)

        def arrived(a: Arrived) -> None:
            name = a.key.split(":", 1)[1]
            walls[name], argvs[name] = round(a.value["wall_s"], 3), a.value["argv"]
            run.update_manifest(wall_s=walls)
            try:
                write_unit(run.path, by_name[name], a, chip)
            except UserError as exc:
                run.update_manifest(status="failed", error=str(exc))
                raise
            record_unit(run, a)
            counter.said(a)

        units = [Unit(f"ncu:{j.name}", unit_fn, (s, families, j.name, list(mset.metrics), s.opts, ncu), ncu=True)
                 for j in plan.jobs]
        outcome = run_units(c, units, arrived, log.line)
    run.update_manifest(jobs=_jobs(plan, argvs), missing_units=outcome.missing or None)
    if outcome.missing:
        run.update_manifest(status="failed", error=outcome.describe_missing())
        raise missing_error(outcome, run.path, "ncu units")
    # the children's versions and variants; `gpu` stays the workers' (several GPUs: what they share)
    run.update_manifest(**{k: v for k, v in child_facts(run.path / "child").items() if k != "gpu"})
    return finish(run, s, plan, mset, walls, ProfileOutcome(chip, mset, note, plan, run.path, None, warnings))


__all__ = ["profile_on_workers", "unit_jobs", "unit_plan", "profile_unit"]
