"""`l2attr doctor` with every probe mocked: what passes, what fails, and the exit status."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from l2attr.commands import doctor
from l2attr.cli import main
from l2attr.commands.doctor import Check, Probes, readiness, run_checks

H200_PROPS = {"name": b"NVIDIA H200", "major": 9, "minor": 0, "l2CacheSize": 62_914_560,
              "persistingL2CacheMaxSize": 39_321_600,
              "accessPolicyMaxWindowSize": 134_213_632, "uuid": b"\xca\xfe\x00\x01"}


def _completed(argv, rc=0, out="", err=""):
    return subprocess.CompletedProcess(list(argv), rc, out, err)


class FakeRunner:
    """Answers nvidia-smi, ncu and nsys like a working H200 machine unless told otherwise."""

    def __init__(self, counters_out=None, counters_rc=0):
        self.calls = []
        self.counters_out = counters_out if counters_out is not None else (
            "==PROF== Connected to process 1\n  gpu__time_duration.sum   us   2.1\n==PROF== Disconnected\n")
        self.counters_rc = counters_rc

    def __call__(self, argv, timeout):
        self.calls.append(list(argv))
        exe = argv[0]
        if exe.endswith("nvidia-smi"):
            return _completed(argv, out="NVIDIA H200, 580.159.04, 9.0, 143771 MiB\n")
        if exe.endswith("ncu") and argv[1] == "--version":
            return _completed(argv, out="Version 2025.3.1.0 (build 1) (public-release)\n")
        if exe.endswith("ncu"):
            return _completed(argv, self.counters_rc, self.counters_out)
        if exe.endswith("nsys") and argv[1] == "--version":
            return _completed(argv, out="NVIDIA Nsight Systems version 2025.1\n")
        if exe.endswith("nsys"):
            return _completed(argv, 1, err="Failed to create a report\n")
        raise AssertionError(f"unexpected command {argv}")


def _importer(missing=(), cuda_ok=True, props=None):
    torch = SimpleNamespace(__version__="2.11.0", version=SimpleNamespace(cuda="13.0"),
                            cuda=SimpleNamespace(is_available=lambda: cuda_ok))
    cupy = SimpleNamespace(__version__="14.2.0", cuda=SimpleNamespace(
        runtime=SimpleNamespace(getDeviceProperties=lambda i: dict(props or H200_PROPS))))
    mods = {"torch": torch, "cupy": cupy, "nvtx": SimpleNamespace(__version__="0.2.10"),
            "cuda.bindings": SimpleNamespace(__version__="13.0.1"), "transformers": SimpleNamespace(__version__="5.25")}

    def imp(name):
        if name in missing or name not in mods:
            raise ImportError(f"No module named '{name}'")
        return mods[name]
    return imp


def _probes(runner=None, missing=(), which_missing=(), ncu_report_ok=True, **kw):
    def which(name):
        return None if name in which_missing else f"/usr/bin/{name}"

    def find_ncu_report():
        if not ncu_report_ok:
            raise RuntimeError("the ncu_report module is missing")
        return SimpleNamespace(__file__="/opt/ncu/extras/python/ncu_report.py")
    return Probes(runner=runner or FakeRunner(), importer=_importer(missing, **kw), which=which,
                  python="/usr/bin/python3", find_ncu_report=find_ncu_report)


def _by_name(checks):
    return {c.name: c for c in checks}


def test_working_machine_is_ready_for_both():
    checks = run_checks(_probes())
    c = _by_name(checks)
    assert c["GPU and driver"].ok and "H200" in c["GPU and driver"].detail
    assert c["compute capability -> chip"].detail.endswith("sm_90 -> gh100")
    assert "60.0 MiB" in c["L2 / persisting L2"].detail and "37.5 MiB" in c["L2 / persisting L2"].detail
    assert "accessPolicyMaxWindowSize 134,213,632 B" in c["L2 / persisting L2"].detail
    assert c["ncu"].detail == "/usr/bin/ncu (version 2025.3.1.0)"
    assert c["ncu reads counters"].ok
    assert not c["nsys timeline"].ok and c["nsys timeline"].needed_by == ()
    assert readiness(checks) == dict.fromkeys(doctor.GPU_ALL, True)


def test_counter_probe_profiles_a_tiny_kernel_without_touching_clocks():
    runner = FakeRunner()
    run_checks(_probes(runner))
    probe = next(a for a in runner.calls if a[0].endswith("ncu") and "--metrics" in a)
    assert probe[probe.index("--metrics") + 1] == "gpu__time_duration.sum"
    assert probe[probe.index("--clock-control") + 1] == "none"
    assert probe[-3:-1] == ["/usr/bin/python3", "-c"]


def test_counter_permission_failure_blocks_profile_only():
    out = ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
           "Performance Counters on the target device 0.\n")
    checks = run_checks(_probes(FakeRunner(counters_out=out, counters_rc=1)))
    c = _by_name(checks)["ncu reads counters"]
    assert not c.ok and "ERR_NVGPUCTRPERM" in c.detail and "NVreg_RestrictProfilingToAdminUsers=0" in c.fix
    ready = readiness(checks)
    assert not ready["profile"] and not ready["write_back"]
    assert all(ready[v] for v in ("ladder", "sweep", "step", "experiment", "HF grid"))


def test_missing_ncu_and_ncu_report():
    checks = run_checks(_probes(which_missing=("ncu",), ncu_report_ok=False))
    c = _by_name(checks)
    assert not c["ncu"].ok and "PATH" in c["ncu"].detail
    assert not c["ncu_report"].ok and "pip install ncu-report" in c["ncu_report"].fix
    assert readiness(checks)["profile"] is False and readiness(checks)["ladder"] is True


def test_missing_torch_blocks_both_and_unknown_chip_blocks_profile():
    checks = run_checks(_probes(missing=("torch",), props={**H200_PROPS, "major": 8, "minor": 6}))
    c = _by_name(checks)
    assert not c["import torch"].ok
    assert "no metric tables" in c["compute capability -> chip"].detail
    assert readiness(checks) == dict.fromkeys(doctor.GPU_ALL, False)


def test_no_gpu_visible():
    checks = run_checks(_probes(which_missing=("nvidia-smi",), cuda_ok=False), probe_counters=False)
    c = _by_name(checks)
    assert not c["GPU and driver"].ok and not c["torch + CUDA"].ok
    assert readiness(checks)["ladder"] is False


def test_doctor_module_imports_no_gpu_library():
    code = "import sys, l2attr.commands.doctor; print('torch' in sys.modules or 'cupy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("ok, code", [(True, 0), (False, 2)])
def test_cli_exit_status(monkeypatch, capsys, ok, code):
    checks = [Check("GPU and driver", True, "H200", "", ("ladder", "profile")),
              Check("ncu reads counters", ok, "x", "do y", ("profile",))]
    monkeypatch.setattr(doctor, "run_checks", lambda probe_counters=True: checks)
    assert main(["doctor"]) == code
    out, err = capsys.readouterr()
    assert "ncu reads counters" in out
    if code:
        assert err.strip().count("\n") == 0 and "profile" in err


def _no_gpu_checks():
    """A CPU machine with torch's CPU wheel, CuPy and ncu installed (as CI's second venv): no GPU."""
    return run_checks(_probes(which_missing=("nvidia-smi",), cuda_ok=False))


def test_without_a_gpu_no_torch_build_is_suggested():
    """Issue 52: "install a torch build for this CUDA version" on a machine with no GPU at all."""
    checks = _no_gpu_checks()
    c = _by_name(checks)
    assert not c["torch + CUDA"].ok and c["torch + CUDA"].fix == doctor.NO_GPU_FIX
    assert not any("torch build" in ch.fix for ch in checks)
    assert c["ncu reads counters"].detail == "not probed: no GPU here"


def test_needs_say_what_the_checks_decide():
    """Each verb's NEEDS column names exactly the checks its readiness reads."""
    checks = run_checks(_probes())
    for verb in doctor.GPU_ALL:
        decided = {doctor.SHORT[c.name] for c in checks if verb in c.needed_by}
        assert decided == set(doctor.NEEDS[verb]), verb


def test_doctor_without_a_gpu_one_row_per_verb_80_columns_exit_2(monkeypatch, capsys):
    """Issue 52: doctor covered ladder and profile only, wrapped badly at 80 columns, and said no
    reason of its own on a CPU machine."""
    monkeypatch.setattr(doctor, "run_checks", lambda probe_counters=True: _no_gpu_checks())
    assert main(["doctor"]) == 2
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80
    for verb in (*doctor.VERBS, "HF grid"):
        assert sum(ln.startswith(verb + " ") for ln in lines) == 1, verb
    assert err == ("l2attr doctor: error: no usable NVIDIA GPU here (nvidia-smi not found); ladder, profile, "
                   "sweep, step, experiment and write_back need one\n")
