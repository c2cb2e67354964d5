"""One layer-B figure, one wording: `l2attr profile`'s summary, report.md and the README agree.

The expected cells are computed here by hand from the recorded H200 metrics.csv with plain
pandas (sum each consumer call's read hit / miss sectors and DRAM bytes over its kernels, rate per
call, median over calls), then looked for in the three texts. A second aggregation, a different
rounding or a renderer that drops a cell fails here.
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from l2attr.analysis import analyse, load_runs
from l2attr.commands.show import layer_b_summary
from l2attr.report.markdown import render_markdown

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "examples" / "20261130T231541Z-profile"
pytestmark = pytest.mark.skipif(not (RUN / "metrics.csv").is_file(), reason=f"{RUN} not committed")

HIT, MISS = "lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_read_lookup_miss.sum"
DRAM = "dram__bytes_read.sum"


def by_hand(metrics: pd.DataFrame, family: str, rung: str, profile: str) -> str:
    rows = metrics[(metrics["family"] == family) & (metrics["rung"] == rung) & (metrics["profile"] == profile)
                   & (metrics["role"] == "consumer") & (metrics["condition"] == "ladder")
                   & metrics["metric"].isin([HIT, MISS, DRAM])]
    per_call = rows.pivot_table(index="nvtx_range", columns="metric", values="value", aggfunc="sum")
    rate = (100 * per_call[HIT] / (per_call[HIT] + per_call[MISS])).median()
    return f"{rate:.1f} % / {per_call[DRAM].median() / 1e6:.1f} MB"


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    metrics = pd.read_csv(RUN / "metrics.csv")
    buf = io.StringIO()
    layer_b_summary(Console(file=buf, width=250, color_system=None), metrics)
    return {"cli": buf.getvalue(), "report.md": render_markdown(analyse(load_runs([RUN]))),
            "README.md": (ROOT / "README.md").read_text(), "metrics": metrics}


@pytest.mark.parametrize("family", ["artifact", "tuned"])
@pytest.mark.parametrize("rung", ["optmt", "l2p_optmt"])
@pytest.mark.parametrize("profile", ["reuse_high", "random"])
def test_cell_reads_the_same_everywhere(texts, family, rung, profile):
    cell = by_hand(texts["metrics"], family, rung, profile)
    for where in ("cli", "report.md", "README.md"):
        assert cell in texts[where], f"{family} {rung} {profile}: {cell} missing from {where}"


def test_control_line_reads_the_same_in_report_and_readme(texts):
    line = next(x for x in texts["report.md"].splitlines() if x.startswith("validity control"))
    assert "after pin+flush" in line
    assert line in texts["README.md"]


def test_by_hand_is_not_trivially_true(texts):
    """The pin changes the reuse_high cell: the check above compares distinct figures."""
    m = texts["metrics"]
    assert by_hand(m, "artifact", "optmt", "reuse_high") != by_hand(m, "artifact", "l2p_optmt", "reuse_high")
