"""The step page of the committed graph-surgery runs (examples/steps/surgery/) in headless
Chromium at 1280 x 800: the index table is the page's first table and starts on the first screen,
every step's section opens folded, no table is wider than the page with every section opened, a
link from the index opens its section and draws its chart, and no script fails.

Needs Debian's `chromium`; skipped without it (CI installs it with `apt-get install -y chromium`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from l2attr.steps.analyse.answer import StepAnswer
from l2attr.steps.section.html import render
from l2attr.steps.section.text import anchors

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
RUNS = Path(__file__).resolve().parents[1] / "examples" / "steps" / "surgery"

# Records script errors; after load (and the fold a link opened) writes what it saw into the DOM.
PROBE = """<script>
window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push(e.message); });
window.addEventListener('load', function () {
  setTimeout(function () {
    var tables = document.querySelectorAll('table');
    var first = tables[0], width = document.documentElement.clientWidth;
    var closed = Array.prototype.filter.call(document.querySelectorAll('details.fold'), function (d) { return !d.open; }).length;
    var opened = Array.prototype.filter.call(document.querySelectorAll('section.card'), function (c) {
      var d = c.querySelector('details.fold'); return d && d.open; }).map(function (c) { return c.id; });
    var drawn = Array.prototype.map.call(document.querySelectorAll('.js-plotly-plot'), function (el) { return el.id; });
    document.querySelectorAll('details').forEach(function (d) { d.open = true; });
    var wide = Array.prototype.filter.call(tables, function (t) {
      var box = t.closest('.table-scroll');
      return t.getBoundingClientRect().right > width + 0.5 || (box && box.scrollWidth > box.clientWidth + 1);
    }).map(function (t) { var s = t.closest('section'); return s ? s.id : '?'; });
    var out = document.createElement('pre'); out.id = 'probe';
    out.textContent = JSON.stringify({errors: window.__errors, first_class: first.className,
      first_top: first.getBoundingClientRect().top + window.scrollY, index_rows: first.querySelectorAll('tbody tr').length,
      links: Array.prototype.map.call(first.querySelectorAll('a'), function (a) { return a.getAttribute('href'); }),
      tables: tables.length, closed: closed, opened: opened, drawn: drawn, wide: wide, width: width});
    document.body.appendChild(out);
  }, 2000);
});
</script>"""


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    if CHROMIUM is None:
        pytest.skip("chromium not installed (Debian: apt-get install -y chromium)")
    dirs = sorted(p for p in RUNS.iterdir() if (p / "manifest.json").is_file())
    html = render([StepAnswer.from_run(d) for d in dirs], dirs)
    path = tmp_path_factory.mktemp("steps") / "steps.html"
    path.write_text(html.replace("<head>", "<head>\n" + PROBE, 1), encoding="utf-8")
    return path, anchors(dirs)


def probe(path: Path, fragment: str = "") -> dict:
    out = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                          f"--user-data-dir={path.parent / 'profile'}", "--window-size=1280,800",
                          "--virtual-time-budget=10000", "--dump-dom", path.as_uri() + fragment],
                         capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    m = re.search(r'<pre id="probe">(.*?)</pre>', out.stdout, re.S)
    assert m, f"probe did not run; chromium exit {out.returncode}: {out.stderr[-2000:]}"
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def test_index_first_sections_folded_no_wide_table(page: tuple[Path, list[str]]) -> None:
    path, ids = page
    got = probe(path)
    assert got["errors"] == []
    assert got["first_class"] == "data index" and got["first_top"] < 800          # on the first screen
    assert got["index_rows"] == 23 and got["links"] == [f"#{i}" for i in ids]
    assert got["closed"] == 23 + 6 and got["opened"] == [] and got["drawn"] == []   # 23 steps, 6 sweep grids
    assert got["wide"] == [] and got["width"] <= 1280, got["wide"]


def test_a_link_from_the_index_opens_its_section_and_draws_its_chart(page: tuple[Path, list[str]]) -> None:
    path, ids = page
    got = probe(path, f"#{ids[6]}")                       # dlrm-rung-torch: 4 of its tables were wider than the page
    assert got["errors"] == [] and got["opened"] == [ids[6]] and got["drawn"] == ["step-chart-6"]


GRID = Path(__file__).resolve().parents[1] / "examples" / "steps" / "hf_full"
FIRST_SCREEN = """<script>
window.addEventListener('load', function () {
  setTimeout(function () {
    var lines = Array.prototype.map.call(document.querySelectorAll('p.study'), function (p) {
      var r = p.getBoundingClientRect(); return {text: p.textContent, bottom: r.bottom + window.scrollY}; });
    var out = document.createElement('pre'); out.id = 'probe';
    out.textContent = JSON.stringify({lines: lines, height: window.innerHeight});
    document.body.appendChild(out);
  }, 1000);
});
</script>"""


def test_the_full_width_grids_first_screen_names_the_gpu_the_models_and_the_counts(tmp_path: Path) -> None:
    """`l2attr report examples/steps/hf_full` (the full-width grid's committed runs): the study's lines,
    read back from the page as Chromium lays it out at 1280 x 800, end on the first screen and say
    what study_lines derives from the runs (the GPU, the models, the counts per denominator)."""
    if CHROMIUM is None:
        pytest.skip("chromium not installed (Debian: apt-get install -y chromium)")
    from l2attr.steps.section.text import study_lines

    dirs = sorted(p.parent for p in GRID.rglob("manifest.json") if "hf-grid" in p.read_text(errors="replace"))
    answers = [StepAnswer.from_run(d) for d in dirs]
    path = tmp_path / "grid.html"
    path.write_text(render(answers, dirs).replace("<head>", "<head>\n" + FIRST_SCREEN, 1), encoding="utf-8")
    got = probe(path)
    want = study_lines(answers)
    assert want and [x["text"] for x in got["lines"]] == [f"{w}." for w in want]
    assert all(x["bottom"] <= 800 for x in got["lines"]), got["lines"]
    assert want[0].startswith("GPU: NVIDIA ") and "of the eager step:" in want[1] and "of the graph replay:" in want[1]
