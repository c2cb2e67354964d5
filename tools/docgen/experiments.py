"""Regenerate the experiments, timer and steps blocks (docs/experiment.md, docs/layer-a.md,
docs/step-results.md, and the quick start's answer in docs/steps.md: each in the page that holds
it, tools/docgen/doc_pages.py) from the committed runs.

    python tools/docgen experiments            # print the blocks
    python tools/docgen experiments --write    # replace them in their pages

The block sits between `<!-- experiments:begin -->` and `<!-- experiments:end -->`; it is made by
l2attr.experiment.section from every run dir under examples/experiments/, the timer
comparison from the two runs of TIMER_RUNS (the blocking one is the
reproduction's, not copied), and the steps block (between `<!-- steps:begin -->` and
`<!-- steps:end -->`) by l2attr.steps.section.text from examples/steps/surgery/ (graph surgery; examples/steps/runs/ holds the per-op method's older runs). tests/test_readme_experiments.py fails when they disagree.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from l2attr.experiment.table import analyse_experiment, load_experiment  # noqa: E402
from l2attr.analysis.timer_compare import compare_timers  # noqa: E402
from l2attr.report.markdown import timer_table  # noqa: E402
from l2attr.experiment.section import experiments_markdown  # noqa: E402

BEGIN, END = "<!-- experiments:begin -->\n", "<!-- experiments:end -->"
TIMER_BEGIN, TIMER_END = "<!-- timer:begin -->\n", "<!-- timer:end -->"
STEPS_BEGIN, STEPS_END = "<!-- steps:begin -->\n", "<!-- steps:end -->"
PIPELINE_BEGIN, PIPELINE_END = "<!-- pipeline:begin -->", "<!-- pipeline:end -->"
GRID_BEGIN, GRID_END = "<!-- llm-grid:begin -->", "<!-- llm-grid:end -->"
GRID = ROOT / "examples" / "steps" / "hf_grid"
FULL = ROOT / "examples" / "steps" / "hf_full"
ANSWER_BEGIN, ANSWER_END = "<!-- step-answer:begin -->\n", "<!-- step-answer:end -->"
# the quick start's step (docs/steps.md), as benchmarks/bench_steps.py measured it
ANSWER_RUN = "examples/steps/surgery/20261202T160528Z-selfcheck-quarter-l2"


def runs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if (p / "manifest.json").is_file())


def block() -> str:
    analyses = [analyse_experiment(load_experiment(p)) for p in runs(ROOT / "examples" / "experiments")]
    return experiments_markdown(analyses, ROOT)


# One device call, one GPU: the default ladder (blocking timer) and the fast family under a spin.
TIMER_RUNS = ("examples/reproduction/20261201T205108Z-blocking", "examples/timer/20261201T205159Z-fast-spin300")


def timer_block() -> str:
    return timer_table(compare_timers([ROOT / r for r in TIMER_RUNS]), ROOT)


def pipeline_block(folder: Path | None = None) -> str:
    """The README's one line on the paper's pipeline figure (steps/table.py)."""
    from l2attr.steps.analyse.answer import analyse_step
    from l2attr.steps.table import pipeline_sentence

    runs = runs_in(folder or ROOT / "examples" / "steps" / "surgery")
    return pipeline_sentence([analyse_step(p) for p in runs]) + (
        " (`examples/steps/surgery/`, `python benchmarks/bench_steps.py`)")


def grid_block(folder: Path | None = None) -> str:
    """The README's answer to the study for LLM steps, from the grids' committed runs: per grid, the
    count of rows on each side of 0.65 % for the eager step and the graph replay (examples/steps/hf_page.py
    `counts`, the page's own first screen); says so when a grid has not run."""
    import importlib.util
    import sys

    from l2attr.steps.analyse.answer import StepAnswer
    from l2attr.steps.analyse.reading import EAGER, REPLAY

    here = ROOT / "examples" / "steps"
    sys.path.insert(0, str(here))
    spec = importlib.util.spec_from_file_location("hf_page", here / "hf_page.py")
    page = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(page)
    out = []
    for where, what in ((FULL, "Full-width models"), (folder or GRID, "the toy control (4-layer models)")):
        found = sorted(p.parent for p in where.rglob("manifest.json")) if where.is_dir() else []
        if not found:
            out.append(f"{what}: not measured yet (`python examples/steps/hf_grid.py`)")
            continue
        answers = [StepAnswer.from_run(p) for p in found]
        gpu = (answers[0].manifest.get("gpu") or {}).get("name") or "this GPU"
        out.append(f"{what} on {gpu} (`{where.relative_to(ROOT)}/README.md`): activations' share of the eager "
                   f"step {page.counts(answers, EAGER)}; of the graph replay {page.counts(answers, REPLAY)}")
    return "Write-back-matched cold arm, non-data cost per kernel node where measured. " + "; ".join(out) + "."


def steps_block(folder: Path | None = None) -> str:
    """Every step run of `folder` (default examples/steps/runs): per run its answer, measured edges,
    graph method and DRAM bytes; then the DLRM step times against no pin, and the sweep grids."""
    from l2attr.steps.analyse.answer import analyse_step
    from l2attr.steps.section.text import steps_markdown

    runs = [(p, analyse_step(p)) for p in runs_in(folder or ROOT / "examples" / "steps" / "surgery")]
    return steps_markdown(runs, ROOT if folder is None else folder, base="dlrm-rung-baseline")


def answer_block(run: Path | None = None) -> str:
    """What the quick start's `print(ans.headline())` prints for its step: the committed run's."""
    from l2attr.steps.analyse.answer import StepAnswer

    return "```text\n" + StepAnswer.from_run(run or ROOT / ANSWER_RUN).headline() + "\n```\n"


def runs_in(folder: Path) -> list[Path]:
    return runs(folder)


def replace(text: str, begin: str, end: str, body: str) -> str:
    a = text.index(begin) + len(begin)
    return text[:a] + body + text[text.index(end):]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    if args.write:
        from doc_pages import write_block

        write_block(BEGIN, END, block())
        write_block(TIMER_BEGIN, TIMER_END, timer_block())
        write_block(STEPS_BEGIN, STEPS_END, steps_block())
        write_block(PIPELINE_BEGIN, PIPELINE_END, pipeline_block())
        write_block(GRID_BEGIN, GRID_END, grid_block())
        write_block(ANSWER_BEGIN, ANSWER_END, answer_block())
    else:
        print(block() + "\n" + timer_block() + "\n" + steps_block() + "\n" + answer_block())
