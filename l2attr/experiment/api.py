"""`l2attr.Experiment`: the declaration (experiment/declare.py) with its verbs, time and profile.

Why a module of its own: the verbs need the runner and the profiler, which read the declaration;
keeping the declaration below both leaves no import loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from l2attr.experiment.declare import Declaration
from l2attr.experiment.profile import profile_experiment
from l2attr.experiment.run import time_experiment


@dataclass
class Experiment(Declaration):
    """One producer -> consumer pair, its conditions, and what l2attr does with it."""

    def time(self, repeats: int | None = None, out: Path | str | None = None,
             resume: Path | str | None = None, log: Callable[[str], None] = print,
             device: Any = None) -> Any:
        """Time every condition; a tidy DataFrame of exp_cells.csv, and `self.run_dir`."""
        return time_experiment(self, repeats=repeats, out=out, resume=resume, log=log, device=device)

    def profile(self, metrics: str = "l2", command: Sequence[str] | None = None,
                calls: int = 4, log: Callable[[str], None] = print, chip: str | None = None) -> Any:
        """Profile under Nsight Compute (application replay, cache control none): this script is
        re-entered as the child unless `command` names another; a tidy exp_metrics DataFrame."""
        return profile_experiment(self, metrics=metrics, command=command, calls=calls, log=log, chip=chip)
