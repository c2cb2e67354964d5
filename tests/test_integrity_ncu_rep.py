"""A `.ncu-rep` damaged inside (bytes overwritten, not cut) is refused, or read partially on request.

ncu_report reads a result whose bytes do not parse as an empty kernel (no name, no metrics) and
says nothing, so the import used to return one kernel fewer. Each test damages a copy of a
committed fixture in tmp_path; the fixture's layout (where each result's bytes lie) is known from
its block headers (tests/test_ncu_import.py APP_BLOCK_ENDS).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from l2attr.cli import main
from l2attr.errors import UserError
from l2attr.profile.ncu_file import declared_results
from l2attr.profile.ncu_import import read_report
from l2attr.profile.ncu_rows import check_results

FIXTURES = Path(__file__).parent / "fixtures" / "ncu"
APP_REPORT = FIXTURES / "pin_consume_app_replay_h200.ncu-rep"     # 8 kernels, one per block
# the 4th kernel's block (launch 3) runs from byte 346,861 to 455,320 (tests/test_ncu_import.py)
MID = 400_000


def damaged_copy(tmp_path: Path, src: Path = APP_REPORT, at: int = MID, n: int = 2_000,
                 fill: int = 0xAB) -> Path:
    out = tmp_path / f"damaged_{src.name}"
    data = bytearray(src.read_bytes())
    data[at:at + n] = bytes([fill]) * n
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize("name, results", [
    ("pin_consume_app_replay_h200.ncu-rep", 8), ("pin_consume_kernel_replay_h200.ncu-rep", 3),
    ("evict_natural.ncu-rep", 4), ("range_pmsampling_pin_consume_h200.ncu-rep", 1),
    ("range_evictlast_pin_consume_h200.ncu-rep", 1)])
def test_block_headers_declare_every_result(name, results):
    """Counted by hand from each fixture's README entry: kernels, or one range result."""
    assert declared_results(FIXTURES / name) == results


def test_a_whole_report_passes_the_check():
    res = read_report(APP_REPORT)
    assert res.table["launch"].nunique() == 8
    assert res.partial == []


@pytest.mark.parametrize("fill", [0xAB, 0x00])
def test_two_thousand_bytes_overwritten_mid_file_are_refused(tmp_path, fill):
    bad = damaged_copy(tmp_path, fill=fill)
    with pytest.raises(UserError) as err:
        read_report(bad)
    msg = str(err.value)
    assert msg.startswith(f"{bad}: 1 of the 8 results (kernels) its block headers declare are damaged")
    assert "first at launch 3" in msg
    assert "--allow-partial" in msg


def test_allow_partial_keeps_the_intact_kernels_and_says_so(tmp_path):
    bad = damaged_copy(tmp_path)
    res = read_report(bad, allow_partial=True)
    assert sorted(res.table["launch"].unique()) == [0, 1, 2, 4, 5, 6, 7]
    assert len(res.partial) == 1 and "1 of the 8 results" in res.partial[0]
    # the intact kernels' values are the whole report's
    whole = read_report(APP_REPORT).table
    keep = whole[whole["launch"] != 3].reset_index(drop=True)
    assert res.table.drop(columns="report").equals(keep.drop(columns="report"))


def test_cli_import_refuses_in_one_line(tmp_path, capsys):
    bad = damaged_copy(tmp_path)
    assert main(["profile", "--import", str(bad)]) == 2
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "damaged or missing" in lines[0] and str(bad) in lines[0]
    assert out == ""


def test_cli_import_allow_partial_says_so_first(tmp_path, capsys):
    bad = damaged_copy(tmp_path)
    assert main(["profile", "--import", str(bad), "--allow-partial"]) == 0
    out = capsys.readouterr().out
    first = [ln for ln in out.splitlines() if ln.strip()][0]
    assert first.startswith("PARTIAL (--allow-partial)") and "1 of the 8 results" in first
    assert "7 kernels" in out


def test_cli_import_csv_allow_partial_notes_on_stderr(tmp_path, capsys):
    import io

    import pandas as pd

    bad = damaged_copy(tmp_path)
    assert main(["profile", "--import", str(bad), "--csv", "--allow-partial"]) == 0
    out, err = capsys.readouterr()
    assert "partial data (--allow-partial)" in err.splitlines()[0]
    assert sorted(pd.read_csv(io.StringIO(out))["launch"].unique()) == [0, 1, 2, 4, 5, 6, 7]


def test_allow_partial_is_an_import_flag(capsys):
    assert main(["profile", "--allow-partial", "--dry-run"]) == 2
    assert "--allow-partial only applies to --import" in capsys.readouterr().err


def _ctx(actions: list[SimpleNamespace]) -> SimpleNamespace:
    rng = SimpleNamespace(num_actions=lambda: len(actions), action_by_idx=lambda i: actions[i])
    return SimpleNamespace(num_ranges=lambda: 1, range_by_idx=lambda i: rng)


def _action(name: str | None, metrics: int) -> SimpleNamespace:
    return SimpleNamespace(name=lambda: name, metric_names=lambda: [f"m{i}" for i in range(metrics)])


def test_a_result_ncu_report_drops_entirely_is_missing():
    """Fewer actions than the block headers declare (8 for this file) is refused too."""
    assert check_results(_ctx([_action("k", 3)] * 8), APP_REPORT) is None
    msg = check_results(_ctx([_action("k", 3)] * 7), APP_REPORT)
    assert msg is not None and "1 of the 8 results" in msg and "first at launch" not in msg
    msg = check_results(_ctx([_action("k", 3)] * 6 + [_action(None, 0), _action("k", 0)]), APP_REPORT)
    assert msg is not None and "2 of the 8 results" in msg and "first at launch 6" in msg


def test_the_pm_sampling_reader_refuses_a_damaged_range(tmp_path):
    """The timeline reader opens reports the same way: its one range result damaged is refused."""
    from l2attr.profile.pmsampling import read_pm_report

    src = FIXTURES / "range_pmsampling_pin_consume_h200.ncu-rep"
    # the range result's block runs from byte 91,898 to the end (993,417 bytes of payload)
    bad = damaged_copy(tmp_path, src=src, at=500_000)
    with pytest.raises(UserError, match="1 of the 1 results .* damaged or missing"):
        read_pm_report(bad)
    shutil.copy(src, tmp_path / "whole.ncu-rep")
    assert read_pm_report(tmp_path / "whole.ncu-rep") is not None
