"""`l2attr.Experiment` (re-exported by l2attr/api.py): the frozen declaration of declare.py with its
verbs, time and profile. Why a module above the kind's stages: each verb returns what a run
produced, read back and judged (result.py), and the measurement under it never imports a reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from l2attr.experiment.declare import Declaration
from l2attr.experiment.measure import time_experiment
from l2attr.experiment.profile import profile_experiment
from l2attr.experiment.result import ExperimentResult
from l2attr.schema import EXP_CELLS
from l2attr.vocab import Command


@dataclass(frozen=True)
class Experiment(Declaration):
    """One producer -> consumer pair, its conditions, and what l2attr does with it. Frozen:
    running it never changes it; what a run produced is its result."""

    def time(self, repeats: int | None = None, out: Path | str | None = None,
             resume: Path | str | None = None, log: Callable[[str], None] = print,
             device: Any = None) -> ExperimentResult:
        """Time every condition; `.cells` (exp_cells.csv), `.verdict`, `.run_dir`, and a repr
        that prints the headline with its interval. Empty in the Nsight Compute child."""
        if resume is not None:         # the typed contract before anything is built (integrity/manifest.py)
            from l2attr.integrity.manifest import check_manifest
            from l2attr.rundir import open_for_resume

            open_for_resume(Path(resume), Command.EXPERIMENT.value, check_manifest)
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
