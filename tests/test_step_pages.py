"""What the README block, examples/steps/runs/report.md, the HTML page and the CLI show of step runs
with measured edges, a CUDA-graph step and a sweep grid, on synthetic runs (tests/test_step_synthetic.py)
whose numbers are known by hand."""

from __future__ import annotations

import re

import pytest

from l2attr.analysis.step import analyse_step
from l2attr.cli import main
from l2attr.report.step_text import page_markdown, steps_markdown

from test_step_synthetic import make_run

NAT, COLD = {"produce": 10.0, "consume": 20.0}, {"produce": 12.0, "consume": 30.0}
ARMS = {"natural": 20.0, "rewarmed": 20.0, "edge_cold": 28.0, "cold": 30.0}


@pytest.fixture()
def runs(tmp_path):
    paths = [
        make_run(tmp_path, "layer-b1", NAT, COLD, facts={"series": "layer", "phase": "decode", "batch": 1}, edge_arms=ARMS),
        make_run(tmp_path, "layer-b16", NAT, {"produce": 10.0, "consume": 20.0}, step_us=80.0,
                 facts={"series": "layer", "phase": "decode", "batch": 16}),
        make_run(tmp_path, "layer-graph", NAT, COLD, graph=True, facts={"series": "layer", "phase": "graph", "batch": 1}),
    ]
    return tmp_path, [(p, analyse_step(p)) for p in paths]


def test_block_shows_measured_edges_graph_and_grid(runs):
    root, rs = runs
    text = steps_markdown(rs, root)
    # the measured edge: edge_cold - natural = 8 µs, control holds (rewarmed = natural)
    line = next(x for x in text.splitlines() if x.startswith("| mul#0 -> sum#1"))
    assert "+8.0" in line and "holds" in line and "faster" in line
    assert "Edges measured apart (synthetic arms" in text
    assert "CUDA graph step: natural = graph replays (synthetic)" in text and "2 of 2 replayed kernels" in text
    grid = text[text.index("Sweep grid `layer`"):]
    rows = [x for x in grid.splitlines() if x.startswith("| layer-")]
    assert [r.split(" | ")[0] for r in rows] == ["| layer-b1", "| layer-b16", "| layer-graph"]
    assert "| decode | 1 |" in rows[0] and "| decode | 16 |" in rows[1]
    # b1: 12 µs saved of a 40 µs step (30 %); b16: nothing saved
    assert re.search(r"\+(30\.0|29\.9\d)", rows[0]) and "mul -> sum +8.00 µs (faster)" in rows[0]
    assert "+0.00 [+0.00, +0.00]" in rows[1] and "below the study's 0.65 %" in rows[1]


def test_report_md_and_html_pages(runs, tmp_path):
    root, rs = runs
    page = page_markdown("T", rs)
    assert page.startswith("# T\n\n- layer-b1: ") and "## Sweep grids" in page
    assert "## Edges measured by selective eviction" in page and "## CUDA graph steps" in page
    out = tmp_path / "page.md"
    assert main(["report", *[str(p) for p, _ in rs], "--format", "md", "-o", str(out)]) == 0
    assert out.read_text().count("| mul#0 -> sum#1") == 1 and "## Sweep grids" in out.read_text()
    html = tmp_path / "page.html"
    assert main(["report", *[str(p) for p, _ in rs], "-o", str(html)]) == 0
    h = html.read_text()
    assert "Edges measured apart by selective eviction" in h and "Sweep grid layer" in h and "CUDA graph step" in h


def test_page_without_edges_grids_or_graphs_is_the_headlines(runs):
    root, rs = runs
    plain = [(p, a) for p, a in rs if p.name.endswith("layer-b16")]
    a = plain[0][1]
    a.manifest["step"]["facts"] = {}
    assert page_markdown("T", plain) == f"# T\n\n- {a.headline('layer-b16')}\n"


def test_cli_show_prints_the_measured_edges(runs, capsys):
    _, rs = runs
    assert main(["step", "--show", str(rs[0][0])]) == 0
    out = capsys.readouterr().out
    assert "edges measured by selective eviction" in out and "mul#0 -> sum#1" in out and "the edge saves" in out
    assert main(["step", "--show", str(rs[2][0])]) == 0
    assert "CUDA graph step" in capsys.readouterr().out


def test_readme_steps_block_generator_on_synthetic_runs(runs):
    import importlib.util
    from pathlib import Path

    root, rs = runs
    tool = Path(__file__).resolve().parents[1] / "tools" / "readme_experiments.py"
    spec = importlib.util.spec_from_file_location("readme_experiments_steps", tool)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    block = mod.steps_block(root)
    assert block == steps_markdown(rs, root, base="dlrm-step-no-pin")
    assert "| mul#0 -> sum#1" in block and "CUDA graph step" in block and "Sweep grid `layer`" in block


def test_step_times_compared_only_within_one_process(tmp_path):
    paths = [make_run(tmp_path, "dlrm-step-no-pin", NAT, COLD, step_us=100.0, command="bench"),
             make_run(tmp_path, "dlrm-step-inline", NAT, COLD, step_us=120.0, command="bench"),
             make_run(tmp_path, "dlrm-step-inline-marked", NAT, COLD, step_us=120.0, command="other process")]
    text = steps_markdown([(p, analyse_step(p)) for p in paths], tmp_path, base="dlrm-step-no-pin")
    tail = text[text.index("Untraced step time against `dlrm-step-no-pin` (same process; a pin inside the step is charged):"):]
    assert "- `dlrm-step-inline`: 120.0 µs against 100.0 µs: slower" in tail and "inline-marked" not in tail
