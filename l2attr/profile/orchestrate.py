"""Run the ladder under Nsight Compute: plan the ncu invocations, run them, import.

Application replay reruns the whole child once per pass, so the plan keeps child runs few:
one ncu invocation profiles the whole family x rung x profile sweep, and three small one-cell
invocations form the validity control (l2p_optmt on the hottest selected profile: consumer right
after the pin, after pin + L2 flush, after pin + persisting-L2 reset). Judging (the control's
verdict, the summary) is l2attr.analysis's, the same code the report uses.
"""

from __future__ import annotations

import collections
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import pandas as pd

from l2attr.analysis.control import describe_control, validity_control
from l2attr.catalog.chips import chip_for_compute_capability
from l2attr.config import WorkloadConfig
from l2attr.errors import UserError
from l2attr.ladder import PROFILES, RUNGS
from l2attr.profile import ncu_errors
from l2attr.profile.ncu_cmd import NcuOptions, build_ncu_argv, report_path
from l2attr.profile.ncu_import import control_condition
from l2attr.vocab import L2State

CONTROL_RUNG = "l2p_optmt"
PASSES = "profiler__replayer_passes"
# The control's three arms run in one child, state after state (the import labels each row's arm
# by the L2 state its range names: analysis.control).
CONTROL_STATES = (L2State.NATURAL.value, L2State.FLUSH_AFTER_PIN.value, L2State.RESET_AFTER_PIN.value)
# What a profiled child runs of the workload: one warm-up and one measured batch. Counters are read
# for the measured batch's calls (one per table); the L2 state a call meets is set by the calls
# just before it (each table-batch streams 40-150 MB through the 60 MB L2), which one batch
# before it provides. Under ncu every kernel launch of the child costs milliseconds, profiled or not,
# and application replay reruns the child once per pass: the ladder's 14 batches cost 7x the time.
CHILD_BATCHES = {"--warmup-batches": "1", "--batches": "1"}


@dataclass(frozen=True)
class NcuJob:
    """One ncu invocation: which child runs, where the report goes, how its rows are labelled."""

    name: str
    condition: str              # "ladder" or "control" (control rows are labelled per l2_state)
    child: tuple[str, ...]
    output: Path                # report path without .ncu-rep

    @property
    def report(self) -> Path:
        return report_path(self.output)


# -- planning ------------------------------------------------------------------------------------

def workload_flags(cfg: WorkloadConfig) -> list[str]:
    """The resolved workload as explicit flags, so the child runs exactly what the manifest says."""
    out: list[str] = []
    for key, value in cfg.to_dict().items():
        out += [f"--{key.replace('_', '-')}", str(value)]
    return out


def child_command(cfg: WorkloadConfig, rungs: Sequence[str], profiles: Sequence[str], l2: str,
                  nvtx_last: int, out: Path, name: str, extra: Sequence[str] = (),
                  python: str = sys.executable) -> list[str]:
    """`python -m l2attr ladder ...` for one sweep; NVTX ranges only around the last calls.

    `--repeats 1 --no-host-repeat`: each call is profiled once (a host-timed repeat would emit
    the same ranges again); `--spin-us 0`: the ladder's spin kernel would otherwise run inside
    the ranges and be profiled as if it were the pin or the consumer; `--no-bandwidth` and one
    warm-up + one measured batch (CHILD_BATCHES): timing under ncu means nothing, layer A
    measures time.
    """
    overrides = [x for flag, value in CHILD_BATCHES.items() for x in (flag, value)]
    return [python, "-m", "l2attr", "ladder", *workload_flags(cfg), *overrides,
            "--rungs", ",".join(rungs), "--profiles", ",".join(profiles), "--l2", l2,
            "--repeats", "1", "--no-host-repeat", "--spin-us", "0", "--no-bandwidth",
            "--nvtx-last", str(nvtx_last), "--quiet", "--out", str(out), "--name", name, *extra]


def hottest_profile(profiles: Sequence[str]) -> str:
    """The selected profile with the most reuse (PROFILES is ordered hottest first)."""
    for p in PROFILES:
        if p in profiles:
            return p
    return profiles[0]


