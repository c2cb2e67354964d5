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
    fold = '<details{}><summary style="height:800px;display:block">s</summary><div style="height:16000px"></div></details>'
    rc, got = _measure(tmp_path, fold.format(""))
    assert (rc, got["screens"]) == (0, 1.0)
    rc, got = _measure(tmp_path, fold.format(" open"))      # the default view: an open fold counts
    assert (rc, got["screens"]) == (1, 21.0)


def test_a_wide_table_is_over_even_in_its_own_scrolling_box_or_a_fold(tmp_path: Path) -> None:
    table = '<table><tr><td><div style="width:{}px">x</div></td></tr></table>'
    rc, got = _measure(tmp_path, table.format(3000))
    assert rc == 1 and got["widest_table_right"] > got["viewport_width"] and len(got["wide_tables"]) == 1
    rc, got = _measure(tmp_path, f'<div style="overflow-x:auto">{table.format(3000)}</div>')
    assert rc == 1 and len(got["wide_tables"]) == 1          # it fits the page only by scrolling sideways
    rc, got = _measure(tmp_path, f'<section><details><summary><h2>Card</h2></summary>{table.format(3000)}'
                                 '</details></section>')
    # folded, it is still measured: 3000 px + the default 2 px border-spacing and 1 px cell padding a side
    assert rc == 1 and got["wide_tables"] == ["Card (3006 px)"]
    rc, got = _measure(tmp_path, f'<div style="overflow-x:auto">{table.format(600)}</div>')
    assert rc == 0 and got["wide_tables"] == [] and got["widest_table_right"] <= got["viewport_width"]


def test_a_missing_page_is_one_line_and_exit_2(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(TOOL), str(tmp_path / "none.html")],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "no such file" in out.stderr


# the committed report pages that `l2attr report` writes (docs/study.md says how each is made)
PAGES = sorted((TOOL.parents[1] / "examples").glob("**/*.html"))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_committed_page_opens_in_ten_screens_with_no_wide_table(page: Path) -> None:
    out = subprocess.run([sys.executable, str(TOOL), str(page), "--max-screens", "10"],
                         capture_output=True, text=True, check=False)
    got = json.loads(out.stdout.splitlines()[0])
    assert got["wide_tables"] == [] and got["screens"] <= 10 and out.returncode == 0, got
