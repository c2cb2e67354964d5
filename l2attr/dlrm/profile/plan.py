"""What `l2attr profile` will run, decided before anything runs: the child ladder, the ncu jobs.

Application replay reruns the whole child once per pass, so the plan keeps child runs few:
one ncu invocation profiles the whole family x rung x profile sweep, and the validity control's
three arms (l2p_optmt on the hottest selected profile: consumer right after the pin, after pin +
L2 flush, after pin + persisting-L2 reset) run in the same child as extra cells (`ladder
--extra-cell`): a separate control child cost four more child starts (~50 s on the H200). The
after-pin arm is the sweep's own cell where the sweep has it (its rows are labelled twice, once
per use); `label_rows` gives each imported row its condition.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from l2attr.dlrm.config import WorkloadConfig
from l2attr.errors import UserError
from l2attr.dlrm.declare import HEADLINE_FAMILY, PROFILES, RUNGS
from l2attr.profile.ncu_cmd import NcuOptions, build_ncu_argv, report_path
from l2attr.profile.ncu_import import control_condition
from l2attr.vocab import LADDER_STATES, Command, Condition, Job, L2Condition, RungId, TimerKind

if TYPE_CHECKING:
    import pandas as pd

CONTROL_RUNG = RungId.L2P_OPTMT.value
# The control's three arms run in one child, state after state (the import labels each row's arm
# by the L2 state its range names: analysis.control).
# The validity control's arms: natural, and every ladder state that runs something between pin and
# consumer (vocab/conditions.py: `between`): flush_after_pin, reset_after_pin.
CONTROL_STATES = (L2Condition.NATURAL.value, *(s.value for s in LADDER_STATES if s.between))
# What a profiled child runs of the workload: one warm-up and one measured batch. Counters are read
# for the measured batch's calls (one per table); the L2 state a call meets is set by the calls
# just before it (each table-batch streams 40-150 MB through the 60 MB L2), which one batch
# before it provides. Under ncu every kernel launch of the child costs milliseconds, profiled or not,
# and application replay reruns the child once per pass: the ladder's 14 batches cost 7x the time.
CHILD_BATCHES = {"--warmup-batches": "1", "--batches": "1"}
# beside the child's run folders, one per ncu job: its first replay pass's check verdicts, for the later passes
CHECKS_MEMO = "checks-memo-{job}.json"
DEFAULT_RUNGS = tuple(r.name for r in RUNGS)
# Table calls profiled per cell by default: the last 6 of the measured batch. The fewest whose
# cell medians the committed fixed runs' per-call spread allows (profile/calls_rule.py,
# docs/layer-b.md#calls-per-cell; `python tools/compare/calls_per_cell.py` prints the rule's answer and
# tests/test_profile_calls_rule.py holds this constant to it). `--calls-per-cell 12`: every call.
DEFAULT_CALLS_PER_CELL = 6


def default_calls(cfg: WorkloadConfig) -> int:
    """The default calls per cell for a workload: the rule's count, at most one per table."""
    return min(DEFAULT_CALLS_PER_CELL, cfg.tables)


@dataclass
class ProfileSettings:
    """What `l2attr profile` was asked to do (the CLI maps flags onto this)."""

    cfg: WorkloadConfig
    metrics: str = "l2"
    rungs: Sequence[str] = DEFAULT_RUNGS
    profiles: Sequence[str] = PROFILES
    calls_per_cell: int | None = None     # None: default_calls(cfg), the last calls of the measured batch
    out: Path = Path("runs")
    name: str = Command.PROFILE.value
    chip: str | None = None
    ncu: str | None = None
    opts: NcuOptions = field(default_factory=NcuOptions)
    control: bool = True
    control_profile: str | None = None
    control_family: str = HEADLINE_FAMILY.value   # the control profiles one family: the headline one
    timeline_totals: bool = False         # --timeline: also the range's totals of the l2 set
    pm_max_passes: int = 1                # --timeline: ncu's --pm-sampling-max-passes (0: ncu decides)
    extra: Sequence[str] = ()
    validate_metrics: bool = True
    dry_run: bool = False
    keep_all: bool = False
    command: str = ""


