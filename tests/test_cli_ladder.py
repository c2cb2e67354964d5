"""`l2attr ladder` bad input on the CPU: one stderr line, exit 2, no traceback, no run dir."""

from __future__ import annotations

import pytest

from l2attr.cli import main
from tests.conftest import _gpu_available


@pytest.mark.parametrize("argv, needle", [
    (["--family", "fast", "--rungs", "baseline,rpf_optmt"], "the fast family implements none of them"),
    (["--rungs", "baseline,fast"], "unknown rung 'fast'; valid: baseline, optmt"),
    (["--profiles", "hot"], "unknown profile 'hot'; valid: reuse_high"),
    (["--block", "32"], "--block must be two integers"),
    (["--block", "64,32"], "--block must be positive x, y with x*y <= 1024 (got [64, 32])"),
    # the options model's rules (dlrm/measure/options.py), named by the flag
    (["--repeats", "0"], "--repeats must be a whole number >= 1 and <= 1000000000 (got 0)"),
    (["--spin-us", "nan"], "--spin-us must be a finite number >= 0 and <= 1e+06 (got nan)"),
    (["--max-seconds", "inf"], "--max-seconds must be a finite number > 0"),
    (["--fast-maxrregcount", "8"], "--fast-maxrregcount must be 0 (no cap) or >= 16 (got 8)"),
    (["--min-repeats", "3", "--max-repeats", "2"], "--max-repeats must be at least min_repeats (3) (got 2)"),
    (["--l2", "warm"], "--l2 must be one or more of natural"),
    (["--rows", "0"], "rows must be a positive integer"),
    (["--batch-size", "-4"], "batch_size must be a positive integer"),
    (["--hot-rows", "600000"], "hot_rows (600000) is larger than rows"),
    (["--trace", "x.txt", "--profiles", "random"], "either --trace or --profiles"),
])
def test_bad_ladder_input(argv, needle, tmp_path, capsys):
    rc = main(["ladder", *argv, "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and needle in err[0]
    assert "Traceback" not in err[0]
    assert not any(tmp_path.iterdir())


@pytest.mark.skipif(_gpu_available(), reason="this machine has a GPU")
def test_no_gpu_is_one_line_pointing_to_cpu_commands(tmp_path, capsys):
    rc = main(["ladder", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert "l2attr traces" in err[0] and "l2attr report" in err[0]
    assert not any(tmp_path.iterdir())


def test_resume_of_missing_run_dir(tmp_path, capsys):
    rc = main(["ladder", "--resume", str(tmp_path / "nope")])
    assert rc == 2
    assert "run dir not found" in capsys.readouterr().err
