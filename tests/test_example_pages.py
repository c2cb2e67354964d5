"""The committed Markdown pages of the experiment and step runs are what `l2attr report` makes of
those runs today (so a change of analysis that moves a headline shows here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from l2attr.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("runs, page", [("examples/experiments", "examples/experiments/report.md"),
                                        ("examples/steps/runs", "examples/steps/report.md"),
                                        ("examples/charges", "examples/charges/report.md")])
def test_committed_page_is_current(tmp_path, runs, page):
    out = tmp_path / "page.md"
    assert main(["report", str(ROOT / runs), "--format", "md", "-o", str(out)]) == 0
    assert out.read_text() == (ROOT / page).read_text()
