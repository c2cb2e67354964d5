"""The study's results block (docs/study.md) and the README's headline are what the analysis makes of
the committed run dirs the block names."""

from __future__ import annotations

import lzma
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "docgen"))
from doc_pages import between, text_with  # noqa: E402  (the page that holds a block: README.md or docs/*.md)

spec = importlib.util.spec_from_file_location("readme_results", ROOT / "tools" / "docgen" / "results.py")
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
    """The README's answer for the study: one line, ladders.analyse.answer's over the committed report's runs."""
    readme = (ROOT / "README.md").read_text()
    current = between(readme, readme_results.HEAD_BEGIN, readme_results.HEAD_END)
    assert current.count("\n") == 1, "the headline is one line"
    assert current == readme_results.headline_block(), "python tools/docgen results --write"


def test_readme_headline_is_the_committed_report_banner():
    """The README's answer and the committed page's banner are one string: the sentence before the
    run list is the answer line of examples/report.md and the banner of examples/report.html.xz."""
    import re
    from html import unescape

    readme = (ROOT / "README.md").read_text()
    sentence = between(readme, readme_results.HEAD_BEGIN, readme_results.HEAD_END).split(" — NVIDIA", 1)[0]
    md = (ROOT / "examples" / "report.md").read_text()
    assert f"\n**{sentence}**\n" in md, "examples/report.md: l2attr report examples/ -o examples/report.md"
    html = lzma.decompress((ROOT / "examples" / "report.html.xz").read_bytes()).decode("utf-8")
    banner = re.search(r'<p class="answer-line" id="answer-line">(.*?)</p>', html, re.S)
    assert banner is not None
    said = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", banner.group(1)))).strip()
    assert said == sentence, "examples/report.html.xz: l2attr report examples/ -o examples/report.html, then xz -9e"
