"""Properties of the trace reader, against a one-line-at-a-time reference written from its rules.

The reader parses whole files with numpy in chunks; the reference applies the documented rules
(l2attr/dlrm/workload/traces.py) line by line with a regular expression. On any file they must agree:
the same ids, or an error naming the same first bad line.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import l2attr.dlrm.workload.traces as traces_mod
from l2attr.errors import UserError
from l2attr.dlrm.workload.traces import parse_ids, trace_from_bytes, write_ids

GOOD_LINE = re.compile(rb"[ \t\r]*[0-9]{1,18}[ \t\r]*")
MAX_ID = 10**18 - 1


def reference(data: bytes) -> list[int] | int:
    """The ids, or the 1-based number of the first bad line (0: the file holds no id at all)."""
    body = data.rstrip(b" \t\r\n")
    if not body:
        return 0
    ids = []
    for number, line in enumerate(body.split(b"\n"), start=1):
        if not GOOD_LINE.fullmatch(line):
            return number
        ids.append(int(line))
    return ids


blank = st.sampled_from([b"", b" ", b"\t", b"\r", b"  \t"])
good_line = st.builds(lambda a, n, b: a + str(n).encode() + b, blank, st.integers(0, MAX_ID), blank)
bad_line = st.sampled_from([b"", b"x", b"-3", b"1 2", b"1.5", b"0x10", b"+4", b"7e3", b"\xff",
                            b"1234567890123456789", b"\xc2\xa05"])
lines = st.lists(st.one_of(good_line, good_line, good_line, bad_line), min_size=0, max_size=40)
ending = st.sampled_from([b"", b"\n", b"\n\n", b"\r\n", b" \n \n"])


@given(lines, ending, st.sampled_from([None, 8, 64]))
def test_reader_agrees_with_the_line_by_line_rules(body: list[bytes], end: bytes, chunk: int | None) -> None:
    data = b"\n".join(body) + end
    expected = reference(data)
    with pytest.MonkeyPatch.context() as mp:
        if chunk:
            mp.setattr(traces_mod, "_CHUNK_BYTES", chunk)   # many chunk boundaries
        if isinstance(expected, list):
            assert parse_ids(data, "t").tolist() == expected
            return
        with pytest.raises(UserError) as err:
            parse_ids(data, "t")
    message = str(err.value)
    if expected == 0:
        assert message == "t: file is empty (expected one integer id per line)"
    else:
        assert message.startswith(f"t:{expected}: ")


@given(st.lists(st.integers(0, MAX_ID), min_size=1, max_size=300))
def test_write_then_read_gives_the_ids_back(tmp_path_factory: pytest.TempPathFactory, ids: list[int]) -> None:
    path = tmp_path_factory.mktemp("w") / "t.txt"
    write_ids(path, np.array(ids, dtype=np.int64))
    data = path.read_bytes()
    assert data == b"".join(b"%d\n" % i for i in ids)        # the artifact's format, exactly
    assert trace_from_bytes(path, data).ids.tolist() == ids


@given(st.lists(st.integers(0, 50), min_size=1, max_size=200), st.integers(1, 60))
def test_dropping_out_of_range_ids_keeps_the_rest_in_order(ids: list[int], rows: int) -> None:
    data = b"".join(b"%d\n" % i for i in ids)
    kept = [i for i in ids if i < rows]
    if not kept:
        with pytest.raises(UserError, match=f"all {len(ids)} ids are out of range for {rows} rows"):
            trace_from_bytes(Path("t"), data, rows, drop_out_of_range=True)
        return
    trace = trace_from_bytes(Path("t"), data, rows, drop_out_of_range=True)
    assert trace.ids.tolist() == kept and trace.dropped == len(ids) - len(kept) and trace.lines == len(ids)
    if len(kept) < len(ids):
        first = next(n for n, i in enumerate(ids, start=1) if i >= rows)
        with pytest.raises(UserError, match=rf"^t:{first}: id {ids[first - 1]} is out of range for {rows} rows"):
            trace_from_bytes(Path("t"), data, rows)
