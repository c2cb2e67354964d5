"""The ladder tables `l2attr ladder` prints: one per series, numbers from hand-sized cells."""

from __future__ import annotations

import pandas as pd
from rich.console import Console

from l2attr.ladders.section import ladder_tables
from tests.helpers_rundirs import tiny_cells


def _render(cells: pd.DataFrame) -> str:
    console = Console(width=200, record=True, color_system=None)
    for t in ladder_tables(cells):
        console.print(t)
    return console.export_text()


CELLS = {("baseline", "consumer"): 100.0, ("baseline", "consumer@artifact"): 110.0,
         ("baseline", "kernels"): 100.0, ("optmt", "consumer"): 90.0, ("l2p_optmt", "consumer"): 80.0,
         ("l2p_optmt", "consumer@artifact"): 88.0, ("l2p_optmt", "pin"): 30.0, ("l2p_optmt", "kernels"): 125.0}


def test_line_shows_consumer_median_artifact_timer_and_charged_speedups():
    text = _render(tiny_cells(CELLS))
    assert "artifact kernels, element pin" in " ".join(text.split())   # the series is named
    line = next(l for l in text.splitlines() if l.strip().startswith("│ L2P+OptMT"))
    # 110 / 88 = 1.25 with the artifact's timer; 100 / 125 = 0.80 with pin + consumer charged
    assert "80.0  (1.25× / 0.80×)" in line
    base = next(l for l in text.splitlines() if l.strip().startswith("│ baseline"))
    assert "100.0" in base and "×" not in base


def test_missing_speedup_shows_a_dash():
    text = _render(tiny_cells(CELLS))
    line = next(l for l in text.splitlines() if l.strip().startswith("│ OptMT"))
    assert "90.0  (— / 1.11×)" in line                         # no artifact-timer cell for OptMT


def test_one_table_per_family():
    both = pd.concat([tiny_cells(CELLS), tiny_cells(CELLS).assign(family="tuned",
                     pin=lambda d: d["pin"].replace("element", "line"))], ignore_index=True)
    text = " ".join(_render(both).split())
    assert text.index("artifact kernels, element pin") < text.index("tuned kernels, line pin")
