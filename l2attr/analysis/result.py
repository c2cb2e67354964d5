"""What `Experiment.time()` returns (l2attr/api.py): the measured cells, their verdict and the run dir
(what `l2attr.ladder()` returns is the study's: l2attr/study/result.py).

Why an object of its own: the declaration stays a frozen description of the pair, and what one
run produced (its directory, its repeats, its judgement) lives here, so timing the same
declaration twice gives two results and changes nothing in between.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd


@dataclass(frozen=True)
class ExperimentResult:
    """One timing run: `.cells` the tidy exp_cells table, `.verdict` one row per experiment
    (analysis/experiment.py), `.run_dir` where it was written (None in the profiling child)."""

    cells: pd.DataFrame
    verdict: pd.DataFrame
    run_dir: Path | None

    @classmethod
    def from_run(cls, run_dir: Path) -> "ExperimentResult":
        """Read a written run back and judge it, the same path `l2attr report` takes."""
        from l2attr.analysis.experiment_load import analyse_experiment, load_experiment

        an = analyse_experiment(load_experiment(run_dir))
        return cls(an.run.cells, an.verdict, Path(run_dir))

    @classmethod
    def empty(cls, columns: list[str]) -> "ExperimentResult":
        """The profiling child's result: nothing was timed."""
        return cls(pd.DataFrame(columns=columns), pd.DataFrame(), None)

    def headlines(self) -> list[str]:
        """One sentence per experiment, each with its speedup and interval."""
        from l2attr.analysis.experiment import headline

        return [headline(row) for row in self.verdict.to_dict("records")]

    def __repr__(self) -> str:
        lines = self.headlines() or ["nothing timed (the Nsight Compute child measures nothing)"]
        where = f"  run dir: {self.run_dir}" if self.run_dir is not None else ""
        return "\n".join([f"<ExperimentResult: {len(self.cells)} cells>", *lines] + ([where] if where else []))
