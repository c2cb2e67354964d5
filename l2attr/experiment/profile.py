"""Profile an experiment under Nsight Compute without erasing the L2 state it measures.

Application replay with cache control none (the only setup under which a consumer still sees
the producer's lines; kernel replay and `--cache-control all` erase them: docs/facts.md#ncu-replay). Application
replay re-runs the whole process per pass, so the child is a process: the user's script re-entered
(the default: `sys.argv`), `python -m l2attr experiment child MODULE:ATTR`, or any command that
marks its kernels with `l2attr.annotate`. Every condition of the experiment runs in the one child,
one after the other (so the validity control's arms share its passes); kernels are matched to
roles, conditions and calls by their NVTX range in l2attr's domain.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import pandas as pd

from l2attr.errors import UserError
from l2attr.annotation import child_env, child_spec, environment, range_context
from l2attr.measure.cell import run_repeat
from l2attr.rundir import RunDir, command_line
from l2attr.schema import EXP_METRICS
from l2attr.vocab import Ncu, RepeatMode, Command, TimerKind
from l2attr.names import EXPERIMENT_INCLUDE, parse_experiment_range

if TYPE_CHECKING:
    from l2attr.experiment.declare import Declaration as Experiment

Runner = Callable[[Sequence[str], Callable[[str], None]], int]


def run_child(exp: "Experiment", calls: int, warmup: int) -> None:
    """The child's side: every condition's profiled calls, NVTX ranges on the measured ones."""
    from l2attr.measure.verbs import Device

    dev = Device(TimerKind.SPIN, spin_us=0.0)
    ops = exp.ops()
    for cond in exp.conditions:
        run_repeat(dev, lambda i: ops, cond, RepeatMode.PROFILE, calls + 1, warmup,
                   ranges=range_context(exp.name, cond.value), ranges_from=1)
    dev.sync()


def script_command() -> list[str]:
    """This process again, as a command: what application replay can re-run."""
    script = sys.argv[0] if sys.argv else ""
    if not script or script == "-c" or not Path(script).is_file():
        raise UserError("this process cannot be re-run under Nsight Compute (a notebook or "
                        "`python -c`): put the experiment in a script, or pass command=[...] / "
                        "use `l2attr experiment profile MODULE:ATTR`")
    return [sys.executable, script, *sys.argv[1:]]


def metrics_frame(raw: pd.DataFrame, experiment: str | None = None) -> pd.DataFrame:
    """Imported report rows -> exp_metrics rows: identity from the experiment range grammar;
    a user's bare annotate() ranges get their launch order per (experiment, role) as call."""
    ident = raw["nvtx_range"].map(parse_experiment_range).apply(pd.Series)
    df = pd.concat([raw.drop(columns=[c for c in ("role", "condition") if c in raw]), ident], axis=1)
    df = df[df["experiment"] != ""]
    if experiment is not None:
        df = df[df["experiment"] == experiment]
    if df.empty:
        return pd.DataFrame(columns=list(EXP_METRICS.columns))
    bare = df["call"].isna()
    if bare.any():
        order = df[bare].groupby(["experiment", "role"])["launch"].rank(method="dense").astype(int) - 1
        df.loc[bare, "call"] = order
    df["call"] = df["call"].astype(int)
    df["condition"] = df["condition"].fillna("").astype(str)
    return df[list(EXP_METRICS.columns)].reset_index(drop=True)


def ncu_argv(command: Sequence[str], metrics: Sequence[str], output: Path, ncu: str = "ncu") -> list[str]:
    from l2attr.profile.ncu_cmd import NcuOptions, build_ncu_argv

    opts = NcuOptions(nvtx_include=(EXPERIMENT_INCLUDE,), app_replay_match=Ncu.ALL.value)
    return build_ncu_argv(list(command), metrics, output, opts, ncu)


def profile_command(command: Sequence[str], run: RunDir, metrics: str = "l2", env: dict[str, str] | None = None,
                    experiment: str | None = None, chip: str | None = None, runner: Runner | None = None,
                    ncu: str = "ncu", log: Callable[[str], None] = print) -> pd.DataFrame:
    """ncu over `command` into `run`/ncu, imported to exp_metrics.csv (the parent's side)."""
    from l2attr.profile.metricsets import resolve_metrics
    from l2attr.profile.ncu_import import read_report
    from l2attr.profile.runner import QuietLog, check_job, run_job, stream_run
    from l2attr.profile.tools import detect_chip

    chip = chip or detect_chip()
    mset = resolve_metrics(metrics, chip)
    names = mset.metrics
    output = run.path / "ncu" / (experiment or "annotated")
    output.parent.mkdir(parents=True, exist_ok=True)
    argv = ncu_argv(command, names, output, ncu)
    with environment(env or {}):
        result = run_job("ncu", argv, QuietLog(log), runner or stream_run)
    report = output.with_suffix(".ncu-rep")
    check_job(result, report, chip)
    imported = read_report(report, condition="")
    frame = metrics_frame(imported.table, experiment)
    if frame.empty:
        raise UserError(f"{report}: no kernel inside an l2attr experiment range "
                        f"{'for ' + experiment if experiment else ''}".rstrip())
    run.write(EXP_METRICS, frame)
    run.update_manifest(profile={"ncu_argv": argv, "metrics": metrics, "chip": chip, "report": str(report.name),
                                 "warnings": imported.warnings, "command": list(command),
                                 "wall_s": round(result.wall_s, 2)})
    log(f"profiled {frame['launch'].nunique()} kernels ({metrics}) -> {run.path / EXP_METRICS.filename}")
    return frame


def profile_experiment(exp: "Experiment", metrics: str = "l2", command: Sequence[str] | None = None,
                       calls: int = 4, log: Callable[[str], None] = print, runner: Runner | None = None,
                       chip: str | None = None, run_dir: Path | None = None) -> pd.DataFrame:
    """Parent: run the child under ncu and import; child: run the profiled calls and exit."""
    spec = child_spec()
    if spec is not None:
        if spec.get("experiment") == exp.name:
            run_child(exp, int(spec.get("calls", calls)), int(spec.get("warmup", 2)))
            raise SystemExit(0)
        return pd.DataFrame(columns=list(EXP_METRICS.columns))   # another experiment's child
    cmd = list(command) if command is not None else script_command()
    if run_dir is not None:
        run = RunDir.open(run_dir)
    else:
        run = RunDir.create(Path(exp.out), exp.name, {"kind": Command.EXPERIMENT.value, "experiment": exp.declaration(),
                                                      "command": command_line()})
    return profile_command(cmd, run, metrics, child_env(exp.name, calls, 2), exp.name, chip, runner, log=log)
