"""Reading and writing the artifact's trace format, hot files, and trace-based workloads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import HOT_MEDIUM_CUT, MEDIUM_CUT

import l2attr.dlrm.workload.traces as traces_mod
from l2attr.dlrm.config import WorkloadConfig
from l2attr.errors import UserError
from l2attr.dlrm.workload import build_workload, read_hot_file, read_trace, write_ids
from l2attr.dlrm.workload.hotset import id_counts, top_k
from l2attr.dlrm.workload.traces import circular, parse_ids

SMALL = WorkloadConfig(tables=3, rows=1000, batch_size=4, pooling=5, batches=2,
                       warmup_batches=1, hot_rows=10)


def _write(tmp_path: Path, text: str | bytes, name: str = "t.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# --- parsing -------------------------------------------------------------------------------

def test_roundtrip_write_read(tmp_path: Path) -> None:
    ids = np.array([0, 7, 10, 99, 100, 123456, 499999, 3], dtype=np.int64)
    path = tmp_path / "out" / "t.txt"
    write_ids(path, ids)
    assert path.read_text() == "0\n7\n10\n99\n100\n123456\n499999\n3\n"
    trace = read_trace(path, rows=500_000)
    assert trace.ids.dtype == np.int64
    assert np.array_equal(trace.ids, ids)
    assert trace.lines == 8 and trace.dropped == 0 and len(trace.sha256) == 64
    assert [p.name for p in path.parent.iterdir()] == ["t.txt"]  # no temp file left behind


def test_blanks_crlf_and_trailing_blank_lines_are_accepted(tmp_path: Path) -> None:
    path = _write(tmp_path, b"1\r\n  2 \r\n\t3\n\n\n")
    assert read_trace(path).ids.tolist() == [1, 2, 3]


def test_no_final_newline(tmp_path: Path) -> None:
    assert read_trace(_write(tmp_path, "4\n5")).ids.tolist() == [4, 5]


@pytest.mark.parametrize("text, line, reason", [
    ("1\n2\nabc\n4\n", 3, "not an integer: 'abc'"),
    ("1\n1.5\n", 2, "not an integer: '1.5'"),
    ("1\n2 3\n", 2, "not an integer: '2 3'"),
    ("+4\n", 1, "not an integer: '+4'"),
    ("1\n-2\n3\n", 2, "negative id -2"),
    ("1\n\n3\n", 2, "empty line"),
    ("\n1\n", 1, "empty line"),
    ("5\n99999999999999999999\n", 2, "is too large"),
])
def test_bad_line_names_file_and_line(tmp_path: Path, text: str, line: int, reason: str) -> None:
    path = _write(tmp_path, text, "reuse_x.txt")
    with pytest.raises(UserError) as exc:
        read_trace(path, rows=500_000)
    message = str(exc.value)
    assert message.startswith(f"{path}:{line}: ")
    assert reason in message
    assert "\n" not in message


def test_negative_is_an_error_even_when_dropping(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r":2: negative id -1"):
        read_trace(_write(tmp_path, "1\n-1\n"), rows=10, drop_out_of_range=True)


def test_out_of_range_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "".join(f"{i}\n" for i in range(16)) + "612345\n", "reuse_x.txt")
    with pytest.raises(UserError) as exc:
        read_trace(path, rows=500_000)
    assert str(exc.value).startswith(f"{path}:17: id 612345 is out of range for 500000 rows")
    assert "--drop-out-of-range" in str(exc.value)


def test_drop_out_of_range_drops_like_the_artifact(tmp_path: Path) -> None:
    trace = read_trace(_write(tmp_path, "1\n10\n2\n11\n3\n"), rows=10, drop_out_of_range=True)
    assert trace.ids.tolist() == [1, 2, 3]
    assert trace.lines == 5 and trace.dropped == 2


def test_all_out_of_range_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="all 2 ids are out of range for 10 rows"):
        read_trace(_write(tmp_path, "10\n11\n"), rows=10, drop_out_of_range=True)


@pytest.mark.parametrize("content", [b"", b"\n\n", b"  \n \r\n"])
def test_empty_file(tmp_path: Path, content: bytes) -> None:
    with pytest.raises(UserError, match="file is empty"):
        read_trace(_write(tmp_path, content))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="trace file not found: .*nope.txt"):
        read_trace(tmp_path / "nope.txt")


def test_directory_is_not_a_trace(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="is a directory"):
        read_trace(tmp_path)


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # chmod does not stop root, so make the read itself fail the way the OS would
    path = _write(tmp_path, "1\n")

    def deny(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", deny)
    with pytest.raises(UserError, match="cannot read \\(permission denied\\)"):
        read_trace(path)


def test_chunked_parse_matches_and_counts_lines_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 10**9, 5000)
    data = "\n".join(str(i) for i in ids).encode()
    monkeypatch.setattr(traces_mod, "_CHUNK_BYTES", 64)
    assert np.array_equal(parse_ids(data, "x"), ids)
    bad = data.split(b"\n")
    bad[3210] = b"oops"
    with pytest.raises(UserError, match=r"^x:3211: not an integer: 'oops'$"):
        parse_ids(b"\n".join(bad), "x")


def test_circular_reads_with_one_cursor() -> None:
    assert circular(np.array([1, 2, 3]), 8).tolist() == [1, 2, 3, 1, 2, 3, 1, 2]
    assert circular(np.array([1, 2, 3]), 2).tolist() == [1, 2]
    with pytest.raises(UserError):
        circular(np.array([], dtype=np.int64), 3)


def test_artifact_medium_cut_reads_exactly() -> None:
    # expected: wc -l, head -3, sort -n | head -1 / tail -1, sha256sum (fixtures/traces/README.md)
    trace = read_trace(MEDIUM_CUT, rows=500_000)
    assert trace.lines == 4_000 and trace.ids.size == 4_000
    assert trace.ids[:3].tolist() == [31650, 359284, 222813]
    assert (int(trace.ids.min()), int(trace.ids.max())) == (460, 499_647)
    assert trace.sha256 == "9cc63f13212a9dfe336e0a4adc037670df65e35d79826122ff2501d2e8fa7f8e"


# --- hot files -----------------------------------------------------------------------------

def test_hot_file_reads_and_checks_length(tmp_path: Path) -> None:
    path = _write(tmp_path, "5\n3\n9\n")
    assert read_hot_file(path, rows=10).tolist() == [5, 3, 9]
    assert read_hot_file(path, rows=10, k=3).tolist() == [5, 3, 9]
    with pytest.raises(UserError, match="has 3 ids but the workload pins hot_rows=4"):
        read_hot_file(path, rows=10, k=4)


def test_hot_file_duplicates_are_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "5\n3\n9\n3\n5\n")
    with pytest.raises(UserError, match=r":4: id 3 repeats line 2"):
        read_hot_file(path, rows=10)


def test_hot_file_ids_must_be_below_rows(tmp_path: Path) -> None:
    path = _write(tmp_path, "5\n10\n")
    with pytest.raises(UserError) as exc:
        read_hot_file(path, rows=10)
    assert str(exc.value) == f"{path}:2: id 10 is out of range for 10 rows"


def test_hot_file_missing(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="hot file not found"):
        read_hot_file(tmp_path / "hot.txt", rows=10)


def test_artifact_hot_file_reads_in_its_order() -> None:
    hot = read_hot_file(HOT_MEDIUM_CUT, rows=500_000, k=2_000)
    assert hot[:3].tolist() == [255535, 393984, 151343]          # head -3: hottest first, kept
    assert np.unique(hot).size == 2_000


# --- workloads from a trace ----------------------------------------------------------------

def test_trace_workload_layout_is_batch_major_with_one_cursor(tmp_path: Path) -> None:
    ids = np.arange(37) * 7 % 1000           # 37 ids: the 60-id workload wraps around once
    path = tmp_path / "mini.txt"
    write_ids(path, ids)
    w = build_workload(SMALL, trace=path)
    batches, tables, per = w.indices.shape
    assert (batches, tables, per) == (3, 3, 20) and w.indices.dtype == np.int64
    stream = circular(ids, batches * tables * per)
    for b in range(batches):
        for t in range(tables):
            start = (b * tables + t) * per
            assert np.array_equal(w.indices[b, t], stream[start:start + per])
    assert w.name == "mini"
    assert w.source["kind"] == "trace" and w.source["trace_lookups"] == 37


def test_trace_workload_hot_is_top_k_of_the_trace(tmp_path: Path) -> None:
    ids = np.array([4] * 5 + [2] * 5 + [9] * 3 + list(range(100, 130)))
    path = tmp_path / "t.txt"
    write_ids(path, ids)
    w = build_workload(SMALL, trace=path)
    assert w.hot.tolist()[:3] == [2, 4, 9]     # tie on count 5: smaller id first
    assert w.hot.shape == (10,) and len(set(w.hot.tolist())) == 10
    assert w.source["hot"]["kind"] == "top_k"


def test_trace_workload_with_hot_file(tmp_path: Path) -> None:
    trace, hot = tmp_path / "t.txt", tmp_path / "h.txt"
    write_ids(trace, np.arange(50))
    write_ids(hot, np.arange(10)[::-1])
    w = build_workload(SMALL, trace=trace, hot=hot)
    assert w.hot.tolist() == list(range(9, -1, -1))
    assert w.source["hot"]["kind"] == "file" and len(w.source["hot"]["sha256"]) == 64


def test_trace_workload_errors(tmp_path: Path) -> None:
    trace = tmp_path / "t.txt"
    write_ids(trace, np.array([1, 2, 1500, 3]))
    with pytest.raises(UserError, match=r"t.txt:3: id 1500 is out of range for 1000 rows"):
        build_workload(SMALL, trace=trace)
    w = build_workload(SMALL.replace(hot_rows=3), trace=trace, drop_out_of_range=True)
    assert set(np.unique(w.indices).tolist()) == {1, 2, 3}
    assert w.source["dropped_out_of_range"] == 1
    with pytest.raises(UserError, match="top-k 10 is larger than the 3 unique ids"):
        build_workload(SMALL, trace=trace, drop_out_of_range=True)
    with pytest.raises(UserError, match="exactly one of a profile or a trace"):
        build_workload(SMALL)
    with pytest.raises(UserError, match="exactly one of a profile or a trace"):
        build_workload(SMALL, profile="medium", trace=trace)


def test_trace_workload_cache_keys_on_file_content(tmp_path: Path) -> None:
    trace, cache = tmp_path / "t.txt", tmp_path / "cache"
    write_ids(trace, np.arange(40))
    first = build_workload(SMALL, trace=trace, cache_dir=cache)
    again = build_workload(SMALL, trace=trace, cache_dir=cache)
    assert first.source["cache"]["hit"] is False and again.source["cache"]["hit"] is True
    assert np.array_equal(first.indices, again.indices)
    write_ids(trace, np.arange(40)[::-1])       # same path, new content: a new key
    changed = build_workload(SMALL, trace=trace, cache_dir=cache)
    assert changed.source["cache"]["hit"] is False
    assert changed.indices[0, 0, 0] == 39
