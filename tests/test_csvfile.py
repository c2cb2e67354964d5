"""Complete-table check: whole rows of the header's width, a newline at the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from l2attr.csvfile import check_complete, read_complete_csv
from l2attr.errors import UserError


def test_quoted_commas_and_newlines_are_one_field() -> None:
    check_complete(b'kernel,value\n"void f<int, float>()",1\n"two\nlines",2\n', "t.csv")


@pytest.mark.parametrize("data, message", [
    (b"", "t.csv: file is empty (was the run interrupted?)"),
    (b"a,b,c\n1,2,3\n4,5", "t.csv:3: the last row is cut off (no newline at the end; was the file truncated?)"),
    (b"a,b,c\n1,2,3\n4,5\n6,7,8\n", "t.csv:3: the row has 2 field(s), the header 3 (cut short or damaged)"),
    (b"a,b,c\n1,2,3,4\n", "t.csv:2: the row has 4 field(s), the header 3 (cut short or damaged)"),
    (b"a,b,c\n1,2,3\n\n", "t.csv:3: the row has 0 field(s), the header 3 (cut short or damaged)"),
    # an unclosed quote swallows the rest of the file into one field
    (b'a,b\n"x\n1,2\n', "t.csv:3: the row has 1 field(s), the header 2 (cut short or damaged)"),
    (b"a,b\n\xff,1\n", "t.csv: unreadable CSV (not UTF-8 at byte 4)"),
])
def test_damaged_tables_name_file_and_line(data: bytes, message: str) -> None:
    with pytest.raises(UserError) as err:
        check_complete(data, "t.csv")
    assert str(err.value) == message


def test_header_only_is_complete_and_reads_as_no_rows(tmp_path: Path) -> None:
    f = tmp_path / "cells.csv"
    f.write_text("a,b\n")
    assert read_complete_csv(f).empty and list(read_complete_csv(f).columns) == ["a", "b"]


def test_partial_mode_drops_ragged_and_cut_rows():
    from l2attr.errors import Damage

    damage = Damage(allow_partial=True)
    data = b"a,b\n1,2\n3\n4,5\n6,"
    kept = check_complete(data, "t.csv", damage)
    assert kept == b"a,b\n1,2\n4,5\n"
    assert damage.messages == ["t.csv:5: the last row is cut off (no newline at the end; was the file truncated?)",
                               "t.csv:3: the row has 1 field(s), the header 2 (cut short or damaged)"]
