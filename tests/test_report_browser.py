"""Open a report in headless Chromium: no script errors, every chart drawn with data, no table
wider than its card, no chart title under plotly's toolbar, no legend on an axis title, the
answer line and its chart in the first 1280 x 800 screen, a screenshot made.

Needs Debian's `chromium` (/usr/bin/chromium); skipped without it. CI installs it with
`apt-get install -y chromium`. Set L2ATTR_SCREENSHOT_DIR to keep the screenshot.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers_rundirs import write_ladder_run, write_profile_run

from l2attr.study import analyse, load_runs
from l2attr.report.html import render_html

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)

# Records script errors and console.error, then (after plotly has drawn) writes them and the
# number of drawn plots into the DOM, where --dump-dom shows them.
PROBE = """<script>
window.__l2attrErrors = [];
window.addEventListener('error', function (e) { window.__l2attrErrors.push('error: ' + e.message); });
window.addEventListener('unhandledrejection', function (e) { window.__l2attrErrors.push('rejection: ' + e.reason); });
(function () {
  var original = console.error;
  console.error = function () {
    window.__l2attrErrors.push('console.error: ' + Array.prototype.join.call(arguments, ' '));
    original.apply(console, arguments);
  };
})();
function overlap(a, b) { return a.left < b.right && a.right > b.left && a.top < b.bottom && a.bottom > b.top; }
window.addEventListener('load', function () {
  setTimeout(function () {
    var out = document.createElement('pre');
    out.id = 'l2attr-probe';
    out.textContent = JSON.stringify({
      errors: window.__l2attrErrors,
      plots: document.querySelectorAll('.js-plotly-plot').length,
      empty: Array.prototype.filter.call(document.querySelectorAll('.js-plotly-plot'), function (el) {
        return !(el.data || []).some(function (t) {
          var keys = t.orientation === 'h' ? ['x', 'y', 'z', 'values'] : ['y', 'z', 'values'];
          return keys.some(function (k) {
            var v = t[k];
            if (!v) { return false; }
            var flat = Array.prototype.concat.apply([], Array.prototype.slice.call(v));
            return flat.some(function (n) { return typeof n === 'number' && isFinite(n); });
          });
        });
      }).map(function (el) { return el.id; }),
      svgs: document.querySelectorAll('.main-svg').length,
      wide: Array.prototype.filter.call(document.querySelectorAll('.table-scroll'), function (box) {
        var card = box.closest('section.card') || box.closest('.wrap');
        return box.getBoundingClientRect().right > card.getBoundingClientRect().right + 1;
      }).map(function (box) { return (box.closest('section.card') || {}).id; }),
      under: Array.prototype.filter.call(document.querySelectorAll('.js-plotly-plot'), function (el) {
        var bar = el.querySelector('.modebar'), title = el.querySelector('.gtitle');
        return bar && title && overlap(bar.getBoundingClientRect(), title.getBoundingClientRect());
      }).map(function (el) { return el.id; }),
      legend_on_axis: Array.prototype.filter.call(document.querySelectorAll('.js-plotly-plot'), function (el) {
        var lg = el.querySelector('.legend'), xt = el.querySelector('.xtitle');
        return lg && xt && overlap(lg.getBoundingClientRect(), xt.getBoundingClientRect());
      }).map(function (el) { return el.id; }),
      first_screen: ['answer-line', 'fig-answer'].filter(function (id) {
        var el = document.getElementById(id);
        return el && el.getBoundingClientRect().bottom <= window.innerHeight;
      }),
      plotly: typeof window.Plotly,
      open_folds: Array.prototype.filter.call(document.querySelectorAll('section.card'), function (c) {
        var d = c.querySelector('details.fold');
        return d && d.open;
      }).map(function (c) { return c.id; })
    });
    document.body.appendChild(out);
  }, 3000);
});
</script>"""


def chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
            f"--user-data-dir={tmp / 'profile'}", "--enable-logging=stderr", "--v=0", "--hide-scrollbars",
            "--virtual-time-budget=10000", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)


def with_probe(html: str, path: Path) -> Path:
    path.write_text(html.replace("<head>", "<head>\n" + PROBE, 1), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if CHROMIUM is None:
        pytest.skip("chromium not installed (Debian: apt-get install -y chromium)")
    root = tmp_path_factory.mktemp("browser")
    html = render_html(analyse(load_runs([write_ladder_run(root), write_profile_run(root)])))
    return with_probe(html, root / "report.html")


def probe_of(page: Path, fragment: str = "") -> tuple[dict, subprocess.CompletedProcess[str]]:
    result = chromium(page.parent, "--window-size=1280,800", "--dump-dom", page.as_uri() + fragment)
    m = re.search(r'<pre id="l2attr-probe">(.*?)</pre>', result.stdout, re.S)
    assert m, f"probe did not run; chromium exit {result.returncode}: {result.stderr[-2000:]}"
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&")), result


def test_renders_without_errors(page: Path) -> None:
    probe, result = probe_of(page)
    assert probe["errors"] == []
    assert probe["empty"] == []           # a chart drawn without one value is a bug (issue 20)
    assert probe["plotly"] == "object"
    assert probe["plots"] == 7            # answer, ladder, speedup, amortisation, two heatmaps, roofline
    assert probe["svgs"] >= 14            # plotly draws at least two svg layers per plot
    assert probe["wide"] == []            # tables scroll inside their card at 1280 px
    assert probe["under"] == []           # no chart title under plotly's toolbar
    assert probe["legend_on_axis"] == []
    assert probe["first_screen"] == ["answer-line", "fig-answer"]
    assert probe["open_folds"] == []     # every card opens folded
    console_errors = [line for line in result.stderr.splitlines()
                      if "CONSOLE" in line and ("Uncaught" in line or ":ERROR:" in line and "report.html" in line)]
    assert console_errors == []


def test_a_link_to_a_card_opens_it(page: Path) -> None:
    probe, _ = probe_of(page, "#ladder-0")
    assert probe["open_folds"] == ["ladder-0"] and probe["errors"] == []


def test_probe_finds_a_chart_without_data(tmp_path: Path) -> None:
    """The check above must fail on a chart whose every value is null: one such chart, drawn
    directly (the report itself never draws one, report/html.py)."""
    if CHROMIUM is None:
        pytest.skip("chromium not installed (Debian: apt-get install -y chromium)")
    from plotly.offline import get_plotlyjs

    specs = {"fig-full": {"data": [{"type": "bar", "y": [1.0, 2.0]}], "layout": {}},
             "fig-null": {"data": [{"type": "bar", "x": ["a", "b"], "y": [None, None]}], "layout": {}}}
    html = ("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
            "<div id='fig-full'></div><div id='fig-null'></div>"
            f"<script>{get_plotlyjs()}</script><script>var s = {json.dumps(specs)};"
            "Object.keys(s).forEach(function (id) { Plotly.newPlot(id, s[id].data, s[id].layout); });</script>"
            "</body></html>")
    probe, _ = probe_of(with_probe(html, tmp_path / "empty.html"))
    assert probe["plots"] == 2 and probe["empty"] == ["fig-null"]


def test_screenshot(page: Path) -> None:
    shot = page.parent / "report.png"
    result = chromium(page.parent, f"--screenshot={shot}", "--window-size=1400,3000", page.as_uri())
    assert shot.is_file() and shot.stat().st_size > 50_000, result.stderr[-2000:]
    keep = os.environ.get("L2ATTR_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report.png")
