"""docs/integrity.md lists each integrity rule with its test: every test it names exists (the
file, and the test function where it names one), and every run kind has its section."""

from __future__ import annotations

import re

from conftest import REPO

PAGE = REPO / "docs" / "integrity.md"


def test_every_test_the_page_names_exists() -> None:
    text = PAGE.read_text()
    named = re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?`", text)
    assert len(named) >= 20
    for path, function in named:
        f = REPO / path
        assert f.is_file(), path
        if function:
            assert re.search(rf"^def {function}\(", f.read_text(), re.M), f"{path}::{function}"


def test_every_run_kind_has_a_section() -> None:
    from l2attr.vocab import RUN_KINDS

    headings = set(re.findall(r"^## (\w+)", PAGE.read_text(), re.M))
    for kind in RUN_KINDS:
        assert kind.capitalize() in headings, kind
