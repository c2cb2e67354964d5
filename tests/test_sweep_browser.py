"""The sweep pages in headless Chromium: no script errors, every sweep chart drawn (alone, and
inside a ladder report). Skipped without chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers_rundirs import write_ladder_run
from helpers_sweep import write_sweep_run
from test_report_browser import CHROMIUM, PROBE, chromium

from l2attr.cli import main

pytestmark = pytest.mark.slow
AXES = ("amortisation", "hotset", "window", "occupy", "pollution")


def _probe(page: Path) -> dict:
    html = page.read_text(encoding="utf-8").replace("<head>", "<head>\n" + PROBE, 1)
    page.write_text(html, encoding="utf-8")
    result = chromium(page.parent, "--dump-dom", page.as_uri())
    m = re.search(r'<pre id="l2attr-probe">(.*?)</pre>', result.stdout, re.S)
    assert m, f"probe did not run; chromium exit {result.returncode}: {result.stderr[-2000:]}"
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))


@pytest.mark.parametrize("with_ladder", [False, True])
def test_sweep_charts_draw_without_errors(tmp_path: Path, with_ladder: bool) -> None:
    if CHROMIUM is None:
        pytest.skip("chromium not installed")
    runs = tmp_path / "runs"
    for axis in AXES:
        write_sweep_run(runs, axis, families=("artifact", "tuned"), hot_rows=[0, 5, 10])
    if with_ladder:
        write_ladder_run(runs)
    page = tmp_path / "page.html"
    # the helpers' sweep and ladder runs are of other shapes: a comparison, said at the top
    assert main(["report", str(runs), "-o", str(page), *(["--allow-mixed"] if with_ladder else [])]) == 0
    probe = _probe(page)
    assert probe["errors"] == [] and probe["plotly"] == "object"
    assert probe["plots"] == 10 + (5 if with_ladder else 0)   # 5 sweeps x 2 families (+ the ladder report: its 4 and the answer chart)
