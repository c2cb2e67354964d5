"""The ladder table `l2attr ladder` prints, rendered from the committed H200 run."""

from __future__ import annotations

import pandas as pd
import pytest
from rich.console import Console

from l2attr.measure.present import ladder_table
from tests.conftest import EXAMPLES


def _bench_cells() -> pd.DataFrame:
    runs = sorted(EXAMPLES.glob("*-bench/cells.csv"))
    if not runs:
        pytest.skip("no committed ladder run under examples/")
    return pd.read_csv(runs[-1])


def _render(cells: pd.DataFrame) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(ladder_table(cells))
    return console.export_text()


def test_ladder_table_shows_each_consumer_median_and_speedups():
    cells = _bench_cells()
    text = _render(cells)
    cons = cells[cells.quantity == "consumer"].set_index(["rung", "profile"]).median_us
    kern = cells[cells.quantity == "kernels"].set_index(["rung", "profile"]).median_us
    line = next(l for l in text.splitlines() if l.strip().startswith("│ L2P+OptMT"))
    base, l2p = cons[("baseline", "reuse_high")], cons[("l2p_optmt", "reuse_high")]
    charged = base / kern[("l2p_optmt", "reuse_high")]
    assert f"{l2p:.1f}  ({base / l2p:.2f}×, {charged:.2f}×)" in line
    for profile in ("reuse_high", "reuse_medium", "reuse_low", "random"):
        assert profile in text


def test_missing_cells_show_a_dash():
    cells = _bench_cells()
    cells = cells[~((cells.rung == "optmt") & (cells.profile == "random"))]
    line = next(l for l in _render(cells).splitlines() if l.strip().startswith("│ OptMT"))
    assert "—" in line
