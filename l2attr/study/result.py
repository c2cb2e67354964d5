"""What `l2attr.ladder()` returns (l2attr/api.py): one ladder run judged as `l2attr report` judges
it, read through the study's analysis (study.py) and the ladder's answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd


@dataclass(frozen=True)
class LadderResult:
    """One EmbeddingBag ladder run, judged as `l2attr report` judges it: `.cells` layer A's ladder
    table (every L2 state), `.verdict` one row per family x rung, `.run_dir` the run."""

    cells: pd.DataFrame
    verdict: pd.DataFrame
    run_dir: Path

    @classmethod
    def from_run(cls, run_dir: Path) -> "LadderResult":
        from l2attr.analysis import load_runs
        from l2attr.study import analyse

        an = analyse(load_runs([Path(run_dir)]))
        return cls(an.ladder, an.verdict, Path(run_dir))

    def headline(self) -> str:
        """The study's one-line answer, the string the report's banner shows."""
        from l2attr.ladders.analyse.answer import headline, pin_answer

        return headline(pin_answer(self.verdict), self.verdict)

    def __repr__(self) -> str:
        return (f"<LadderResult: {len(self.cells)} cells>\n{self.headline() or 'no verdict'}\n"
                f"  run dir: {self.run_dir}")
