"""What the README block, examples/steps/runs/report.md, the HTML page and the CLI show of step runs
with measured edges, a CUDA-graph step and a sweep grid, on synthetic runs (tests/test_step_synthetic.py)
whose numbers are known by hand."""

from __future__ import annotations

import copy
import re

import pytest

from l2attr.steps.analyse.answer import StepAnswer, analyse_step
from l2attr.cli import main
from l2attr.steps.section.text import anchors, index_columns, index_layout, page_markdown, steps_markdown

from test_step_synthetic import make_run

NAT, COLD = {"produce": 10.0, "consume": 20.0}, {"produce": 12.0, "consume": 30.0}
ARMS = {"natural": 20.0, "rewarmed": 20.0, "edge_cold": 28.0, "cold": 30.0}


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    """The three runs written and analysed once for the module (the tests only read the folder)."""
    root = tmp_path_factory.mktemp("steps")
    paths = [
        make_run(root, "layer-b1", NAT, COLD, facts={"series": "layer", "phase": "decode", "batch": 1}, edge_arms=ARMS),
        make_run(root, "layer-b16", NAT, {"produce": 10.0, "consume": 20.0}, step_us=80.0,
                 facts={"series": "layer", "phase": "decode", "batch": 16}),
        make_run(root, "layer-graph", NAT, COLD, graph=True, facts={"series": "layer", "phase": "graph", "batch": 1}),
    ]
    return root, [(p, StepAnswer.from_run(p)) for p in paths]


@pytest.fixture()
def runs(analysed):
    """Each test its own copy of the answers (one edits a manifest)."""
    root, rs = analysed
    return root, copy.deepcopy(rs)


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
    # a clean saving over the graph replay is no answer to the study (activations, of the eager step):
    # without a matched arm the study's column says so, and every share's header names its denominator
    assert "+0.00 [+0.00, +0.00]" in rows[1] and "not measured (no write-back-matched arm)" in rows[1]
    header = next(x for x in grid.splitlines() if x.startswith("| run |"))
    assert "clean saving, % of the graph replay" in header and "below the study" not in rows[1]


def test_report_md_opens_with_one_index_table_linked_to_each_section(runs, tmp_path):
    root, rs = runs
    page = page_markdown("T", rs)
    lines = page.splitlines()
    of = rs[0][1].index_row()["denominator"]                 # what every share is of: said once, above the table
    assert lines[:6] == ["# T", "", f"Share of: {of}.", "", "| step | share [95 % CI] | judgement |", "|---|---:|---|"]
    ids = anchors([p for p, _ in rs])
    # b1: cold 42 against natural 30 µs of kernels per step: +40 %, every step pair alike
    assert lines[6] == f"| [layer-b1](#{ids[0]}) | +40.00 % [+40.00, +40.00] | faster |"
    assert lines[7].startswith(f"| [layer-b16](#{ids[1]}) | +0.00 % [+0.00, +0.00] |") and len(lines) > 10
    assert not lines[9].startswith("|")                      # one table, then the sections
    for (p, a), slug in zip(rs, ids):                         # every link lands on its section
        assert page.index(f'<a id="{slug}"></a>\n\n## {a.name}\n') > page.index(lines[8])
    assert page.count("| mul#0 -> sum#1") == 1 and "## Sweep grids" in page and "CUDA graph step" in page
    out = tmp_path / "page.md"
    assert main(["report", *[str(p) for p, _ in rs], "--format", "md", "-o", str(out)]) == 0
    assert out.read_text() == page.replace("# T", "# What is inter-kernel L2 reuse worth in a step? (l2attr step)", 1)


