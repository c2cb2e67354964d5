"""How many 1280x800 screens a report page's default view takes, and whether any table is wider
than the page: measured by headless chromium, so the check sees what a reader sees.

    python tools/report_screens.py examples/report.html [--max-screens 10]

The page is copied to a temporary file with a probe script appended; chromium loads it at
1280x800 and the script writes into the DOM, which `--dump-dom` hands back: the document height as
the page opens (every <details> as authored: folded ones folded), then, with every <details>
opened, each table that runs past the viewport or needs its own scrolling box to fit (named by
its card's title). One JSON line per page; exit 1 when a page is over the limits, 2 when
chromium is absent or a page cannot be read.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WIDTH, HEIGHT = 1280, 800
PROBE = """<script>
window.addEventListener('load', function () {
  var doc = document.documentElement;
  var height = Math.max(doc.scrollHeight, document.body.scrollHeight), width = doc.clientWidth;
  document.querySelectorAll('details').forEach(function (d) { d.open = true; });
  var widest = 0, wide = [];
  document.querySelectorAll('table').forEach(function (t) {
    var r = t.getBoundingClientRect();
    if (r.width === 0) { return; }
    widest = Math.max(widest, r.right);
    var box = null;
    for (var a = t.parentElement; a && a !== document.body; a = a.parentElement) {
      var ox = getComputedStyle(a).overflowX;
      if (ox === 'auto' || ox === 'scroll') { box = a; break; }
    }
    if (r.right > width + 0.5 || (box && box.scrollWidth > box.clientWidth + 1)) {
      var h = t.closest('section'), head = h ? h.querySelector('h2, summary') : null;
      wide.push((head ? head.textContent.trim().slice(0, 60) : '?') + ' (' + Math.round(r.right) + ' px)');
    }
  });
  var p = document.createElement('pre'); p.id = 'l2attr-probe';
  p.textContent = JSON.stringify({height: height, viewport_width: width, widest_table_right: widest,
    wide_tables: wide});
  document.body.appendChild(p);
});
</script>"""
FOUND = re.compile(r'id="l2attr-probe">([^<]*)<')


def chromium() -> str | None:
    """The chromium binary, or None: a CI machine may lack one, and the caller says so."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def measure(page: Path, browser: str) -> dict[str, float]:
    """Height and widest table of one page's folded view, in CSS pixels."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / page.name
        probe.write_text(page.read_text(encoding="utf-8") + PROBE, encoding="utf-8")
        out = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", f"--window-size={WIDTH},{HEIGHT}",
             "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
            capture_output=True, text=True, timeout=120, check=False)
    found = FOUND.search(out.stdout)
    if not found:
        raise RuntimeError(f"{page}: chromium returned no measurement")
    return json.loads(found.group(1))


def main(argv: list[str] | None = None) -> int:
    """Measure each page; one JSON line each; non-zero when any is over the limits."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pages", nargs="+", type=Path)
    ap.add_argument("--max-screens", type=float, default=10.0)
    args = ap.parse_args(argv)
    browser = chromium()
    if browser is None:
        print("report_screens: no chromium on PATH (apt-get install -y chromium)", file=sys.stderr)
        return 2
    over = False
    for page in args.pages:
        if not page.is_file():
            print(f"report_screens: {page}: no such file", file=sys.stderr)
            return 2
        try:
            got = measure(page, browser)
        except (RuntimeError, subprocess.TimeoutExpired, ValueError) as err:
            print(f"report_screens: {err}", file=sys.stderr)
            return 2
        got["screens"] = round(got["height"] / HEIGHT, 2)
        got["fits"] = got["screens"] <= args.max_screens and not got["wide_tables"]
        over |= not got["fits"]
        print(json.dumps({"page": str(page), **got}))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
