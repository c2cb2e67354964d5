"""tools/report_screens.py on pages whose answer is known by hand: height in screens, a table
wider than the page, the same table inside its own scrolling box, folded <details>."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
TOOL = Path(__file__).resolve().parents[1] / "tools" / "report_screens.py"
sys.path.insert(0, str(TOOL.parent))
import report_screens  # noqa: E402

if report_screens.chromium() is None:
    pytest.skip("no chromium on PATH: the browser check needs one (apt-get install -y chromium)",
                allow_module_level=True)

STYLE = "<style>html,body{margin:0;padding:0}</style>"


def _measure(tmp_path: Path, body: str) -> tuple[int, dict]:
    page = tmp_path / "p.html"
    page.write_text(f"<!doctype html><html><head>{STYLE}</head><body>{body}</body></html>")
    out = subprocess.run([sys.executable, str(TOOL), str(page)], capture_output=True, text=True, check=False)
    return out.returncode, json.loads(out.stdout.splitlines()[0])


def test_a_page_of_twenty_screens_is_over_and_folding_brings_it_to_one(tmp_path: Path) -> None:
    rc, got = _measure(tmp_path, '<div style="height:16000px"></div>')
    assert (rc, got["screens"]) == (1, 20.0)
    rc, got = _measure(tmp_path, '<details open><summary style="height:800px;display:block">s</summary>'
                                 '<div style="height:16000px"></div></details>')
    assert (rc, got["screens"]) == (0, 1.0)


def test_a_wide_table_is_over_unless_it_scrolls_in_its_own_box(tmp_path: Path) -> None:
    table = '<table><tr><td><div style="width:3000px">x</div></td></tr></table>'
    rc, got = _measure(tmp_path, table)
    assert rc == 1 and got["widest_table_right"] > got["viewport_width"]
    rc, got = _measure(tmp_path, f'<div style="overflow-x:auto">{table}</div>')
    assert rc == 0 and got["widest_table_right"] <= got["viewport_width"]


def test_a_missing_page_is_one_line_and_exit_2(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(TOOL), str(tmp_path / "none.html")],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "no such file" in out.stderr