def test_report_html_index_first_then_each_step_folded(runs, tmp_path, capsys):
    root, rs = runs
    html = tmp_path / "page.html"
    assert main(["report", *[str(p) for p, _ in rs], "-o", str(html)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"wrote {html}") and out[1] == f"share of: {rs[0][1].index_row()['denominator']}"
    assert out[2].split() == ["step", "share", "[95", "%", "CI]", "judgement", "run", "dir"]
    assert [x.split()[0] for x in out[3:]] == ["layer-b1", "layer-b16", "layer-graph"]
    h = html.read_text()
    assert h.index('<table class="data index">') == h.index("<table")             # the index is the first table
    for (p, a), slug in zip(rs, anchors([p for p, _ in rs])):
        assert f'<a href="#{slug}">{a.name}</a>' in h
        card = h[h.index(f'<section class="card" id="{slug}">'):]
        assert card.startswith(f'<section class="card" id="{slug}"><details class="fold"><summary><h2>{a.name} ')
    assert "Edges measured apart by selective eviction" in h and "Sweep grid layer" in h and "CUDA graph step" in h
    assert h.count("<details") == h.count("</details>") and "<details open" not in h


def test_index_columns_render_whatever_keys_the_rows_hold():
    """A key with _lo/_hi is one interval column (% where it names a share or the activations'),
    any other key a column of its own, run_dir the link; a column n/a or not measured in every row
    is left out."""
    nan = float("nan")
    rows = [{"step": "a", "share": 0.1, "share_lo": 0.05, "share_hi": 0.2, "denominator": "kernel time",
             "activations": -0.01, "activations_lo": -0.02, "activations_hi": 0.0, "versus_study": "below it",
             "saving_us": 3.0, "saving_us_lo": 2.0, "saving_us_hi": 4.0, "eager_denominator": None,
             "judgement": "within_noise", "run_dir": "/x/a"},
            {"step": "b", "share": nan, "share_lo": nan, "share_hi": nan, "denominator": "kernel time",
             "activations": nan, "activations_lo": nan, "activations_hi": nan, "versus_study": "not measured",
             "judgement": "not_measured", "run_dir": "/x/b"}]
    cols = index_columns(rows)
    assert [c.header for c in cols] == ["step", "share [95 % CI]", "share of", "activations' share [95 % CI]",
                                        "against the study", "saving us [95 % CI]", "judgement"]
    assert [c.text(rows[0]) for c in cols] == ["a", "+10.00 % [+5.00, +20.00]", "kernel time", "-1.00 % [-2.00, +0.00]",
                                               "below it", "+3.00 [+2.00, +4.00]", "within_noise"]
    assert [c.text(rows[1]) for c in cols] == ["b", "n/a", "kernel time", "n/a", "not measured", "n/a", "not measured"]
    assert [c.right for c in cols] == [False, True, False, True, False, True, False] and [c.link for c in cols][:2] == [True, False]
    assert [c.key for c in index_columns(rows[1:])] == ["step", "denominator"]      # n/a everywhere: left out


def test_words_every_row_shares_are_said_once_above_the_index():
    rows = [{"step": s, "share": 0.1, "share_lo": 0.0, "share_hi": 0.2, "denominator": "the eager step",
             "judgement": "faster", "run_dir": ""} for s in "ab"]
    cols, said = index_layout(rows)
    assert [c.key for c in cols] == ["step", "share", "judgement"] and said == ["share of: the eager step"]
    rows[1] = {**rows[1], "denominator": "the replay"}
    assert [c.key for c in index_layout(rows)[0]] == ["step", "share", "denominator", "judgement"]
    assert index_layout(rows[:1])[1] == []                 # one row: nothing to fold


def test_format_text_of_steps_is_the_index_and_each_headline(runs, capsys):
    root, rs = runs
    assert main(["report", str(root), "--format", "text"]) == 0       # a folder of step runs
    out = capsys.readouterr().out
    index, *heads = out.rstrip("\n").split("\n\n")
    assert index.splitlines()[0].startswith("share of: ") and index.splitlines()[1].startswith("step")
    assert len(index.splitlines()) == 5
    assert heads == [a.headline() for _, a in rs]


def test_page_without_edges_grids_or_graphs_is_the_index_and_the_section(runs):
    root, rs = runs
    plain = [(p, a) for p, a in rs if p.name.endswith("layer-b16")]
    p, a = plain[0]
    a.manifest["step"]["facts"] = {}
    slug = anchors([p])[0]
    assert page_markdown("T", plain) == (
        "# T\n\n| step | share [95 % CI] | share of | judgement |\n|---|---:|---|---|\n"
        f"| [layer-b16](#{slug}) | +0.00 % [+0.00, +0.00] | {a.index_row()['denominator']} | within noise |\n\n"
        f'<a id="{slug}"></a>\n\n## layer-b16\n\nRun dir `{p.name}`.\n\n{a.headline()}\n')


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
    tool = Path(__file__).resolve().parents[1] / "tools" / "docgen" / "experiments.py"
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


def test_cli_show_lines_up_the_kernel_column_whatever_the_judgement_words(capsys):
    """A graph-surgery run whose top kernels carry judgements of 6 to 21 characters ('faster',
    'write-back, not reuse'): each kernel's name starts in the same column."""
    from pathlib import Path

    run = Path(__file__).resolve().parents[1] / "examples/steps/surgery/20261202T160529Z-bert-layer-fastpath"
    assert main(["step", "--show", str(run)]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = out[out.index("top kernels (saving = cold - natural, median µs):") + 1:]
    rows = rows[:next(i for i, x in enumerate(rows) if not x.startswith("  "))]
    assert len(rows) == 8 and {"faster", "write-back, not reuse"} <= {r[34:].split("  ")[0] for r in rows}
    assert len({r.index("_transformer_encoder_layer_fwd#0") for r in rows}) == 1


def test_step_help_says_what_the_code_does(capsys):
    import pytest as _pytest

    with _pytest.raises(SystemExit):
        main(["step", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "right before each op" not in text
    assert "a flush node before every kernel node" in text and "falls back to the per-op method" in text
    assert "--graph ignored, kept so old command lines still parse" in text
