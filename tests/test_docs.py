"""The front door and the docs site: a README of at most 200 lines in the order a newcomer needs,
links that resolve, every docs page in the site's navigation, the site built in strict mode by CI.

`mkdocs build --strict` itself runs in .ci/run (it needs the docs extra and a few seconds); here,
what can be read without building: links, the nav, the order of the README's parts.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
LINK = re.compile(r"\]\(([^)\s]+)\)")
MAX_LINES = 200


def links(text: str) -> list[str]:
    """The targets of the Markdown links of `text` (inline links only, code left out)."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return LINK.findall(re.sub(r"`[^`\n]*`", "", text))


def test_links_by_hand() -> None:
    assert links("see [a](docs/a.md) and `[b](no.md)` and ![p](x.png)\n```\n[c](d.md)\n```") == ["docs/a.md", "x.png"]


def test_readme_is_short() -> None:
    assert README.count("\n") <= MAX_LINES, f"README.md has {README.count(chr(10))} lines (at most {MAX_LINES})"


def test_readme_parts_in_order() -> None:
    """What it answers, the picture, the two commands, the two snippets, the headline, the table, the docs."""
    marks = ["\n\nl2attr answers", "](examples/report_first_screen.png)", "```bash\n",
             "<!-- snippet:own-kernels:begin -->", "l2attr.step(", "<!-- headline:begin -->",
             "## Where to change what", "## Documentation"]
    at = [README.index(m) for m in marks]
    assert at == sorted(at), dict(zip(marks, at))
    intro = README[README.index("\n\n") + 2:README.index("![")].strip()
    assert len(re.findall(r"[.?!](?:\s|$)", intro)) == 2, f"two sentences of what l2attr answers: {intro!r}"


@pytest.mark.parametrize("page", ["README.md", *sorted(p.name for p in (ROOT / "docs").glob("*.md"))])
def test_relative_links_resolve(page: str) -> None:
    path = ROOT / page if page == "README.md" else ROOT / "docs" / page
    for target in links(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue
        file = target.split("#", 1)[0]
        assert not file or (path.parent / file).is_file(), f"{page}: link to {target} points at nothing"


def test_where_to_change_what_names_files_that_exist() -> None:
    table = README[README.index("## Where to change what"):README.index("## Documentation")]
    named = re.findall(r"`([\w./-]+\.(?:py|toml|md|j2))`", table)
    assert named, "the table names no file"
    for rel in named:
        assert (ROOT / rel).is_file(), f"the README's table names {rel}, which does not exist"


def test_every_docs_page_is_in_the_nav_and_back() -> None:
    nav = set(re.findall(r":\s*([\w-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), flags=re.M))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert nav == pages, f"in the nav only: {sorted(nav - pages)}; on disk only: {sorted(pages - nav)}"


def test_ci_builds_the_site_strictly() -> None:
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert any("mkdocs build --strict" in line and not line.startswith("#") for line in lines)
    assert "strict: true" in (ROOT / "mkdocs.yml").read_text()


def test_every_command_has_a_row_in_the_commands_page() -> None:
    """docs/commands.md lists every subcommand the CLI has (l2attr.cli.SUBCOMMANDS)."""
    from l2attr.cli import SUBCOMMANDS

    page = (ROOT / "docs" / "commands.md").read_text()
    rows = {line.split("`")[1].split()[1] for line in page.splitlines() if line.startswith("| `l2attr ")}
    assert {str(c) for c in SUBCOMMANDS} <= rows, f"no row for: {sorted({str(c) for c in SUBCOMMANDS} - rows)}"
