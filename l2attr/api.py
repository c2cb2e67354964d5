"""`l2attr.Experiment`: the frozen declaration (experiment/declare.py) with its verbs, time and profile.

Why a module at the top floor: `time()` returns a judged result (analysis/result.py), and the
engine under l2attr/experiment never imports the readers; the verbs join the two here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from l2attr.analysis.result import ExperimentResult, LadderResult
from l2attr.experiment.declare import Declaration
from l2attr.experiment.profile import profile_experiment
from l2attr.experiment.run import time_experiment
from l2attr.schema import EXP_CELLS


@dataclass(frozen=True)
class Experiment(Declaration):
    """One producer -> consumer pair, its conditions, and what l2attr does with it. Frozen:
    running it never changes it; what a run produced is its result."""

    def time(self, repeats: int | None = None, out: Path | str | None = None,
             resume: Path | str | None = None, log: Callable[[str], None] = print,
             device: Any = None) -> ExperimentResult:
        """Time every condition; `.cells` (exp_cells.csv), `.verdict`, `.run_dir`, and a repr
        that prints the headline with its interval. Empty in the Nsight Compute child."""
        path = time_experiment(self, repeats=repeats, out=out, resume=resume, log=log, device=device)
        return ExperimentResult.from_run(path) if path is not None else ExperimentResult.empty(list(EXP_CELLS.columns))

    def profile(self, metrics: str = "l2", command: Sequence[str] | None = None,
                calls: int = 4, log: Callable[[str], None] = print, chip: str | None = None,
                run: ExperimentResult | Path | str | None = None) -> Any:
        """Profile under Nsight Compute (application replay, cache control none): this script is
        re-entered as the child unless `command` names another; a tidy exp_metrics DataFrame.
        `run`: a timing result (or its run dir) to add the metrics to, else a new run dir."""
        where = run.run_dir if isinstance(run, ExperimentResult) else run
        return profile_experiment(self, metrics=metrics, command=command, calls=calls, log=log, chip=chip,
                                  run_dir=Path(where) if where is not None else None)


def ladder(*flags: str, out: Path | str = "runs") -> LadderResult:
    """Run `l2attr ladder FLAGS` (the same parser, checks and run) and judge its run dir:
    `l2attr.ladder("--family", "artifact")` returns a `LadderResult` (`.cells`, `.verdict`,
    `.run_dir`, and a repr that prints the headline with its interval).

    Why through the command: the ladder's options are its command line (README, `l2attr ladder
    -h`); one parser keeps the two spellings from drifting. The new run dir is the one folder under
    `out` that the command added (`--resume DIR` judges DIR)."""
    from l2attr.cli import main
    from l2attr.errors import UserError
    from l2attr.vocab import Command

    args = list(flags)
    if "--resume" in args:
        target = Path(args[args.index("--resume") + 1])
    else:
        root = Path(out)
        before = set(root.iterdir()) if root.is_dir() else set()
        args += ["--out", str(root)]
    code = main([Command.LADDER.value, *args])
    if code != 0:
        raise UserError(f"l2attr ladder {' '.join(flags)} ended with exit status {code}")
    if "--resume" not in args:
        new = sorted(p for p in root.iterdir() if p.is_dir() and p not in before)
        if len(new) != 1:
            raise UserError(f"{root}: expected one new run dir from the ladder, found {len(new)}")
        target = new[0]
    return LadderResult.from_run(target)
