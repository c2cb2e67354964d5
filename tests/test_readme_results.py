"""The README's results block is what the analysis makes of the committed run dirs it names."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("readme_results", ROOT / "tools" / "readme_results.py")
readme_results = importlib.util.module_from_spec(spec)
spec.loader.exec_module(readme_results)


def test_results_block_is_current():
    text = (ROOT / "README.md").read_text()
    m = readme_results.BEGIN.search(text)
    assert m, "README.md lost its results:begin marker"
    current = text[m.end():text.index(readme_results.END)]
    assert current == readme_results.block(m["runs"].split(","))


def test_fidelity_block_is_current():
    text = (ROOT / "README.md").read_text()
    a = text.index("<!-- fidelity:begin -->\n") + len("<!-- fidelity:begin -->\n")
    current = text[a:text.index("<!-- fidelity:end -->")]
    assert current == readme_results.fidelity_markdown(ROOT / "examples" / "fidelity" / "fidelity.json")
