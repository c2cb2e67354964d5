"""The README's sweep blocks are what the registry and the analysis make of the committed runs,
and the Sweeps section names every registered axis by what it measures (no A100 label: the occupy
sweep was never measured on an A100, and its own ncu check shows it is no smaller L2 on the H200)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("readme_sweeps", ROOT / "tools" / "readme_sweeps.py")
readme_sweeps = importlib.util.module_from_spec(spec)
spec.loader.exec_module(readme_sweeps)


def _between(text: str, begin: str, end: str) -> str:
    a = text.index(begin) + len(begin)
    return text[a:text.index(end, a)]


def test_axes_block_is_the_registry():
    text = (ROOT / "README.md").read_text()
    assert _between(text, readme_sweeps.AXES_BEGIN, readme_sweeps.AXES_END) == readme_sweeps.axes_block()


def test_sweeps_block_is_current():
    text = (ROOT / "README.md").read_text()
    m = readme_sweeps.BEGIN.search(text)
    assert m, "README.md lost its sweeps:begin marker"
    assert text[m.end():text.index(readme_sweeps.END)] == readme_sweeps.block(m["runs"].split(","))


def test_the_sweeps_section_and_blocks_carry_no_a100_label():
    text = (ROOT / "README.md").read_text()
    section = _between(text, "## Sweeps (`l2attr sweep AXIS`)", "\n## ")
    m = readme_sweeps.BEGIN.search(text)
    block = text[m.end():text.index(readme_sweeps.END)]
    for part in (section, block):
        assert "A100" not in part
