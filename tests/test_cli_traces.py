"""`l2attr traces ...` end to end: output, files written, and one-line errors with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import HOT_MEDIUM_CUT, LOW_CUT, MEDIUM_CUT

from l2attr.cli import main
from l2attr.dlrm.config import WorkloadConfig
from l2attr.dlrm.workload import build_workload, read_trace
from l2attr.dlrm.workload.hotset import id_counts, top_k


def _fails(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run, expect exit 2 with exactly one stderr line and no traceback; return that line."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("l2attr traces: error: ")
    return lines[0]


def _write(tmp_path: Path, text: str, name: str = "t.txt") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- stats ---------------------------------------------------------------------------------

def test_stats_of_the_artifacts_medium_trace_cut(capsys: pytest.CaptureFixture[str]) -> None:
    # expected values: coreutils/awk on the same file (tests/fixtures/traces/README.md)
    assert main(["traces", "stats", str(MEDIUM_CUT), "--rows", "500000", "--top-k", "1000"]) == 0
    out = capsys.readouterr().out
    for text in ("4,000", "1,297", "top-1,000 coverage", "92.6 %", "62 lookups", "338 lookups",
                 "time distance"):                      # 3,703 / 4,000; median 62, p90 337.8
        assert text in out
    assert "hot file coverage" not in out
    assert main(["traces", "stats", str(MEDIUM_CUT), "--rows", "500000", "--top-k", "1000",
                 "--hot", str(HOT_MEDIUM_CUT)]) == 0
    out = capsys.readouterr().out
    assert "hot file coverage" in out and "26.3 %" in out                    # 1,052 / 4,000
    assert "hot60k_medium_head2000.txt, 2,000 ids" in out


def test_stats_low_cut_json_with_the_default_top_k(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["traces", "stats", str(LOW_CUT), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["lookups"], data["unique"], data["reuses"]) == (4_000, 3_842, 158)
    # the default K (60,000) exceeds the 3,842 unique ids: all of them, 100 %
    assert (data["top_k"], data["top_k_requested"], data["top_k_coverage"]) == (3_842, 60_000, 1.0)
    assert (data["reuse_median"], data["reuse_p90"]) == (551.5, pytest.approx(1649.0))
    assert data["hot_coverage"] is None and "stack distance" in data["reuse_definition"]


def test_stats_of_a_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["traces", "stats", "--profile", "medium", "--rows", "50000", "--top-k", "6000",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["lookups"] == 42_995 and data["name"] == "reuse_medium (seed 0)"


def test_stats_drop_out_of_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "1\n2\n50\n2\n")
    assert main(["traces", "stats", str(path), "--rows", "10", "--top-k", "1",
                 "--drop-out-of-range", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["lookups"], data["dropped"], data["top_k_coverage"]) == (3, 1, 2 / 3)


# --- error paths ---------------------------------------------------------------------------

def test_error_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _fails(capsys, ["traces", "stats", str(tmp_path / "nope.txt")])
    assert "trace file not found" in line


def test_error_unreadable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, "1\n")

    def deny(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", deny)
    assert "permission denied" in _fails(capsys, ["traces", "stats", str(path)])


def test_error_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "file is empty" in _fails(capsys, ["traces", "stats", str(_write(tmp_path, ""))])


@pytest.mark.parametrize("text, expected", [
    ("1\n2\nx7\n", ":3: not an integer: 'x7'"),
    ("1\n-4\n", ":2: negative id -4"),
])
def test_error_bad_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                        expected: str) -> None:
    path = _write(tmp_path, text)
    assert f"{path}{expected}" in _fails(capsys, ["traces", "stats", str(path)])


def test_error_out_of_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "".join(f"{i}\n" for i in range(16)) + "612345\n", "reuse_x.txt")
    line = _fails(capsys, ["traces", "stats", str(path), "--rows", "500000", "--top-k", "5"])
    assert f"{path}:17: id 612345 is out of range for 500000 rows" in line


def test_top_k_above_unique_ids_counts_all_of_them(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "1\n2\n2\n")                  # 2 unique ids
    assert main(["traces", "stats", str(path), "--top-k", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["top_k"], data["top_k_requested"], data["top_k_coverage"]) == (2, 3, 1.0)
    assert main(["traces", "stats", str(path), "--top-k", "3"]) == 0
    out = capsys.readouterr().out
    assert "top-2 coverage" in out and "--top-k 3 exceeds them" in out
    assert main(["traces", "stats", str(path), "--top-k", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["top_k"], data["top_k_requested"], data["top_k_coverage"]) == (1, 1, 2 / 3)


def test_error_hot_ids_out_of_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _write(tmp_path, "1\n2\n2\n")
    hot = _write(tmp_path, "2\n10\n", "hot.txt")
    line = _fails(capsys, ["traces", "stats", str(trace), "--rows", "10", "--top-k", "1",
                           "--hot", str(hot)])
    assert f"{hot}:2: id 10 is out of range for 10 rows" in line


def test_error_unknown_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _fails(capsys, ["traces", "gen", "--profile", "warm", "--out", str(tmp_path / "t.txt")])
    assert "unknown profile 'warm'" in line
    assert "reuse_high, reuse_medium, reuse_low, random" in line
    assert "unknown profile 'warm'" in _fails(capsys, ["traces", "stats", "--profile", "warm"])


def test_error_file_and_profile_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "1\n")
    assert "exactly one" in _fails(capsys, ["traces", "stats", str(path), "--profile", "low"])
    assert "exactly one" in _fails(capsys, ["traces", "stats"])


# --- gen and hot ---------------------------------------------------------------------------

def test_gen_writes_one_period_that_the_workload_replays(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out, hot = tmp_path / "medium.txt", tmp_path / "hot.txt"
    args = ["--rows", "20000", "--hot-rows", "500", "--tables", "2", "--batch-size", "64",
            "--pooling", "20", "--batches", "2", "--warmup-batches", "1", "--seed", "3"]
    assert main(["traces", "gen", "--profile", "medium", "--out", str(out),
                 "--hot-out", str(hot), *args]) == 0
    assert "wrote 17,198 ids of reuse_medium" in capsys.readouterr().out
    assert read_trace(out, rows=20_000).ids.size == 17_198
    cfg = WorkloadConfig(tables=2, rows=20_000, batch_size=64, pooling=20, batches=2,
                         warmup_batches=1, hot_rows=500, seed=3)
    from_profile = build_workload(cfg, profile="medium")
    from_file = build_workload(cfg, trace=out, hot=hot)
    assert np.array_equal(from_profile.indices, from_file.indices)
    assert np.array_equal(from_profile.hot, from_file.hot)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hot.txt", "medium.txt"]


def test_gen_lookups(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.txt"
    assert main(["traces", "gen", "--profile", "random", "--out", str(out), "--lookups", "1000",
                 "--rows", "100", "--hot-rows", "10"]) == 0
    ids = read_trace(out, rows=100).ids
    assert ids.size == 1000 and ids.max() < 100


def test_hot_writes_top_k(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _write(tmp_path, "5\n5\n3\n3\n3\n9\n1\n5\n")
    out = tmp_path / "hot.txt"
    assert main(["traces", "hot", str(trace), "--top-k", "2", "--out", str(out),
                 "--rows", "10"]) == 0
    assert out.read_text() == "3\n5\n"        # tie (3x each): smaller id first
    assert "75.0 %" in capsys.readouterr().out
    counts = id_counts(read_trace(trace).ids, 10)
    assert top_k(counts, 2).tolist() == [3, 5]


def test_hot_with_top_k_above_unique_writes_every_id(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    trace = _write(tmp_path, "5\n5\n3\n3\n3\n9\n1\n5\n")   # counts 3:3, 5:3, 1:1, 9:1
    out = tmp_path / "hot.txt"
    assert main(["traces", "hot", str(trace), "--top-k", "5", "--out", str(out), "--rows", "10"]) == 0
    assert out.read_text() == "3\n5\n1\n9\n"
    assert "every unique id, fewer than --top-k 5" in capsys.readouterr().out


# --- outputs and sizes ---------------------------------------------------------------------

def test_hot_never_writes_over_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _write(tmp_path, "5\n5\n3\n")
    line = _fails(capsys, ["traces", "hot", str(trace), "--top-k", "1", "--out", str(trace), "--rows", "10"])
    assert line.endswith(f"--out {trace} is an input of this command; write to another file")
    assert trace.read_text() == "5\n5\n3\n"


def test_gen_refuses_one_file_twice_the_config_and_a_missing_folder(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.txt"
    gen = ["traces", "gen", "--profile", "random", "--lookups", "10", "--rows", "100", "--hot-rows", "1"]
    assert "--out and --hot-out name the same file" in _fails(
        capsys, [*gen, "--out", str(out), "--hot-out", str(out)])
    config = _write(tmp_path, "rows = 100\nhot_rows = 1\n", "w.toml")
    assert "is an input of this command" in _fails(capsys, [*gen, "--config", str(config), "--out", str(config)])
    assert config.read_text() == "rows = 100\nhot_rows = 1\n"
    assert "does not exist (create it first)" in _fails(capsys, [*gen, "--out", str(tmp_path / "no" / "t.txt")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.toml"]


def test_gen_says_the_size_before_writing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.txt"
    assert main(["traces", "gen", "--profile", "random", "--out", str(out), "--lookups", "1000",
                 "--rows", "100", "--hot-rows", "10"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"writing 1,000 ids (up to 3 kB) to {out} ..."    # 1000 lines of at most "99\n"
    assert out.stat().st_size <= 3000


@pytest.mark.parametrize("argv, needle", [
    (["gen", "--profile", "medium", "--rows", "99999999999999", "--out", "x.txt"],
     "generating 85,990,199,999,999 ids over 99,999,999,999,999 rows needs about"),
    (["gen", "--profile", "random", "--lookups", "99999999999999", "--out", "x.txt"],
     "generating 99,999,999,999,999 ids over 500,000 rows needs about 800 TB of memory"),
    (["stats", "--profile", "random", "--lookups", "99999999999999"],
     "statistics of 99,999,999,999,999 lookups over 500,000 rows needs about 4 PB of memory"),
])
def test_sizes_are_checked_before_allocating(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                             needle: str) -> None:
    monkeypatch.chdir(tmp_path)
    line = _fails(capsys, ["traces", *argv])
    assert needle in line and "use fewer --rows or --lookups" in line
    assert not (tmp_path / "x.txt").exists()


def test_stats_of_a_file_checks_memory_once_the_lookups_are_known(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from l2attr import outputs
    path = _write(tmp_path, "".join(f"{i % 10}\n" for i in range(1000)))     # 2,000 bytes
    monkeypatch.setattr(outputs, "available_memory", lambda: 10_000)
    # before reading: 4 x 8 x 10 rows + 2,000 bytes fit; after: 5 x 8 x 1,000 + 320 = 40,320 do not
    line = _fails(capsys, ["traces", "stats", str(path), "--rows", "10", "--top-k", "1"])
    assert line.endswith("statistics of 1,000 lookups over 10 rows needs about 40.3 kB of memory, "
                         "this machine has 10 kB available; use fewer --rows or --lookups")