def plan_jobs(run_dir: Path, cfg: WorkloadConfig, rungs: Sequence[str], profiles: Sequence[str],
              calls_per_cell: int | None, control: bool = True, control_profile: str | None = None,
              extra: Sequence[str] = (), python: str = sys.executable,
              control_family: str = "artifact") -> list[NcuJob]:
    if calls_per_cell is None:
        calls_per_cell = cfg.tables   # one call per table: the last measured batch
    if calls_per_cell < 1:
        raise UserError("--calls-per-cell must be at least 1 (it is how many table calls per cell are profiled)")
    ncu_dir, child_dir = run_dir / "ncu", run_dir / "child"
    jobs = [NcuJob("sweep", "ladder",
                   tuple(child_command(cfg, rungs, profiles, "natural", calls_per_cell, child_dir, "sweep",
                                       extra, python)),
                   ncu_dir / "sweep")]
    if control:
        prof = control_profile or hottest_profile(profiles)
        jobs.append(NcuJob("control", "control",
                           tuple(child_command(cfg, [CONTROL_RUNG], [prof], ",".join(CONTROL_STATES),
                                               calls_per_cell, child_dir, "control",
                                               [*extra, "--family", control_family], python)),
                           ncu_dir / "control"))
    return jobs


def job_argv(job: NcuJob, metrics: Sequence[str], opts: NcuOptions, ncu: str) -> list[str]:
    return build_ncu_argv(job.child, metrics, job.output, opts, ncu)


# -- running -------------------------------------------------------------------------------------

StreamRunner = Callable[[Sequence[str], Callable[[str], None]], int]


def stream_run(argv: Sequence[str], echo: Callable[[str], None]) -> int:
    """Run a command, echoing its merged stdout/stderr line by line as it comes."""
    try:
        proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, bufsize=1)
    except FileNotFoundError:
        raise UserError(f"cannot run {argv[0]!r}: not found") from None
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            echo(line)
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait()
        raise
    return proc.wait()


@dataclass
class JobResult:
    name: str
    returncode: int
    wall_s: float
    tail: str = ""


def run_job(argv: Sequence[str], runner: StreamRunner = stream_run,
            echo: Callable[[str], None] | None = None, keep_lines: int = 400) -> JobResult:
    """Run one ncu invocation, show its output, keep the tail for error translation."""
    tail: collections.deque[str] = collections.deque(maxlen=keep_lines)
    out = echo or (lambda line: (sys.stdout.write(line), sys.stdout.flush()))

    def both(line: str) -> None:
        tail.append(line)
        out(line)

    start = time.perf_counter()
    rc = runner(argv, both)
    return JobResult("", rc, time.perf_counter() - start, "".join(tail))


def check_job(result: JobResult, report: Path, chip: str | None) -> None:
    """A failed ncu run, or one that wrote no report, becomes one clear line."""
    problems = ncu_errors.translate(result.tail, chip)
    if result.returncode != 0 or not report.is_file():
        msg = ncu_errors.summarize(result.tail, result.returncode, chip)
        if result.returncode == 0 and not problems:
            msg = f"ncu wrote no report at {report}"
        raise UserError(f"{result.name}: {msg}")
    if any(p.code == "no_kernels" for p in problems):
        raise UserError(f"{result.name}: {ncu_errors.summarize(result.tail, result.returncode, chip)}")


def detect_chip(runner: Callable[[Sequence[str], float], subprocess.CompletedProcess] | None = None,
                which: Callable[[str], str | None] | None = None) -> str:
    """Chip of GPU 0 from nvidia-smi's compute_cap (no CUDA context in this process)."""
    import shutil

    which = which or shutil.which
    smi = which("nvidia-smi")
    if not smi:
        raise UserError("cannot tell the GPU's chip (nvidia-smi not found); pass --chip ga100|gh100")
    run = runner or (lambda argv, t: subprocess.run(list(argv), capture_output=True, text=True,
                                                    timeout=t, check=False))
    res = run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"], 30)
    first = (res.stdout or "").strip().splitlines()
    try:
        major, minor = first[0].strip().split(".")
        return chip_for_compute_capability(int(major), int(minor))
    except (IndexError, ValueError):
        raise UserError("cannot read the GPU's compute capability from nvidia-smi; pass --chip ga100|gh100") from None


# -- judging lives in l2attr.analysis (control.py, attribution.py): one implementation for the
# profile run's manifest and summary, the report and the README.

