"""Run the ladder under Nsight Compute: plan the ncu invocations, run them, import, judge.

Application replay reruns the whole child once per pass, so the plan keeps child runs few:
one ncu invocation profiles the whole rung x profile sweep, and two small one-cell invocations
form the validity control (l2p_optmt on the hottest selected profile, consumer right after the
pin vs. consumer after pin + L2 flush). If the control shows no clear difference, the profiler
setup erased the pin's effect and the sweep's numbers say nothing about L2 residency.
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

from l2attr.config import WorkloadConfig
from l2attr.errors import UserError
from l2attr.ladder import PROFILES, RUNGS
from l2attr.profile import ncu_errors
from l2attr.profile.metricsets import chip_for_compute_capability
from l2attr.profile.ncu_cmd import NcuOptions, build_ncu_argv, report_path
from l2attr.profile.ncu_import import control_condition

CONTROL_RUNG = "l2p_optmt"
# Preference order for "the consumer's hit rate": same-pass counts first (NOTES trap 4).
HIT_RATE_METRICS = (
    "derived:lts__t_sectors_op_read_hit_rate.pct",
    "derived:lts__t_sectors_hit_rate.pct",
    "lts__t_sector_op_read_hit_rate.pct",
    "lts__t_sector_hit_rate.pct",
)
DRAM_READ = "dram__bytes_read.sum"
PASSES = "profiler__replayer_passes"

# Verdict rule of the validity control ("clearly above noise").
MIN_HIT_GAIN_POINTS = 5.0
MIN_DRAM_REDUCTION = 0.10


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
    the ranges and be profiled as if it were the pin or the consumer. Timing under ncu means
    nothing anyway; layer A measures time.
    """
    return [python, "-m", "l2attr", "ladder", *workload_flags(cfg),
            "--rungs", ",".join(rungs), "--profiles", ",".join(profiles), "--l2", l2,
            "--repeats", "1", "--no-host-repeat", "--spin-us", "0", "--nvtx-last", str(nvtx_last),
            "--quiet", "--out", str(out), "--name", name, *extra]


def hottest_profile(profiles: Sequence[str]) -> str:
    """The selected profile with the most reuse (PROFILES is ordered hottest first)."""
    for p in PROFILES:
        if p in profiles:
            return p
    return profiles[0]


def plan_jobs(run_dir: Path, cfg: WorkloadConfig, rungs: Sequence[str], profiles: Sequence[str],
              calls_per_cell: int, control: bool = True, control_profile: str | None = None,
              extra: Sequence[str] = (), python: str = sys.executable) -> list[NcuJob]:
    if calls_per_cell < 1:
        raise UserError("--calls-per-cell must be at least 1 (it is how many table calls per cell are profiled)")
    ncu_dir, child_dir = run_dir / "ncu", run_dir / "child"
    jobs = [NcuJob("sweep", "ladder",
                   tuple(child_command(cfg, rungs, profiles, "natural", calls_per_cell, child_dir, "sweep",
                                       extra, python)),
                   ncu_dir / "sweep")]
    if control:
        prof = control_profile or hottest_profile(profiles)
        for name, l2 in (("control_after_pin", "natural"), ("control_after_flush", "flush_after_pin")):
            jobs.append(NcuJob(name, "control",
                               tuple(child_command(cfg, [CONTROL_RUNG], [prof], l2, calls_per_cell,
                                                   child_dir, name, extra, python)),
                               ncu_dir / name))
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


# -- judging -------------------------------------------------------------------------------------

def hit_rate_metric(df: pd.DataFrame) -> str | None:
    present = set(df["metric"])
    return next((m for m in HIT_RATE_METRICS if m in present), None)


CALL_KEYS = ("condition", "report", "cell", "rung", "profile", "l2_state", "table", "batch")
# (hits, misses, name of the rate) in order of preference: reads first, then all operations
COUNT_PAIRS = (
    ("lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_read_lookup_miss.sum",
     "derived:lts__t_sectors_op_read_hit_rate.pct"),
    ("lts__t_sectors_lookup_hit.sum", "lts__t_sectors_lookup_miss.sum", "derived:lts__t_sectors_hit_rate.pct"),
)
PCT_FALLBACK = ("lts__t_sector_op_read_hit_rate.pct", "lts__t_sector_hit_rate.pct")


