"""--workers / --scheduler on the commands: a bad flag is one line and exit 2, said before any GPU
is looked for; without the flags nothing of Dask is imported. Skips where Dask is not installed
(except the line that says it is missing, checked with Dask hidden)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO
from l2attr.cli import main
from l2attr.distribute import cluster, options

COMMANDS = (["ladder"], ["sweep", "amortisation"], ["profile"])


@pytest.fixture
def no_gpu_lookup(monkeypatch):
    """Any look for a GPU fails the test: the flags are checked first."""
    import l2attr.gpu.runtime as runtime

    def looked(*a, **k):
        raise AssertionError("a GPU was looked for before the flags were checked")
    monkeypatch.setattr(runtime, "require_gpu", looked)


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("cmd", COMMANDS)
@pytest.mark.parametrize("flags, said", [
    (["--workers", "0"], "--workers must be at least 1, got 0"),
    (["--workers", "3"], "--workers 3: one worker per GPU, and 2 GPUs visible here (GPU-a, GPU-b)"),
    (["--scheduler", "not an address!"], "--scheduler 'not an address!': not a scheduler address"),
    (["--workers", "1", "--scheduler", "tcp://10.0.0.5:8786"], "not both"),
])
def test_bad_flags_one_line_exit_2(cmd, flags, said, capsys, monkeypatch, no_gpu_lookup, tmp_path):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-a,GPU-b")
    monkeypatch.setattr(options, "dask_installed", lambda: True)
    assert main([*cmd, *flags, "--out", str(tmp_path)]) == 2
    assert said in one_line(capsys)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("cmd", COMMANDS)
def test_without_dask_the_flag_says_how_to_install_it(cmd, capsys, monkeypatch, no_gpu_lookup, tmp_path):
    monkeypatch.setattr(options, "dask_installed", lambda: False)
    assert main([*cmd, "--workers", "1", "--out", str(tmp_path)]) == 2
    assert "needs Dask, which is not installed: pip install -e '.[gpu,cluster]'" in one_line(capsys)


def test_no_gpu_visible(capsys, monkeypatch, no_gpu_lookup, tmp_path):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setattr(options, "dask_installed", lambda: True)
    assert main(["ladder", "--workers", "1", "--out", str(tmp_path)]) == 2
    assert "--workers 1: one worker per GPU, and no GPU visible here" in one_line(capsys)


@pytest.mark.parametrize("flags, said", [
    (["profile", "--workers", "1", "--timeline"], "--timeline profiles one call"),
    (["profile", "--workers", "1", "--import", "x.ncu-rep"], "--workers do not apply to --import"),
    (["sweep", "amortisation", "--workers", "1", "--profile"], "--profile is not run on workers"),
])
def test_what_does_not_run_on_workers_is_refused(flags, said, capsys, monkeypatch, no_gpu_lookup, tmp_path):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-a")
    monkeypatch.setattr(options, "dask_installed", lambda: True)
    assert main([*flags, "--out", str(tmp_path)]) == 2
    assert said in one_line(capsys)


def test_address_forms():
    assert options.check_address("10.0.0.5") == "tcp://10.0.0.5:8786"
    assert options.check_address("tls://head:9000") == "tls://head:9000"
    for bad in ("tcp://", "host:99999", "a b:1", "http://x:1", "-1", "-host:1"):
        with pytest.raises(Exception, match="not a scheduler address"):
            options.check_address(bad)


def test_without_the_flags_dask_is_never_imported():
    code = ("import sys; from l2attr.cli import build_parser; build_parser().parse_args(['ladder']); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', 'dask_cuda')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True).stdout
    assert out.strip() == "[]"


needs_dask = pytest.mark.skipif(not options.dask_installed(), reason="dask/distributed not installed")


@needs_dask
def test_unreachable_scheduler_one_line(capsys, monkeypatch, no_gpu_lookup, tmp_path):
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 0.5)   # port 9 refuses at once: no need to wait long
    assert main(["sweep", "amortisation", "--scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path)]) == 2
    assert "--scheduler tcp://127.0.0.1:9: cannot reach it" in one_line(capsys)
    assert list(tmp_path.iterdir()) == []


@needs_dask
def test_workers_without_a_gpu_say_so_and_write_nothing(tmp_path):
    """The whole CLI path on a CPU machine: the cluster starts, each worker's GPU check fails
    there, the lead says it in one line (exit 2) and no run dir is made."""
    env = {"CUDA_VISIBLE_DEVICES": "GPU-fake-0", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    res = subprocess.run([sys.executable, "-m", "l2attr", "sweep", "amortisation", "--workers", "1", "--out",
                          str(tmp_path / "runs"), "--quiet"], capture_output=True, text=True, cwd=REPO, env=env,
                         timeout=300)
    assert res.returncode == 2, res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("l2attr sweep: error:") and ("torch is not installed" in last or "no CUDA GPU" in last)
    assert not (tmp_path / "runs").exists() or list((tmp_path / "runs").iterdir()) == []