def passes_summary(df: pd.DataFrame) -> dict[str, Any]:
    """profiler__replayer_passes per report: how many times the child ran."""
    p = df[df["metric"] == PASSES]
    out = {}
    for report, g in p.groupby("report"):
        out[str(report)] = {"min": int(g["value"].min()), "max": int(g["value"].max()), "kernels": int(len(g))}
    return out


@dataclass
class Plan:
    """Everything `profile` decided before running: recorded in the manifest."""

    jobs: list[NcuJob]
    argv: dict[str, list[str]] = field(default_factory=dict)

    def describe(self) -> str:
        return "\n".join(f"[{j.name}] {shlex.join(self.argv[j.name])}" for j in self.jobs)


def make_plan(run_dir: Path, cfg: WorkloadConfig, rungs: Sequence[str], profiles: Sequence[str],
              calls_per_cell: int, metrics: Sequence[str], opts: NcuOptions, ncu: str,
              control: bool = True, control_profile: str | None = None, extra: Sequence[str] = (),
              python: str = sys.executable, control_family: str = "artifact") -> Plan:
    jobs = plan_jobs(run_dir, cfg, rungs, profiles, calls_per_cell, control, control_profile, extra, python,
                     control_family)
    return Plan(jobs, {j.name: job_argv(j, metrics, opts, ncu) for j in jobs})


def job_condition(job: NcuJob):
    return control_condition if job.condition == "control" else job.condition



DEFAULT_RUNGS = tuple(r.name for r in RUNGS)
ToolRunner = Callable[[Sequence[str], float], subprocess.CompletedProcess]


