"""The pages that hold generated blocks: README.md and every docs/*.md page.

A generated block sits between `<!-- NAME:begin ... -->` and `<!-- NAME:end -->` in exactly one
page. The generators (tools/docgen/*.py, benchmarks/bench_tests.py) find the page that holds a
block here and write it there; the tests read the block from the same page, so a block moved from
the README to a docs page stays generated and checked.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def pages(root: Path = ROOT) -> list[Path]:
    """README.md, then the docs pages in name order."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def page_with(marker: str | re.Pattern[str], root: Path = ROOT) -> Path:
    """The one page that holds `marker` (a string or a compiled pattern); none or two is an error."""
    found = [p for p in pages(root) if (marker.search(p.read_text(encoding="utf-8")) if isinstance(marker, re.Pattern)
                                        else marker in p.read_text(encoding="utf-8"))]
    said = marker.pattern if isinstance(marker, re.Pattern) else marker.strip()
    if not found:
        raise SystemExit(f"no page of README.md, docs/*.md holds {said!r}")
    if len(found) > 1:
        raise SystemExit(f"{said!r} is in {len(found)} pages ({', '.join(p.name for p in found)}); a block lives in one")
    return found[0]


def text_with(marker: str | re.Pattern[str], root: Path = ROOT) -> str:
    """The text of the page that holds `marker`."""
    return page_with(marker, root).read_text(encoding="utf-8")


def all_text(root: Path = ROOT, skip: tuple[str, ...] = ()) -> str:
    """Every page's text, one after another, each opened by a `<!-- page:NAME -->` line (for the
    checks that look at all the prose); pages named in `skip` (e.g. 'docs/sweeps.md') left out."""
    out = []
    for p in pages(root):
        rel = p.relative_to(root).as_posix()
        if rel not in skip:
            out.append(f"<!-- page:{rel} -->\n{p.read_text(encoding='utf-8')}")
    return "\n".join(out)


def between(text: str, begin: str, end: str) -> str:
    """What lies between `begin` and the next `end` (both markers' full text)."""
    a = text.index(begin) + len(begin)
    return text[a:text.index(end, a)]


def replace(text: str, begin: str, end: str, body: str) -> str:
    a = text.index(begin) + len(begin)
    return text[:a] + body + text[text.index(end, a):]


def write_block(begin: str, end: str, body: str, root: Path = ROOT) -> Path:
    """Replace the block in the page that holds it; that page."""
    page = page_with(begin, root)
    page.write_text(replace(page.read_text(encoding="utf-8"), begin, end, body), encoding="utf-8")
    return page
