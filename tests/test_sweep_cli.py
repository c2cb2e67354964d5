"""`l2attr sweep`: every bad value is one line and exit 2 before any GPU work, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_sweep import LIMITS

from l2attr.cli import main


@pytest.fixture
def fake_device(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A 'GPU' that answers property queries only; any real GPU work would fail the test."""
    touched: list[str] = []
    import l2attr.gpu.runtime as runtime
    import l2attr.gpu.persisting as device

    monkeypatch.setattr(runtime, "require_gpu", lambda *a, **k: (touched.append("require_gpu"), (None, None))[1])
    monkeypatch.setattr(device, "device_limits", lambda: LIMITS)

    def no_gpu_work(*a, **k):
        raise AssertionError("GPU work started before the values were checked")
    import l2attr.dlrm.measure.gpu as mgpu
    monkeypatch.setattr(mgpu, "check_fits", no_gpu_work)
    return touched


@pytest.mark.parametrize("argv, message", [
    (["sweep", "sideways"], "unknown sweep axis 'sideways'; valid: amortisation, hotset, window, occupy, pollution"),
    (["sweep"], "give the AXIS to sweep: one of amortisation, hotset, window, occupy, pollution"),
    (["sweep", "amortisation", "--k", "0"], "--k 0: a pin must serve at least one consumer call (k >= 1)"),
    (["sweep", "amortisation", "--k", "1,two"], "--k '1,two': 'two' is not an integer"),
    (["sweep", "amortisation", "--orders", "sideways"], "--orders 'sideways': use back_to_back, interleaved (comma-separated)"),
    (["sweep", "hotset", "--hot-sizes", "0,600000"], "--hot-sizes 600,000: the hot set is larger than the table (500,000 rows)"),
    (["sweep", "hotset", "--hot-sizes=-5"], "--hot-sizes -5: a hot set cannot be negative"),
    (["sweep", "pollution", "--pollute-mib=0,-7.5"], "--pollute-mib -7.5: the MiB streamed between pin and consumer cannot be negative"),
    (["sweep", "window", "--hit-ratios", "0.5,1.5"], "--hit-ratios 1.5: a window's hitRatio must be in (0, 1]"),
    (["sweep", "window", "--hit-ratios", "nan"], "--hit-ratios 'nan': 'nan' is not a finite number"),
    (["sweep", "amortisation", "--k", "4097"], "--k 4097: at most 4096 consumer calls per pin"),
    (["sweep", "pollution", "--pollute-mib", "2000"],
     "--pollute-mib 2000: at most 1024 MiB (the ring of unrelated data is 1 GiB)"),
    (["sweep", "occupy", "--occupy-mib", "-1"], "--occupy-mib -1: the MiB of L2 held cannot be negative"),
    (["sweep", "window", "--hot-rows", "0"],
     "the window sweep needs hot rows (--hot-rows > 0): the window covers them"),
    (["sweep", "capacity"], "the capacity sweep is now `occupy`: part of L2 held by evict_last lines of a dummy "
                            "buffer before every call (--occupy-mib 0,10,20,30,40)"),
    (["sweep", "amortisation", "--family", "slow"], "unknown family 'slow'; valid: artifact, tuned, fast, all"),
    (["sweep", "amortisation", "--repeats", "0"], "--repeats must be positive, got 0"),
])
def test_bad_values_are_one_line_before_the_gpu(argv, message, tmp_path: Path, fake_device, capsys):
    assert main([*argv, "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert err == f"l2attr sweep: error: {message}\n"
    assert fake_device == [] and not (tmp_path / "runs").exists()


@pytest.mark.parametrize("argv, message", [
    (["sweep", "window", "--hot-rows", "300000"],
     "the window over 300,000 hot rows is 153,600,000 bytes, larger than accessPolicyMaxWindowSize "
     "(134,217,728 bytes); use fewer --hot-rows (at most 262,144)"),
    (["sweep", "occupy", "--occupy-mib", "0,80"], "--occupy-mib 80: more than this GPU's L2 (60 MiB)"),
])
def test_values_beyond_the_devices_limits_are_refused_before_any_gpu_work(argv, message, tmp_path: Path,
                                                                          fake_device, capsys):
    assert main([*argv, "--out", str(tmp_path / "runs")]) == 2
    assert capsys.readouterr().err == f"l2attr sweep: error: {message}\n"
    assert not (tmp_path / "runs").exists()


def test_resume_of_a_ladder_run_is_refused(tmp_path: Path, capsys):
    from helpers_rundirs import write_ladder_run

    run = write_ladder_run(tmp_path)
    assert main(["sweep", "--resume", str(run)]) == 2
    assert "is a 'ladder' run, not a sweep run" in capsys.readouterr().err


def test_ctrl_c_says_how_to_resume(monkeypatch, capsys):
    def boom(args):
        raise KeyboardInterrupt
    monkeypatch.setattr("l2attr.sweep.command.run", boom)
    assert main(["sweep", "amortisation"]) == 130
    assert capsys.readouterr().err == ("l2attr sweep: interrupted; finished units are on disk "
                                       "(use l2attr sweep --resume RUN_DIR)\n")
