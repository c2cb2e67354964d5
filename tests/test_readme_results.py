"""The study's results block (docs/study.md) and the README's headline are what the analysis makes of
the committed run dirs the block names."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from doc_pages import between, text_with  # noqa: E402  (the page that holds a block: README.md or docs/*.md)

spec = importlib.util.spec_from_file_location("readme_results", ROOT / "tools" / "readme_results.py")
readme_results = importlib.util.module_from_spec(spec)
spec.loader.exec_module(readme_results)


def test_results_block_is_current():
    text = text_with(readme_results.BEGIN)
    m = readme_results.BEGIN.search(text)
    current = text[m.end():text.index(readme_results.END)]
    assert current == readme_results.block(m["runs"].split(","))


def test_fidelity_block_is_current():
    text = text_with(readme_results.FID_BEGIN)
    current = between(text, readme_results.FID_BEGIN, readme_results.FID_END)
    assert current == readme_results.fidelity_markdown(ROOT / "examples" / "fidelity" / "fidelity.json")


def test_readme_headline_is_one_generated_line():
    """The README's answer for the study: one line, analysis.answer's over the results block's runs."""
    readme = (ROOT / "README.md").read_text()
    current = between(readme, readme_results.HEAD_BEGIN, readme_results.HEAD_END)
    assert current.count("\n") == 1, "the headline is one line"
    runs = readme_results.results_runs(text_with(readme_results.BEGIN))
    assert current == readme_results.headline_block(runs), "python tools/readme_results.py --write"
