"""Output-path and size checks, on paths and numbers whose answer is known by hand."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from l2attr import outputs
from l2attr.errors import UserError
from l2attr.outputs import check_distinct, check_output


def test_output_equal_to_an_input_is_refused_through_any_spelling(tmp_path: Path) -> None:
    data = tmp_path / "med.txt"
    data.write_text("1\n")
    (tmp_path / "sub").mkdir()
    os.symlink(data, tmp_path / "link.txt")
    os.link(data, tmp_path / "hard.txt")
    for spelling in (data, tmp_path / "sub" / ".." / "med.txt", tmp_path / "link.txt", tmp_path / "hard.txt"):
        with pytest.raises(UserError, match="is an input of this command"):
            check_output(spelling, "--out", inputs=[data])
    assert check_output(tmp_path / "other.txt", "--out", inputs=[data, None]) == tmp_path / "other.txt"
    assert data.read_text() == "1\n"


def test_output_folder_must_exist_and_output_must_not_be_one(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"folder .*/missing does not exist \(create it first\)"):
        check_output(tmp_path / "missing" / "x.txt", "--out")
    assert not (tmp_path / "missing").exists()
    with pytest.raises(UserError, match="is a directory"):
        check_output(tmp_path, "-o")


def test_two_outputs_naming_one_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="--out and --hot-out name the same file"):
        check_distinct({"--out": tmp_path / "a.txt", "--hot-out": tmp_path / "." / "a.txt"})
    check_distinct({"--out": tmp_path / "a.txt", "--hot-out": None})
    check_distinct({"--out": tmp_path / "a.txt", "--hot-out": tmp_path / "b.txt"})


@pytest.mark.parametrize("n, text", [(0, "0 bytes"), (999, "999 bytes"), (1000, "1 kB"),
                                     (361_267_200, "361 MB"), (1_490_000_000_000_000, "1.49 PB")])
def test_human_bytes(n: int, text: str) -> None:
    assert outputs.human_bytes(n) == text


def test_id_file_bytes_is_the_longest_line_times_n() -> None:
    assert outputs.id_file_bytes(3, 100) == 9            # "99\n" is the longest line below 100 rows
    assert outputs.id_file_bytes(51_609_600, 500_000) == 51_609_600 * 7
    assert outputs.id_file_bytes(5, 1) == 10             # only id 0: "0\n"


def test_memory_and_disk_checks_compare_with_what_is_there(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    monkeypatch.setattr(outputs, "available_memory", lambda: 2_000_000_000)
    outputs.check_memory(2_000_000_000, "x", "shrink it")
    with pytest.raises(UserError, match="^x needs about 2 GB of memory, this machine has 2 GB available; shrink it$"):
        outputs.check_memory(2_000_000_001, "x", "shrink it")
    monkeypatch.setattr(outputs, "free_disk", lambda folder: 1_000)
    outputs.check_disk(1_000, tmp_path / "t.txt", "elsewhere")
    with pytest.raises(UserError, match="would take up to 1 kB, the disk holding .* has 1 kB free"):
        outputs.check_disk(1_001, tmp_path / "t.txt", "elsewhere")


def test_available_memory_reads_memavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    meminfo = "MemTotal:       1000 kB\nMemFree:         100 kB\nMemAvailable:    50 kB\n"
    monkeypatch.setattr(outputs, "open", lambda path: io.StringIO(meminfo), raising=False)
    assert outputs.available_memory() == 50 * 1024


def test_fast_geometry_by_hand():
    """The fast launcher's vector width, lane groups and column slices for dims whose answer is
    plain: 128 fp32 = 32 float4 (a warp per row), 32 fp32 = 8 float4 (4 rows per warp), 256 fp32 =
    two slices of 32 float4, 100 fp32 = 25 float4 on 32 lanes, 33 fp32 = scalars on 32 lanes x 2
    slices, 128 fp16 = 16 x 8-half vectors; a misaligned base or an odd stride narrows the vector."""
    from l2attr.dlrm.measure.kernels import fast_geometry

    g = fast_geometry(128, 128, 4, 0, 0, 2048, 2, 4)
    assert (g.vec, g.lanes_per_row, g.col_slices, g.block, g.grid) == (4, 32, 1, (32, 2, 4), 512)
    assert g.shared_bytes == 4 * 1 * (32 * 4 * 4 + 4)
    assert (fast_geometry(32, 32, 4, 0, 0, 10, 1, 1).lanes_per_row, fast_geometry(32, 32, 4, 0, 0, 10, 1, 1).shared_bytes) == (8, 0)
    g = fast_geometry(256, 256, 4, 0, 0, 10, 2, 4)
    assert (g.vec, g.lanes_per_row, g.col_slices, g.grid) == (4, 32, 2, 5)
    def head(*a):
        g = fast_geometry(*a)
        return (g.vec, g.lanes_per_row, g.col_slices)

    assert head(100, 100, 4, 0, 0, 1, 1, 1) == (4, 32, 1)
    assert head(33, 33, 4, 0, 0, 1, 1, 1) == (1, 32, 2)
    assert head(128, 128, 2, 0, 0, 1, 1, 1) == (8, 16, 1)
    assert fast_geometry(128, 128, 4, 8, 0, 1, 1, 1).vec == 2      # base only 8-byte aligned
    assert fast_geometry(128, 129, 4, 0, 0, 1, 1, 1).vec == 1      # odd row stride
