"""One layer-B figure, one wording: `l2attr profile`'s summary, report.md and the README's results block
say the same number in the same place.

On a hand-made profile run (helpers_rundirs: the read hit rate of every call is exactly the table's
value, and each cell's four calls carry DRAM bytes x 0.98, 1.0, 1.01, 1.03, so the median is x 1.005),
the cell's expected text is worked out by hand and looked for at its own row (rung) and column
(profile) of the consumer grid in each text: a second aggregation, a different rounding, a renderer
that drops or moves a cell fails here.
"""

from __future__ import annotations

import io
import re

import pytest
from helpers_rundirs import L2_CONSUMER, write_ladder_run, write_profile_run
from rich.console import Console

from l2attr.study import analyse, load_runs
from l2attr.commands.profile_show import layer_b_summary
from l2attr.report.markdown import render_markdown, results_markdown
from l2attr.rundir import RunDir
from l2attr.schema import METRICS

# (rung, profile) -> the cell's text, by hand from helpers_rundirs.L2_CONSUMER
BY_HAND = {
    ("optmt", "reuse_high"): "88.5 % / 11.9 MB",        # 11.8e6 x 1.005 = 11.859e6
    ("l2p_optmt", "reuse_low"): "48.0 % / 78.4 MB",     # 78.0e6 x 1.005 = 78.39e6
    ("baseline", "random"): "30.0 % / 145.7 MB",       # 145.0e6 x 1.005 = 145.725e6
}


def test_the_by_hand_figures_follow_from_the_helper_table() -> None:
    for (rung, profile), text in BY_HAND.items():
        rate, dram = L2_CONSUMER[profile][rung]
        assert text == f"{rate:.1f} % / {dram * 1.005 / 1e6:.1f} MB"


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("layer_b")
    ladder, profile = write_ladder_run(root), write_profile_run(root)
    buf = io.StringIO()
    layer_b_summary(Console(file=buf, width=250, color_system=None), RunDir.open(profile).read(METRICS))
    an = analyse(load_runs([ladder, profile]))
    return {"cli": buf.getvalue(), "report.md": render_markdown(an), "README block": results_markdown(an)}


def grid_cell(text: str, rung: str, profile: str) -> str:
    """The cell at (rung, profile) of the first consumer grid in `text` (Markdown or rich's box table)."""
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines)
                  if re.match(r"^\s*[|│┃]\s*rung\s*[|│┃]", line) and profile in line)
    cols = [c.strip() for c in re.split(r"[|│┃]", lines[header])]
    for line in lines[header + 1:]:
        cells = [c.strip() for c in re.split(r"[|│┃]", line)]
        if len(cells) == len(cols) and cells[1] == rung:
            return cells[cols.index(profile)]
    raise AssertionError(f"no row {rung} under the grid header of {profile}")


@pytest.mark.parametrize("where", ["cli", "report.md", "README block"])
@pytest.mark.parametrize("cell", list(BY_HAND), ids=lambda c: "/".join(c))
def test_cell_reads_the_same_at_its_place(texts: dict[str, str], where: str, cell: tuple[str, str]) -> None:
    assert grid_cell(texts[where], *cell) == BY_HAND[cell]


def test_control_line_is_one_line_in_report_and_readme_block(texts: dict[str, str]) -> None:
    lines = [x for x in texts["report.md"].splitlines() if x.startswith("validity control")]
    assert len(lines) == 1 and "after pin+flush" in lines[0]
    assert lines[0] in texts["README block"].splitlines()


def test_grid_cell_finds_a_moved_cell_wrong() -> None:
    """The parser reads the column by its header: swapping two columns' values is caught."""
    text = "| rung | a | b |\n|---|---:|---:|\n| optmt | 1 % / 2 MB | 3 % / 4 MB |\n"
    assert grid_cell(text, "optmt", "b") == "3 % / 4 MB" and grid_cell(text, "optmt", "a") == "1 % / 2 MB"
    with pytest.raises(AssertionError):
        grid_cell(text, "l2p_optmt", "a")
