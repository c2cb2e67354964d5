"""The experiment, timer and steps blocks (docs/experiment.md, docs/layer-a.md, docs/step-results.md)
and the step quick start's answer (docs/steps.md) are what the analysis makes of the committed runs; the README's snippet is one block, the same on the experiment page."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "docgen"))
from doc_pages import between, text_with  # noqa: E402  (the page that holds a block: README.md or docs/*.md)

spec = importlib.util.spec_from_file_location("readme_experiments", ROOT / "tools" / "docgen" / "experiments.py")
readme_experiments = importlib.util.module_from_spec(spec)
spec.loader.exec_module(readme_experiments)


def test_experiments_block_is_current():
    text = text_with(readme_experiments.BEGIN)
    assert between(text, readme_experiments.BEGIN, readme_experiments.END) == readme_experiments.block()


def test_timer_block_is_current():
    text = text_with(readme_experiments.TIMER_BEGIN)
    assert between(text, readme_experiments.TIMER_BEGIN, readme_experiments.TIMER_END) == readme_experiments.timer_block()


def test_steps_block_is_current():
    text = text_with(readme_experiments.STEPS_BEGIN)
    assert between(text, readme_experiments.STEPS_BEGIN, readme_experiments.STEPS_END) == readme_experiments.steps_block()


def test_snippet_is_one_python_block_that_declares_and_times():
    spec2 = importlib.util.spec_from_file_location("readme_snippet", ROOT / "tools" / "docgen" / "snippet.py")
    mod = importlib.util.module_from_spec(spec2)
    spec2.loader.exec_module(mod)
    code = mod.snippet((ROOT / "README.md").read_text())
    compile(code, "snippet.py", "exec")
    assert "l2attr.Experiment(" in code and "exp.time()" in code and "exp.profile(" in code



def test_the_experiment_page_shows_the_readme_snippet_unchanged():
    spec2 = importlib.util.spec_from_file_location("readme_snippet", ROOT / "tools" / "docgen" / "snippet.py")
    mod = importlib.util.module_from_spec(spec2)
    spec2.loader.exec_module(mod)
    page = (ROOT / "docs" / "experiment.md").read_text()
    assert mod.snippet(page) == mod.snippet((ROOT / "README.md").read_text())


def test_pipeline_line_is_current():
    """The README's one line on the paper's pipeline figure is generated from the rung step runs."""
    text = text_with(readme_experiments.PIPELINE_BEGIN)
    assert between(text, readme_experiments.PIPELINE_BEGIN, readme_experiments.PIPELINE_END).strip() == \
        readme_experiments.pipeline_block().strip()


def test_llm_grid_line_is_current():
    """The README's answer to the study for LLM steps is generated from the grid's committed runs."""
    text = text_with(readme_experiments.GRID_BEGIN)
    assert between(text, readme_experiments.GRID_BEGIN, readme_experiments.GRID_END).strip() == \
        readme_experiments.grid_block().strip()


def test_step_quick_start_prints_its_committed_run():
    """docs/steps.md opens with a quick start of at most 25 lines: the step, what it prints (the
    committed run of that step, generated), its page."""
    text = (ROOT / "docs" / "steps.md").read_text()
    quick = text[text.index("## Quick start"):text.index("\n## ", text.index("## Quick start") + 1)]
    assert quick.rstrip("\n").count("\n") + 1 <= 25, quick
    assert "l2attr.step(" in quick and "print(ans.headline())" in quick and "l2attr report" in quick
    assert readme_experiments.ANSWER_RUN in quick
    assert between(text, readme_experiments.ANSWER_BEGIN, readme_experiments.ANSWER_END) == \
        readme_experiments.answer_block()
