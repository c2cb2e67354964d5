"""The committed Markdown pages of the experiment and step runs are what `l2attr report` makes of
those runs today (so a change of analysis that moves a headline shows here)."""

from __future__ import annotations

import lzma
import re
from pathlib import Path

import pytest

from l2attr.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("runs, page", [("examples/experiments", "examples/experiments/report.md"),
                                        ("examples/steps/runs", "examples/steps/runs/report.md"),
                                        ("examples/steps/surgery", "examples/steps/surgery/report.md"),
                                        ("examples/charges", "examples/charges/report.md")])
def test_committed_page_is_current(tmp_path, runs, page):
    out = tmp_path / "page.md"
    assert main(["report", str(ROOT / runs), "--format", "md", "-o", str(out)]) == 0
    assert out.read_text() == (ROOT / page).read_text()


SESSION4 = sorted(str(p) for p in (ROOT / "examples" / "session4").glob("*-default")) + \
    sorted(str(p) for p in (ROOT / "examples" / "session4").glob("*-profile-small"))
# the reproduction's two default processes of one call, side by side (examples/reproduction/README.md)
TWO_PROCESSES = ["examples/reproduction/20261201T205108Z-blocking", "examples/reproduction/20261201T205136Z-blocking-2"]
GENERATED = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")   # the page's generated time


@pytest.mark.parametrize("runs, page", [(["examples"], "examples/report.md"), (["examples"], "examples/report.html.xz"),
                                        (SESSION4, "examples/session4/report.md"),
                                        (TWO_PROCESSES, "examples/reproduction/compare-two-processes.md"),
                                        (["examples/steps/surgery"], "examples/steps/surgery/report.html.xz")])
def test_committed_study_page_is_current(tmp_path, runs, page):
    """The study's pages and the steps' combined page (docs/study.md, examples/session4/README.md and
    docs/step-results.md say how each is made): what
    `l2attr report` writes from the committed runs today, the time it was generated aside."""
    out = tmp_path / Path(page).name.removesuffix(".xz")
    assert main(["report", *[str(ROOT / r) for r in runs], "-o", str(out)]) == 0
    committed = (ROOT / page).read_bytes()
    committed = lzma.decompress(committed) if page.endswith(".xz") else committed   # kept small: xz -9e
    assert GENERATED.sub("", out.read_text()) == GENERATED.sub("", committed.decode("utf-8"))