def _tool_run(argv: Sequence[str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)


@dataclass
class ProfileSettings:
    """What `l2attr profile` was asked to do (the CLI maps flags onto this)."""

    cfg: WorkloadConfig
    metrics: str = "l2"
    rungs: Sequence[str] = DEFAULT_RUNGS
    profiles: Sequence[str] = PROFILES
    calls_per_cell: int | None = None     # None: one call per table of the last measured batch
    out: Path = Path("runs")
    name: str = "profile"
    chip: str | None = None
    ncu: str | None = None
    opts: NcuOptions = field(default_factory=NcuOptions)
    control: bool = True
    control_profile: str | None = None
    control_family: str = "artifact"      # the control profiles one family: the headline one
    timeline_totals: bool = False         # --timeline: also the range's totals of the l2 set
    extra: Sequence[str] = ()
    validate_metrics: bool = True
    dry_run: bool = False
    keep_all: bool = False
    command: str = ""


@dataclass
class Tools:
    """Outside-world access of a profile run, replaceable in tests."""

    stream: StreamRunner = stream_run
    run: ToolRunner = _tool_run
    which: Callable[[str], str | None] = field(default=None)  # type: ignore[assignment]
    python: str = sys.executable

    def __post_init__(self) -> None:
        if self.which is None:
            import shutil

            self.which = shutil.which


def ncu_version(ncu: str, tools: Tools) -> str | None:
    from l2attr.profile.ncu_cmd import parse_ncu_version, version_argv

    try:
        res = tools.run(version_argv(ncu), 60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_ncu_version((res.stdout or "") + (res.stderr or ""))


def validate_metric_names(metrics: Sequence[str], chip: str, ncu: str | None, tools: Tools) -> str:
    """Check names against `ncu --query-metrics --chips <chip>`; unknown names are an error."""
    from l2attr.profile.metricsets import parse_query_metrics, unknown_metrics
    from l2attr.profile.ncu_cmd import query_metrics_argv

    if not ncu:
        return "metric names not validated (ncu not found)"
    try:
        res = tools.run(query_metrics_argv(chip, ncu), 120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"metric names not validated (`ncu --query-metrics` failed: {exc})"
    available = parse_query_metrics(res.stdout or "")
    if not available:
        return "metric names not validated (`ncu --query-metrics` listed nothing)"
    bad = unknown_metrics(metrics, available)
    if bad:
        raise UserError(f"ncu does not list {', '.join(bad)} for chip {chip}; see "
                        f"`ncu --query-metrics --chips {chip}` (or pass --no-validate-metrics)")
    return f"metric names validated against `ncu --query-metrics --chips {chip}`"


def child_facts(child_root: Path) -> dict[str, Any]:
    """GPU, software versions and compiled variants as the profiled children recorded them.

    The parent only starts ncu; the children are the processes that saw the GPU, so their
    manifests are the source of these facts for the profile run's provenance.
    """
    import json

    facts: dict[str, Any] = {}
    for manifest in sorted(child_root.glob("*/manifest.json")):
        m = json.loads(manifest.read_text())
        for key in ("gpu", "versions", "variants"):
            if key in m and key not in facts:
                facts[key] = m[key]
    return facts


def run_profile(s: ProfileSettings, console: Any, tools: Tools | None = None) -> int:
    """The whole `l2attr profile` run. Returns the exit status (0 unless a UserError)."""
    from l2attr.profile.metricsets import resolve_metrics
    from l2attr.profile.ncu_cmd import check_options
    from l2attr.profile.ncu_import import import_reports
    from l2attr.rundir import RunDir
    from l2attr.schema import METRICS

    tools = tools or Tools()
    chip = s.chip or detect_chip(tools.run, tools.which)
    mset = resolve_metrics(s.metrics, chip)
    warnings = check_options(s.opts)
    ncu = s.ncu or tools.which("ncu")
    if not ncu and not s.dry_run:
        raise UserError("ncu not found on PATH (install Nsight Compute or pass --ncu PATH); "
                        "`l2attr profile --import REPORT.ncu-rep` works without it")
    version = ncu_version(ncu, tools) if ncu else None
    note = (validate_metric_names(mset.metrics, chip, ncu, tools) if s.validate_metrics
            else "metric names not validated (--no-validate-metrics)")
    ncu_exe = ncu or "ncu"

    if s.dry_run:
        plan = make_plan(Path("<RUN_DIR>"), s.cfg, s.rungs, s.profiles, s.calls_per_cell, mset.metrics,
                         s.opts, ncu_exe, s.control, s.control_profile, s.extra, tools.python,
                         s.control_family)
        console.print(f"chip {chip}; metric set {mset.name}: {len(mset.metrics)} metrics; {note}",
                      markup=False, highlight=False)
        for w in warnings:
            console.print(f"warning: {w}", markup=False, highlight=False)
        print(plan.describe())
        return 0

    manifest = {
        "kind": "profile", "command": s.command, "config": s.cfg.to_dict(), "chip": chip,
        "ncu": {"path": ncu, "version": version}, "replay_mode": s.opts.replay_mode,
        "app_replay_match": s.opts.app_replay_match, "app_replay_mode": s.opts.app_replay_mode,
        "cache_control": s.opts.cache_control, "clock_control": s.opts.clock_control,
        "nvtx_include": list(s.opts.nvtx_include), "metric_set": mset.name, "metrics": mset.metrics,
        "derived_metrics": [d.name for d in mset.derived], "metric_validation": note,
        "rungs": list(s.rungs), "profiles": list(s.profiles), "calls_per_cell": s.calls_per_cell,
        "child_workload_overrides": dict(CHILD_BATCHES),
        "status": "running", "settings_warnings": warnings,
    }
    run = RunDir.create(s.out, s.name, manifest)
    plan = make_plan(run.path, s.cfg, s.rungs, s.profiles, s.calls_per_cell, mset.metrics, s.opts,
                     ncu_exe, s.control, s.control_profile, s.extra, tools.python, s.control_family)
    run.update_manifest(jobs=[{"name": j.name, "condition": j.condition, "report": str(j.report),
                               "argv": plan.argv[j.name]} for j in plan.jobs])
    console.print(f"run dir {run.path}  (chip {chip}, ncu {version or '?'}, {note})",
                  markup=False, highlight=False)
    for w in warnings:
        console.print(f"warning: {w}", markup=False, highlight=False)

    walls: dict[str, float] = {}
    for job in plan.jobs:
        argv = plan.argv[job.name]
        console.rule(f"ncu: {job.name}")
        job.output.parent.mkdir(parents=True, exist_ok=True)  # ncu does not create folders
        print(shlex.join(argv), flush=True)
        result = run_job(argv, tools.stream)
        result.name = job.name
        walls[job.name] = round(result.wall_s, 3)
        run.update_manifest(wall_s=walls)
        try:
            check_job(result, job.report, chip)
        except UserError as exc:
            run.update_manifest(status="failed", error=str(exc))
            raise

    run.update_manifest(**child_facts(run.path / "child"))
    imported = import_reports([(j.report, job_condition(j)) for j in plan.jobs], expected=mset.metrics,
                              keep_all=s.keep_all)
    run.write(METRICS, imported.table)
    vc = validity_control(imported.table) if s.control else {"verdict": "skipped"}
    run.update_manifest(status="done", warnings=imported.warnings, validity_control=vc,
                        replayer_passes=passes_summary(imported.table), wall_s=walls,
                        wall_s_total=round(sum(walls.values()), 3))
    render_summary(console, imported.table)
    for w in imported.warnings:
        console.print(f"warning: {w}", markup=False, highlight=False)
    if s.control:
        console.print(describe_control(vc), markup=False, highlight=False)
    console.print(f"wrote {run.path / METRICS.filename}", markup=False, highlight=False)
    return 0


def run_timeline(s: ProfileSettings, console: Any, tools: Tools | None = None) -> int:
    """`profile --timeline`: pin -> sync -> consumer in time, for the last call of one cell.

    With an nsys that can make reports: the sweep under nsys, per-call pin / gap / consumer.
    Without one (the H200 here): Nsight Compute alone. One NVTX `call` range around pin -> sync
    -> consumer (the control's cell: L2P+OptMT of the headline family on the hottest profile),
    replayed whole (`--replay-mode app-range`) twice: once with PM sampling at the chip's
    shortest interval (L2 hit rate, DRAM throughput over time), and with `--timeline-totals` once
    more for the range's totals of the `l2` metric set. Writes timeline.csv, phases.csv (and
    range_metrics.csv).
    """
    from l2attr.profile import nsys as nsys_mod

    tools = tools or Tools()
    status = nsys_mod.probe_nsys(runner=tools.run, which=tools.which)
    if status.usable:
        return _run_nsys_timeline(s, console, tools, status)
    return _run_pm_timeline(s, console, tools, status.detail)


def _run_pm_timeline(s: ProfileSettings, console: Any, tools: Tools, why_not_nsys: str) -> int:
    from l2attr import atomic
    from l2attr.profile import pmsampling
    from l2attr.profile.metricsets import resolve_metrics
    from l2attr.rundir import RunDir
    from l2attr.schema import PHASES, TIMELINE
    from l2attr.vocab import NVTX_CALL_INCLUDE

    ncu = s.ncu or tools.which("ncu")
    if not ncu:
        raise UserError(f"no timeline: {why_not_nsys}, and ncu is not on PATH for the range-replay "
                        "timeline (install Nsight Compute or pass --ncu PATH)")
    chip = s.chip or detect_chip(tools.run, tools.which)
    profile = s.control_profile or hottest_profile(s.profiles)
    run = RunDir.create(s.out, s.name, {
        "kind": "timeline", "command": s.command, "config": s.cfg.to_dict(), "chip": chip,
        "method": "ncu app-range replay of one NVTX call range (pin -> sync -> consumer) with PM sampling",
        "nsys": why_not_nsys, "rung": CONTROL_RUNG, "family": s.control_family, "profile": profile,
        "status": "running"})
    child = child_command(s.cfg, [CONTROL_RUNG], [profile], L2State.NATURAL.value, 1, run.path / "child",
                          "timeline", [*s.extra, "--family", s.control_family, "--nvtx-calls"], tools.python)
    jobs = [("timeline", pmsampling.timeline_ncu_argv(child, run.path / "ncu" / "timeline", ncu,
                                                      NVTX_CALL_INCLUDE, chip=chip))]
    if s.timeline_totals:   # the range's totals of the l2 set: one more replay, ~5 passes
        metrics = resolve_metrics("l2", chip).metrics
        jobs.append(("range_metrics", pmsampling.range_metrics_ncu_argv(
            child, run.path / "ncu" / "range_metrics", ncu, NVTX_CALL_INCLUDE, metrics)))
    (run.path / "ncu").mkdir(parents=True, exist_ok=True)
    walls: dict[str, float] = {}
    for name, argv in jobs:
        console.rule(f"ncu: {name}")
        print(shlex.join(argv), flush=True)
        result = run_job(argv, tools.stream)
        result.name = name
        walls[name] = round(result.wall_s, 3)
        try:
            check_job(result, report_path(run.path / "ncu" / name), chip)
        except UserError as exc:
            run.update_manifest(status="failed", error=str(exc), wall_s=walls)
            raise
    pm = pmsampling.read_pm_report(report_path(run.path / "ncu" / "timeline"))
    phases = pmsampling.phases(pm.samples)
    run.write(TIMELINE, pm.samples)
    run.write(PHASES, phases)
    if s.timeline_totals:
        totals = pmsampling.read_range_metrics(report_path(run.path / "ncu" / "range_metrics"))
        atomic.write_csv(run.path / "range_metrics.csv", totals)
    run.update_manifest(status="done", wall_s=walls, warnings=pm.warnings,
                        ranges=pm.ranges.to_dict("records"), jobs=[{"name": n, "argv": a} for n, a in jobs],
                        **child_facts(run.path / "child"))
    console.print(phases.to_string(index=False), markup=False, highlight=False)
    for w in pm.warnings:
        console.print(f"warning: {w}", markup=False, highlight=False)
    console.print(f"wrote {run.path / TIMELINE.filename}, {PHASES.filename}"
                  + (", range_metrics.csv" if s.timeline_totals else ""), markup=False, highlight=False)
    return 0


def _run_nsys_timeline(s: ProfileSettings, console: Any, tools: Tools, status: Any) -> int:
    """The sweep under nsys, then per-call pin / gap / consumer times (timeline_nsys.csv)."""
    from l2attr import atomic
    from l2attr.profile import nsys as nsys_mod
    from l2attr.rundir import RunDir

    assert status.path is not None
    run = RunDir.create(s.out, s.name, {"kind": "timeline", "command": s.command, "config": s.cfg.to_dict(),
                                        "method": "nsys", "nsys": {"path": status.path, "version": status.version},
                                        "rungs": list(s.rungs), "profiles": list(s.profiles),
                                        "calls_per_cell": s.calls_per_cell, "status": "running"})
    child = child_command(s.cfg, s.rungs, s.profiles, "natural", s.calls_per_cell, run.path / "child",
                          "timeline", s.extra, tools.python)
    rep = run.path / "nsys" / "timeline"
    rep.parent.mkdir(parents=True, exist_ok=True)
    steps = (("record", nsys_mod.profile_argv(status.path, child, rep)),
             ("export", nsys_mod.export_argv(status.path, rep.with_suffix(".nsys-rep"), rep.with_suffix(".sqlite"))))
    for label, argv in steps:
        console.rule(f"nsys: {label}")
        print(shlex.join(argv), flush=True)
        result = run_job(argv, tools.stream)
        if result.returncode != 0:
            run.update_manifest(status="failed", error=f"nsys {label} exited with {result.returncode}")
            raise UserError(f"nsys {label} exited with status {result.returncode}; see its output above")
    calls = nsys_mod.read_timeline(rep.with_suffix(".sqlite"))
    atomic.write_csv(run.path / "timeline_nsys.csv", calls)
    run.update_manifest(status="done", timeline_calls=int(len(calls)))
    console.print(calls.to_string(index=False), markup=False, highlight=False)
    console.print(f"wrote {run.path / 'timeline_nsys.csv'}", markup=False, highlight=False)
    return 0


def render_summary(console: Any, metrics: pd.DataFrame) -> None:
    """Per family: the consumer grid and the DRAM lines (report.layer_b: the report's wording)."""
    from rich.table import Table

    from l2attr.analysis.attribution import l2_cells
    from l2attr.analysis.series import find_series, series_frame
    from l2attr.report.layer_b import consumer_grid, dram_lines, grid_title

    for ser in find_series(metrics):
        l2 = l2_cells(series_frame(metrics, ser))
        profiles, rows = consumer_grid(l2)
        if not rows:
            continue
        table = Table(title=f"{ser.title} · {grid_title()}")
        table.add_column("rung")
        for p in profiles:
            table.add_column(p, justify="right")
        for row in rows:
            table.add_row(*row)
        console.print(table)
        for line in dram_lines(l2):
            console.print(f"  {line}", markup=False, highlight=False)


__all__ = [
    "ProfileSettings", "Tools", "run_profile", "run_timeline", "render_summary", "validate_metric_names", "ncu_version",
    "NcuJob", "Plan", "JobResult", "plan_jobs", "make_plan", "child_command", "workload_flags",
    "hottest_profile", "stream_run", "run_job", "check_job", "detect_chip",
    "passes_summary", "job_condition",
    "DEFAULT_RUNGS", "CONTROL_RUNG",
]
