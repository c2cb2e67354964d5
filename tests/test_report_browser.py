"""Open a report in headless Chromium: no script errors, every chart drawn with data, a screenshot made.

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

from l2attr.analysis import analyse, load_runs
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
      plotly: typeof window.Plotly
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


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if CHROMIUM is None:
        pytest.skip("chromium not installed (Debian: apt-get install -y chromium)")
    root = tmp_path_factory.mktemp("browser")
    html = render_html(analyse(load_runs([write_ladder_run(root), write_profile_run(root)])))
    html = html.replace("<head>", "<head>\n" + PROBE, 1)
    path = root / "report.html"
    path.write_text(html, encoding="utf-8")
    return path


def test_renders_without_errors(page: Path) -> None:
    result = chromium(page.parent, "--dump-dom", page.as_uri())
    m = re.search(r'<pre id="l2attr-probe">(.*?)</pre>', result.stdout, re.S)
    assert m, f"probe did not run; chromium exit {result.returncode}: {result.stderr[-2000:]}"
    probe = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert probe["errors"] == []
    assert probe["empty"] == []           # a chart drawn without one value is a bug (issue 20)
    assert probe["plotly"] == "object"
    assert probe["plots"] == 6            # ladder, speedup, amortisation, two heatmaps, roofline
    assert probe["svgs"] >= 12            # plotly draws at least two svg layers per plot
    console_errors = [line for line in result.stderr.splitlines()
                      if "CONSOLE" in line and ("Uncaught" in line or ":ERROR:" in line and "report.html" in line)]
    assert console_errors == []


def test_screenshot(page: Path) -> None:
    shot = page.parent / "report.png"
    result = chromium(page.parent, f"--screenshot={shot}", "--window-size=1400,3000", page.as_uri())
    assert shot.is_file() and shot.stat().st_size > 50_000, result.stderr[-2000:]
    keep = os.environ.get("L2ATTR_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report.png")
