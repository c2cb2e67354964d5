"""No comment, docstring, doc or test points at a file outside the repository.

The facts the code relies on are written in the repository's own docs (docs/facts.md); a
reference to notes kept elsewhere (a session's notes file, a sibling folder) leaves the reader of
a fresh clone with nothing to follow. The scan covers the package, the metric sets, the docs, the
tools, the benchmarks and the tests; the pattern is built from parts so that this file does not
match itself. The scanner is checked on hand-made text whose answer is known.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTES = "NO" + "TES"
# the notes files by name (upper case, standalone, ENGINE-..., ...-measurement.md) or the shared folder
OUTSIDE = re.compile(rf"ENGINE-{NOTES}|(?<![\w-]){NOTES}(?:-\w+\.md)?(?!\w)|(?:\.\./|/work/)shared/|(?<![\w/.])shared/")
SELF = Path(__file__).resolve()
SCANNED = ("l2attr", "metrics", "docs", "tools", "benchmarks", "tests", "kernels", "reports")
SUFFIXES = {".py", ".toml", ".md", ".sh", ".j2", ".cu", ".cuh", ".css"}
# Files another engineer is rewriting now: each must still hold its reference (a stale entry fails),
# and leaves this list when its reference is rewritten.
PENDING: dict[str, str] = {}     # files allowed a reference for now, each with why (none left)


# an upper-case Markdown name (METHOD.md, KINDS.md: how notes files are named) must be a file of the repository
UPPER_MD = re.compile(r"(?<![\w./-])([A-Z][A-Z0-9_-]*\.md)\b")


def repo_md_names() -> set[str]:
    return {p.name for p in ROOT.rglob("*.md") if ".git" not in p.parts and "site" not in p.parts}


def unknown_md(text: str, known: set[str]) -> list[str]:
    """Upper-case `.md` names in `text` that no file of the repository bears."""
    return [m.group(1) for m in UPPER_MD.finditer(text) if m.group(1) not in known]


def outside_refs(text: str) -> list[str]:
    """The references to files outside the repository in `text`."""
    return [m.group(0) for m in OUTSIDE.finditer(text)]


def scanned_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "mkdocs.yml", ROOT / ".ci" / "run"]
    for top in SCANNED:
        files += [p for p in sorted((ROOT / top).rglob("*")) if p.suffix in SUFFIXES and p.is_file()]
    return [p for p in files if p.resolve() != SELF]


def test_scanner_by_hand() -> None:
    text = (f"see {NOTES} trap 4; ({NOTES} 2026-11-30 item 2); ENGINE-{NOTES}: x; ../shared/y; "
            f"shared/{NOTES}-measurement.md; notes about traps; {NOTES.lower()} trap 1; {NOTES}_ONLY = 1; "
            "the shared memory; docs/facts.md#x")
    assert outside_refs(text) == [NOTES, NOTES, f"ENGINE-{NOTES}", "../shared/", "shared/",
                                  f"{NOTES}-measurement.md"]
    assert outside_refs("/work/shared/fixtures") == ["/work/shared/"]


def test_unknown_md_by_hand() -> None:
    known = {"README.md", "facts.md"}
    text = "see METHOD.md and README.md; docs/facts.md; x.md; out/KINDS.md; HOPPER-2.md."
    assert unknown_md(text, known) == ["METHOD.md", "HOPPER-2.md"]


def test_no_named_notes_file_that_the_repository_lacks() -> None:
    known = repo_md_names()
    found = [f"{p.relative_to(ROOT).as_posix()}: {name}" for p in scanned_files()
             for name in unknown_md(p.read_text(encoding="utf-8", errors="replace"), known)]
    assert not found, "a Markdown file named here is not in the repository: " + "; ".join(found)


def test_no_reference_outside_the_repository() -> None:
    found = []
    for path in scanned_files():
        rel = path.relative_to(ROOT).as_posix()
        if rel in PENDING:
            continue
        found += [f"{rel}: {ref}" for ref in outside_refs(path.read_text(encoding="utf-8", errors="replace"))]
    assert not found, "state the fact, or point at the docs page that states it (docs/facts.md): " + "; ".join(found)


def test_pending_entries_still_hold_their_reference() -> None:
    for rel, why in PENDING.items():
        assert why and outside_refs((ROOT / rel).read_text()), f"{rel} is clean now: drop it from PENDING"


def test_every_facts_anchor_a_comment_names_exists() -> None:
    """`docs/facts.md#anchor` in a comment must name a heading of the facts page."""
    anchors = set(re.findall(r"\{#([\w-]+)\}", (ROOT / "docs" / "facts.md").read_text()))
    named = set()
    for path in scanned_files():
        named |= set(re.findall(r"docs/facts\.md#([\w-]+)", path.read_text(encoding="utf-8", errors="replace")))
    assert named and named <= anchors, f"anchors named but not on docs/facts.md: {sorted(named - anchors)}"
