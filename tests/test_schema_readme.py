"""The run-directory page (docs/run-dirs.md) documents the run-dir schema exactly as l2attr/schema.py defines it."""

import sys
from pathlib import Path

from l2attr.schema import markdown_doc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "docgen"))
from doc_pages import between, text_with  # noqa: E402


def test_readme_schema_section_is_current():
    begin = "<!-- schema:begin -->\n"
    assert between(text_with(begin), begin, "<!-- schema:end -->") == markdown_doc()


def test_run_dirs_manifest_section_is_the_schema():
    """The manifest fields docs/run-dirs.md lists are the typed rules every reader applies."""
    from l2attr.integrity.manifest import manifest_doc
    from l2attr.kinds import options_models

    begin = "<!-- manifest:begin -->\n"
    assert between(text_with(begin), begin, "<!-- manifest:end -->") == manifest_doc(options_models()), (
        "docs/run-dirs.md's manifest section is stale: put l2attr.integrity.manifest.manifest_doc(l2attr.kinds.options_models()) "
        "between its markers")