def call_table(df: pd.DataFrame, role: str = "consumer") -> tuple[pd.DataFrame, str | None]:
    """One row per profiled call of `role`: every kernel of one NVTX range instance together.

    A range can hold several kernels (the torch rung's embedding_bag launches helpers), so
    counts are summed per call and the hit rate is recomputed from the summed hit and miss
    sectors; only without counts does it fall back to the mean of ncu's .pct over the kernels.
    Returns the table (hit_rate_pct, dram_read_bytes, kernels) and the hit-rate metric used.
    """
    sub = df[df["role"] == role]
    keys = [k for k in CALL_KEYS if k in sub.columns]
    present = set(sub["metric"])

    def per_call(metric: str, how: str = "sum") -> pd.Series:
        g = sub[sub["metric"] == metric].groupby(keys, dropna=False)["value"]
        return g.sum(min_count=1) if how == "sum" else g.mean()

    rate, used = None, None
    for hit, miss, name in COUNT_PAIRS:
        if hit in present and miss in present:
            h, m = per_call(hit), per_call(miss)
            rate, used = (100.0 * h / (h + m)).where((h + m) > 0), name
            break
    if rate is None:
        used = next((p for p in PCT_FALLBACK if p in present), None)
        rate = per_call(used, "mean") if used else None
    parts = {"hit_rate_pct": rate, "dram_read_bytes": per_call(DRAM_READ) if DRAM_READ in present else None,
             "kernels": sub.groupby(keys, dropna=False)["launch"].nunique() if "launch" in sub.columns else None}
    parts = {k: v for k, v in parts.items() if v is not None}
    if sub.empty or not parts:
        return pd.DataFrame(columns=[*keys, "hit_rate_pct", "dram_read_bytes", "kernels"]), used
    out = pd.concat(parts, axis=1).reset_index()
    for col in ("hit_rate_pct", "dram_read_bytes", "kernels"):
        if col not in out.columns:
            out[col] = float("nan")
    return out, used


def validity_control(df: pd.DataFrame, min_gain: float = MIN_HIT_GAIN_POINTS,
                     min_reduction: float = MIN_DRAM_REDUCTION) -> dict[str, Any]:
    """Does the consumer still see the pin's effect under this profiler setup?

    Rule: "clear" when the consumer's median hit rate (per profiled call) after the pin beats
    the one after pin + flush by >= min_gain points, its median DRAM read is >= min_reduction
    lower, and the hit-rate ranges of the two arms do not overlap (the gain is above the
    call-to-call noise). The H200 saw +15.6 points and -36 % DRAM under application replay, and
    +0.0 points under kernel replay.
    """
    calls, metric = call_table(df, "consumer")
    arms = {c: calls[calls["condition"] == c] for c in ("control_after_pin", "control_after_flush")}
    result: dict[str, Any] = {"rule": f"hit-rate gain >= {min_gain:g} points, DRAM-read reduction >= "
                                      f"{min_reduction:.0%}, and non-overlapping hit-rate ranges",
                              "hit_rate_metric": metric}
    if metric is None or any(a["hit_rate_pct"].dropna().empty for a in arms.values()):
        result.update(verdict="inconclusive", reason="control rows or hit-rate metric missing")
        return result
    stats = {}
    for name, arm in arms.items():
        hits, dram = arm["hit_rate_pct"].dropna(), arm["dram_read_bytes"].dropna()
        stats[name] = {"hit_rate_median": float(hits.median()), "hit_rate_min": float(hits.min()),
                       "hit_rate_max": float(hits.max()), "n": int(hits.size),
                       "dram_read_bytes_median": float(dram.median()) if not dram.empty else None}
    pin, flush = stats["control_after_pin"], stats["control_after_flush"]
    gain = pin["hit_rate_median"] - flush["hit_rate_median"]
    reduction = None
    if pin["dram_read_bytes_median"] is not None and flush["dram_read_bytes_median"]:
        reduction = 1.0 - pin["dram_read_bytes_median"] / flush["dram_read_bytes_median"]
    separated = pin["hit_rate_min"] > flush["hit_rate_max"]
    clear = gain >= min_gain and reduction is not None and reduction >= min_reduction and separated
    result.update(after_pin=pin, after_flush=flush, hit_rate_gain_points=gain,
                  dram_read_reduction=reduction, ranges_separated=separated,
                  verdict="clear" if clear else "not_clear")
    return result


def describe_control(vc: dict[str, Any]) -> str:
    if vc["verdict"] == "inconclusive":
        return f"validity control: inconclusive ({vc.get('reason', '')})"
    red = vc["dram_read_reduction"]
    pin, flush = vc["after_pin"], vc["after_flush"]
    dram = ""
    if red is not None:
        change = f"{red:.1%} less" if red >= 0 else f"{-red:.1%} more"
        dram = (f"; DRAM read {flush['dram_read_bytes_median'] / 1e6:.1f} MB after pin+flush vs "
                f"{pin['dram_read_bytes_median'] / 1e6:.1f} MB after pin ({change})")
    verdict = ("clearly above noise: the pin's L2 state survives this profiler setup"
               if vc["verdict"] == "clear" else
               "NOT clearly above noise: the profiler setup may erase the pin's effect, or the pin "
               "does not help this profile")
    return (f"validity control ({vc['hit_rate_metric']}): consumer hit rate "
            f"{flush['hit_rate_median']:.2f} % after pin+flush vs {pin['hit_rate_median']:.2f} % after pin "
            f"({vc['hit_rate_gain_points']:+.2f} points){dram} -> {verdict}")


