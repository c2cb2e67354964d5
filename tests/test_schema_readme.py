"""The README documents the run-dir schema exactly as l2attr/schema.py defines it."""

from pathlib import Path

from l2attr.schema import markdown_doc

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_schema_section_is_current():
    text = README.read_text()
    section = text.split("<!-- schema:begin -->\n")[1].split("<!-- schema:end -->")[0]
    assert section == markdown_doc()
