"""The sweep blocks (docs/sweeps.md) are what the registry and the analysis make of the committed runs,
and the Sweeps section names every registered axis by what it measures (no A100 label: the occupy
sweep was never measured on an A100, and its own ncu check shows it is no smaller L2 on the H200)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "docgen"))
from doc_pages import between, text_with  # noqa: E402  (the page that holds a block: README.md or docs/*.md)

spec = importlib.util.spec_from_file_location("readme_sweeps", ROOT / "tools" / "docgen" / "sweeps.py")
readme_sweeps = importlib.util.module_from_spec(spec)
spec.loader.exec_module(readme_sweeps)


def test_axes_block_is_the_registry():
    text = text_with(readme_sweeps.AXES_BEGIN)
    assert between(text, readme_sweeps.AXES_BEGIN, readme_sweeps.AXES_END) == readme_sweeps.axes_block()


def test_sweeps_block_is_current():
    text = text_with(readme_sweeps.BEGIN)
    m = readme_sweeps.BEGIN.search(text)
    assert text[m.end():text.index(readme_sweeps.END)] == readme_sweeps.block(m["runs"].split(","))


def test_the_sweeps_section_and_blocks_carry_no_a100_label():
    text = text_with(readme_sweeps.BEGIN)
    section = between(text, "# Sweeps (`l2attr sweep AXIS`)", "\n## ")
    m = readme_sweeps.BEGIN.search(text)
    block = text[m.end():text.index(readme_sweeps.END)]
    for part in (section, block):
        assert "A100" not in part
