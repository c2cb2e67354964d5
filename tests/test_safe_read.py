"""l2attr/safe_read.py: a file the user may damage is read without blocking and without bound
(issue 52: a FIFO blocked the reader, /dev/zero read to MemoryError, deep JSON was a RecursionError)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from l2attr.errors import UserError
from l2attr.rundir import RunDir
from l2attr.safe_read import not_a_file, read_json_limited, read_text_limited
from test_report_walk import at_most


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "m.json")
    with at_most(10), pytest.raises(UserError, match=r"m.json: is a FIFO \(named pipe\), not a regular file"):
        read_json_limited(tmp_path / "m.json", 1000, 8)


def test_a_fifo_manifest_is_one_line_not_a_wait(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "manifest.json")
    with at_most(10), pytest.raises(UserError, match="is a FIFO"):
        RunDir(tmp_path).manifest()


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_a_device_is_refused_without_reading_it(tmp_path: Path) -> None:
    (tmp_path / "memo.json").symlink_to("/dev/zero")
    with at_most(10), pytest.raises(UserError, match="is a device, not a regular file"):
        read_text_limited(tmp_path / "memo.json", 1 << 30)


def test_a_folder_and_a_missing_file_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="is a folder, not a regular file"):
        read_text_limited(tmp_path, 10)
    with pytest.raises(UserError, match=r"cannot be read \(No such file or directory\)"):
        read_text_limited(tmp_path / "nope", 10)
    (tmp_path / "link").symlink_to("gone")
    assert not_a_file(tmp_path / "link") == "a dangling link to gone"


def test_the_size_limit(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x" * 11)
    assert read_text_limited(tmp_path / "f", 11) == "x" * 11
    with pytest.raises(UserError, match="f: larger than 10 bytes"):
        read_text_limited(tmp_path / "f", 10)


def test_deep_nesting_is_refused_before_the_parser_recurses(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("[" * 200000 + "]" * 200000)
    with pytest.raises(UserError, match="nested more than 64 levels deep"):
        read_json_limited(tmp_path / "f", 1 << 20, 64)
    (tmp_path / "g").write_text('{"a": "[[[[[[", "b": [[1]]}')      # brackets inside strings do not count
    assert read_json_limited(tmp_path / "g", 100, 3) == {"a": "[[[[[[", "b": [[1]]}


def test_bad_text_and_bad_json_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b'{"a": "\xff"}')
    with pytest.raises(UserError, match=r"must be UTF-8 text \(byte 7 is not\)"):
        read_json_limited(tmp_path / "f", 100, 8)
    (tmp_path / "g").write_text('{"a": ')
    with pytest.raises(UserError, match="not valid JSON"):
        read_json_limited(tmp_path / "g", 100, 8)
