"""What `l2attr profile` prints beside the files it writes: its progress on a rich console and the
layer-B grid with its DRAM lines, in the report's wording (report.layer_b). The draft of issue 51
(docs/house/README.md) sends `ConsoleLog` to core/ and `layer_b_summary` to the profile kind's
section.
"""

from __future__ import annotations

import sys

import pandas as pd
from rich.console import Console
from rich.table import Table

from l2attr.analysis.calls import l2_cells
from l2attr.analysis.series import find_series, series_frame
from l2attr.report.layer_b import consumer_grid, dram_lines, grid_title


class ConsoleLog:
    """A profile run's progress on a rich console: lines, a rule per child tool, its raw output."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def line(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False)

    def rule(self, title: str) -> None:
        self.console.rule(title)

    def stream(self, text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()


def layer_b_summary(console: Console, metrics: pd.DataFrame) -> None:
    """Per family: the consumer grid and the DRAM lines (report.layer_b: the report's wording)."""
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