@dataclass(frozen=True)
class NcuJob:
    """One ncu invocation: which child runs, where the report goes, how its rows are labelled."""

    name: str
    condition: str              # Condition.LADDER, or Job.CONTROL: rows labelled per arm by l2_state
    child: tuple[str, ...]
    output: Path                # report path without .ncu-rep

    @property
    def report(self) -> Path:
        return report_path(self.output)


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

    `--checks-memo`: the first replay pass checks every variant against torch and each later
    pass of the same job takes its verdicts (measure/check.py CheckMemo).
    `--repeats 1 --no-host-repeat`: each call is profiled once (a host-timed repeat would emit
    the same ranges again); `--spin-us 0`: the ladder's spin kernel would otherwise run inside
    the ranges and be profiled as if it were the pin or the consumer; `--no-bandwidth` and one
    warm-up + one measured batch (CHILD_BATCHES): timing under ncu means nothing, layer A
    measures time.
    """
    overrides = [x for flag, value in CHILD_BATCHES.items() for x in (flag, value)]
    return [python, "-m", "l2attr", Command.LADDER.value, *workload_flags(cfg), *overrides,
            "--rungs", ",".join(rungs), "--profiles", ",".join(profiles), "--l2", l2,
            "--repeats", "1", "--no-host-repeat", "--timer", TimerKind.SPIN.value, "--spin-us", "0", "--no-bandwidth",
            "--nvtx-last", str(nvtx_last), "--quiet", "--out", str(out), "--name", name,
            "--checks-memo", str(out / CHECKS_MEMO.format(job=name)), *extra]


def hottest_profile(profiles: Sequence[str]) -> str:
    """The selected profile with the most reuse (PROFILES is ordered hottest first)."""
    for p in PROFILES:
        if p in profiles:
            return p
    return profiles[0]


@dataclass(frozen=True)
class ControlCell:
    """The validity control's cell and where each of its arms runs in the sweep's child."""

    family: str
    profile: str
    natural_in_sweep: bool      # the sweep measures the cell's natural state itself

    @property
    def extra_states(self) -> list[str]:
        return [st for st in CONTROL_STATES if not (self.natural_in_sweep and st == L2Condition.NATURAL)]

    def extra_cell_flags(self) -> list[str]:
        return [x for st in self.extra_states for x in ("--extra-cell", f"{self.family}:{CONTROL_RUNG}:{self.profile}:{st}")]


def control_cell(rungs: Sequence[str], profiles: Sequence[str], control_profile: str | None,
                 control_family: str) -> ControlCell:
    prof = control_profile or hottest_profile(profiles)
    return ControlCell(control_family, prof, CONTROL_RUNG in rungs and prof in profiles)


def plan_jobs(run_dir: Path, cfg: WorkloadConfig, rungs: Sequence[str], profiles: Sequence[str],
              calls_per_cell: int | None, control: bool = True, control_profile: str | None = None,
              extra: Sequence[str] = (), python: str = sys.executable,
              control_family: str = HEADLINE_FAMILY.value) -> list[NcuJob]:
    if calls_per_cell is None:
        calls_per_cell = default_calls(cfg)
    if calls_per_cell < 1:
        raise UserError("--calls-per-cell must be at least 1 (it is how many table calls per cell are profiled)")
    ncu_dir, child_dir = run_dir / "ncu", run_dir / "child"
    sweep = Job.SWEEP.value
    folded = control_cell(rungs, profiles, control_profile, control_family).extra_cell_flags() if control else []
    return [NcuJob(sweep, Condition.LADDER.value,
                   tuple(child_command(cfg, rungs, profiles, L2Condition.NATURAL.value, calls_per_cell, child_dir, sweep,
                                       [*extra, *folded], python)),
                   ncu_dir / sweep)]


def job_argv(job: NcuJob, metrics: Sequence[str], opts: NcuOptions, ncu: str) -> list[str]:
    return build_ncu_argv(job.child, metrics, job.output, opts, ncu)


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
              python: str = sys.executable, control_family: str = HEADLINE_FAMILY.value) -> Plan:
    jobs = plan_jobs(run_dir, cfg, rungs, profiles, calls_per_cell, control, control_profile, extra, python,
                     control_family)
    return Plan(jobs, {j.name: job_argv(j, metrics, opts, ncu) for j in jobs})


def job_condition(job: NcuJob) -> str | Callable[[str], str]:
    """How the import labels a job's rows: the job's condition, or each control row by its arm
    (a separate control job, as runs made before the control was folded into the sweep had)."""
    return control_condition if job.condition == Job.CONTROL else job.condition


def label_rows(table: "pd.DataFrame", cell: ControlCell | None) -> "pd.DataFrame":
    """The folded sweep's rows with their conditions: rows of a control arm's L2 state are that arm;
    the control cell's natural rows are the after-pin arm, and stay ladder rows too when the
    sweep measures that cell (then they appear twice: a kernel, two uses)."""
    import pandas as pd

    if cell is None or table.empty:
        return table
    state = table["l2_state"].astype(str)
    arm = state.isin([st for st in CONTROL_STATES if st != L2Condition.NATURAL])
    out = table.copy()
    out.loc[arm, "condition"] = state[arm].map(control_condition)
    mine = ((table["family"].astype(str) == cell.family) & (table["rung"].astype(str) == CONTROL_RUNG)
            & (table["profile"].astype(str) == cell.profile) & (state == L2Condition.NATURAL.value))
    if not cell.natural_in_sweep:
        out.loc[mine, "condition"] = Condition.CONTROL_AFTER_PIN.value
        return out
    twice = table[mine].assign(condition=Condition.CONTROL_AFTER_PIN.value)
    return pd.concat([twice, out], ignore_index=True) if len(twice) else out


def control_inputs(s: ProfileSettings) -> dict[str, Any] | None:
    """The validity control as declared (rung, family, profile, arms): what the manifest records
    and analysis.control judges against metrics.csv; None when the run has no control."""
    if not s.control:
        return None
    cell = control_cell(s.rungs, s.profiles, s.control_profile, s.control_family)
    return {"rung": CONTROL_RUNG, "family": s.control_family, "profile": cell.profile,
            "l2_states": list(CONTROL_STATES), "job": Job.SWEEP.value,
            "after_pin": "the sweep's own cell" if cell.natural_in_sweep else "an extra cell of the sweep's child"}