def summary_frame(df: pd.DataFrame, rung_order: Iterable[str] = (), condition: str = "ladder",
                  l2_state: str = "natural") -> pd.DataFrame:
    """Consumer hit rate and DRAM MB per (rung, profile): medians over the profiled calls."""
    calls, _ = call_table(df, "consumer")
    calls = calls[calls["condition"] == condition] if "condition" in calls.columns else calls
    if "l2_state" in calls.columns:
        calls = calls[calls["l2_state"] == l2_state]
    rows = []
    for (rung, profile), g in calls.groupby(["rung", "profile"], sort=False):
        rows.append({"rung": rung, "profile": profile, "hit_rate_pct": g["hit_rate_pct"].median(),
                     "dram_read_MB": g["dram_read_bytes"].median() / 1e6, "calls": len(g)})
    out = pd.DataFrame(rows, columns=["rung", "profile", "hit_rate_pct", "dram_read_MB", "calls"])
    order = {r: i for i, r in enumerate(rung_order)}
    return out.sort_values("rung", key=lambda s: s.map(lambda r: order.get(r, len(order)))).reset_index(drop=True)


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
              python: str = sys.executable) -> Plan:
    jobs = plan_jobs(run_dir, cfg, rungs, profiles, calls_per_cell, control, control_profile, extra, python)
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
    calls_per_cell: int = 4
    out: Path = Path("runs")
    name: str = "profile"
    chip: str | None = None
    ncu: str | None = None
    opts: NcuOptions = field(default_factory=NcuOptions)
    control: bool = True
    control_profile: str | None = None
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
                         s.opts, ncu_exe, s.control, s.control_profile, s.extra, tools.python)
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
        "status": "running", "settings_warnings": warnings,
    }
    run = RunDir.create(s.out, s.name, manifest)
    plan = make_plan(run.path, s.cfg, s.rungs, s.profiles, s.calls_per_cell, mset.metrics, s.opts,
                     ncu_exe, s.control, s.control_profile, s.extra, tools.python)
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
    render_summary(console, summary_frame(imported.table, s.rungs), s.rungs, s.profiles)
    for w in imported.warnings:
        console.print(f"warning: {w}", markup=False, highlight=False)
    if s.control:
        console.print(describe_control(vc), markup=False, highlight=False)
    console.print(f"wrote {run.path / METRICS.filename}", markup=False, highlight=False)
    return 0


def run_timeline(s: ProfileSettings, console: Any, tools: Tools | None = None) -> int:
    """`profile --timeline`: the sweep under nsys, then per-call pin / gap / consumer times.

    Refuses with a clear message where nsys cannot make a report (the H200 here), pointing at
    the CUDA-event figures of `l2attr ladder`.
    """
    from l2attr import atomic
    from l2attr.profile import nsys as nsys_mod
    from l2attr.rundir import RunDir

    tools = tools or Tools()
    status = nsys_mod.probe_nsys(runner=tools.run, which=tools.which)
    if not status.usable:
        raise UserError(nsys_mod.timeline_unavailable(status))
    assert status.path is not None
    run = RunDir.create(s.out, s.name, {"kind": "timeline", "command": s.command, "config": s.cfg.to_dict(),
                                        "nsys": {"path": status.path, "version": status.version},
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
    atomic.write_csv(run.path / "timeline.csv", calls)
    run.update_manifest(status="done", timeline_calls=int(len(calls)))
    console.print(calls.to_string(index=False), markup=False, highlight=False)
    console.print(f"wrote {run.path / 'timeline.csv'}", markup=False, highlight=False)
    return 0


def render_summary(console: Any, summary: pd.DataFrame, rungs: Sequence[str], profiles: Sequence[str]) -> None:
    """Rows rung, columns profile: consumer hit rate and DRAM MB read (medians over profiled calls)."""
    from rich.table import Table

    table = Table(title="consumer: L2 hit rate / DRAM read (median over profiled calls)")
    table.add_column("rung")
    for p in profiles:
        table.add_column(p, justify="right")
    for r in rungs:
        cells = []
        for p in profiles:
            row = summary[(summary["rung"] == r) & (summary["profile"] == p)]
            if row.empty:
                cells.append("-")
            else:
                hit, mb = row.iloc[0]["hit_rate_pct"], row.iloc[0]["dram_read_MB"]
                hit_txt = "n/a" if pd.isna(hit) else f"{hit:.1f} %"
                mb_txt = "n/a" if pd.isna(mb) else f"{mb:.1f} MB"
                cells.append(f"{hit_txt} / {mb_txt}")
        table.add_row(r, *cells)
    console.print(table)


__all__ = [
    "ProfileSettings", "Tools", "run_profile", "run_timeline", "render_summary", "validate_metric_names", "ncu_version",
    "NcuJob", "Plan", "JobResult", "plan_jobs", "make_plan", "child_command", "workload_flags",
    "hottest_profile", "stream_run", "run_job", "check_job", "detect_chip", "validity_control",
    "describe_control", "summary_frame", "passes_summary", "hit_rate_metric", "job_condition", "call_table",
    "DEFAULT_RUNGS", "CONTROL_RUNG",
]
