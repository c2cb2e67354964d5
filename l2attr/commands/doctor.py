"""Check GPU, driver, torch/cupy, L2 sizes, ncu counter access, nsys, nvtx and ncu_report.

Prints one row per check with a fix hint for each failure. Exit status 0 only when both
`l2attr ladder` and `l2attr profile` can run here; optional checks (nsys) never fail it.
"""

# Why the checks live in the command's module: nothing else runs them. (The docstring above is the
# command's --help.) Every check is a small function returning a Check (name, ok, detail, fix hint,
# which commands need it). Probes (subprocesses, imports, device queries) are injected, so tests
# run without a GPU; heavy modules (torch, cupy) are imported only inside the checks that need them.

from __future__ import annotations

import argparse
import importlib
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from l2attr.catalog.sets import CHIP_BY_CC, KNOWN_CHIPS
from l2attr.errors import UserError
from l2attr.profile import ncu_cmd, ncu_errors
from l2attr.profile.nsys import probe_nsys
from l2attr.vocab import Command, Ncu


Runner = Callable[[Sequence[str], float], subprocess.CompletedProcess]
Importer = Callable[[str], Any]
Which = Callable[[str], "str | None"]

LADDER, PROFILE = Command.LADDER.value, Command.PROFILE.value

# A kernel small enough to finish at once, big enough to be a real launch.
TINY_KERNEL = (
    "try:\n"
    "    import cupy as cp\n"
    "    x = cp.arange(1 << 20, dtype=cp.float32); (x * 2).sum(); cp.cuda.Device().synchronize()\n"
    "except ImportError:\n"
    "    import torch\n"
    "    (torch.arange(1 << 20, device='cuda') * 2).sum().item()\n")


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    needed_by: tuple[str, ...] = ()


@dataclass
class Probes:
    """Everything the checks touch outside Python, replaceable in tests."""

    runner: Runner = field(default=None)  # type: ignore[assignment]
    importer: Importer = importlib.import_module
    which: Which = shutil.which
    python: str = sys.executable
    # ncu_report: the PyPI package, else Nsight Compute's extras/python (what `profile` uses)
    find_ncu_report: Callable[[], Any] = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.runner is None:
            self.runner = _run
        if self.find_ncu_report is None:
            from l2attr.profile.ncu_rows import ensure_ncu_report

            self.find_ncu_report = ensure_ncu_report


def _run(argv: Sequence[str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)


def _first_line(text: str) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[0].strip() if lines else ""


# -- individual checks ---------------------------------------------------------------------------

def check_gpu(p: Probes) -> Check:
    """GPU name, driver and compute capability from nvidia-smi (no CUDA context in this process)."""
    smi = p.which("nvidia-smi")
    if not smi:
        return Check("GPU and driver", False, "nvidia-smi not found",
                     "install the NVIDIA driver, or run on a machine with an NVIDIA GPU", (LADDER, PROFILE))
    try:
        res = p.runner([smi, "--query-gpu=name,driver_version,compute_cap,memory.total",
                        "--format=csv,noheader"], 30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("GPU and driver", False, f"nvidia-smi failed: {exc}", "check the driver", (LADDER, PROFILE))
    line = _first_line(res.stdout)
    if res.returncode != 0 or not line:
        return Check("GPU and driver", False, _first_line(res.stderr or res.stdout) or "no GPU listed",
                     "check that the driver is loaded and a GPU is visible", (LADDER, PROFILE))
    return Check("GPU and driver", True, line, "", (LADDER, PROFILE))


def check_import(module: str, p: Probes, needed_by: tuple[str, ...], fix: str) -> Check:
    try:
        mod = p.importer(module)
    except Exception as exc:  # ImportError, or a broken install raising anything
        return Check(f"import {module}", False, f"{type(exc).__name__}: {_first_line(str(exc))}", fix, needed_by)
    version = getattr(mod, "__version__", "") or ""
    return Check(f"import {module}", True, f"{module} {version}".strip(), "", needed_by)


def check_ncu_report(p: Probes) -> Check:
    """ncu_report reads .ncu-rep files; `profile` also finds Nsight Compute's own copy."""
    try:
        mod = p.find_ncu_report()
    except Exception as exc:
        return Check("ncu_report", False, _first_line(str(exc)) or type(exc).__name__,
                     "pip install ncu-report, or add Nsight Compute's extras/python to PYTHONPATH", (PROFILE,))
    where = getattr(mod, "__file__", "") or ""
    return Check("ncu_report", True, where, "", (PROFILE,))


def check_torch_cuda(p: Probes) -> Check:
    base = check_import("torch", p, (LADDER, PROFILE), "pip install 'l2attr[gpu]' (torch with CUDA)")
    if not base.ok:
        return base
    torch = p.importer("torch")
    try:
        ok = bool(torch.cuda.is_available())
    except Exception as exc:
        ok, _ = False, exc
    detail = f"{base.detail}, CUDA {getattr(torch.version, 'cuda', '?')}, GPU visible: {ok}"
    return Check("torch + CUDA", ok, detail, "" if ok else "install a torch build for this CUDA version",
                 (LADDER, PROFILE))


def device_properties(p: Probes) -> dict[str, Any]:
    """Device 0's properties through CuPy (which the ladder uses anyway)."""
    cupy = p.importer("cupy")
    props = cupy.cuda.runtime.getDeviceProperties(0)
    # Some fields are raw bytes (uuid, luid), not text: decode leniently, never fail on them.
    return {k: (v.decode("utf-8", "replace").rstrip("\x00") if isinstance(v, bytes) else v)
            for k, v in props.items()}


def check_cupy_device(p: Probes) -> list[Check]:
    """CuPy, then compute capability -> chip, then L2 and persisting-L2 sizes."""
    base = check_import("cupy", p, (LADDER, PROFILE), "pip install cupy-cuda13x (or cupy-cuda12x)")
    if not base.ok:
        return [base]
    try:
        props = device_properties(p)
    except Exception as exc:
        return [base, Check("CUDA device", False, f"{type(exc).__name__}: {_first_line(str(exc))}",
                            "check the driver / CUDA runtime match", (LADDER, PROFILE))]
    major, minor = int(props.get("major", 0)), int(props.get("minor", 0))
    chip = CHIP_BY_CC.get((major, minor))
    chip_check = Check(
        "compute capability -> chip", chip is not None,
        f"{props.get('name', '?')}: sm_{major}{minor} -> {chip or 'no metric tables'}",
        "" if chip else f"metric sets exist for {', '.join(KNOWN_CHIPS)}; use `profile --chip` to force one",
        (PROFILE,))
    l2 = int(props.get("l2CacheSize", 0))
    persist = int(props.get("persistingL2CacheMaxSize", 0))
    window = int(props.get("accessPolicyMaxWindowSize", 0))
    # `l2attr sweep window` sizes its persisting set-aside and access-policy window by these two
    l2_check = Check("L2 / persisting L2", l2 > 0,
                     f"L2 {l2 / 2**20:.1f} MiB, persisting-L2 max {persist / 2**20:.1f} MiB "
                     f"(persistingL2CacheMaxSize {persist:,} B), access-policy window max "
                     f"{window / 2**20:.1f} MiB (accessPolicyMaxWindowSize {window:,} B)", "", ())
    return [base, chip_check, l2_check]


def check_ncu(p: Probes) -> list[Check]:
    """ncu on PATH and its version, then whether it can read counters on a tiny kernel."""
    ncu = p.which("ncu")
    if not ncu:
        return [Check("ncu", False, "ncu not on PATH",
                      "install Nsight Compute (CUDA toolkit) and put its folder on PATH", (PROFILE,))]
    try:
        res = p.runner(ncu_cmd.version_argv(ncu), 60)
        version = ncu_cmd.parse_ncu_version(res.stdout + res.stderr) or _first_line(res.stdout) or "?"
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [Check("ncu", False, f"{ncu}: {exc}", "reinstall Nsight Compute", (PROFILE,))]
    found = Check("ncu", True, f"{ncu} (version {version})", "", (PROFILE,))
    argv = [ncu, "--config-file", "off", "--cache-control", Ncu.NONE.value,
            "--clock-control", Ncu.NONE.value, "--metrics", "gpu__time_duration.sum", p.python, "-c", TINY_KERNEL]
    try:
        res = p.runner(argv, 180)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [found, Check("ncu reads counters", False, f"probe failed: {exc}", "", (PROFILE,))]
    out = (res.stdout or "") + (res.stderr or "")
    ok = res.returncode == 0 and "gpu__time_duration.sum" in out and "==ERROR==" not in out
    if ok:
        return [found, Check("ncu reads counters", True, "profiled a tiny CuPy kernel", "", (PROFILE,))]
    problems = ncu_errors.translate(out)
    detail = ncu_errors.summarize(out, res.returncode) if problems else (
        _first_line(out[-400:]) or f"exit status {res.returncode}")
    fix = problems[0].hint if problems else "run the probe by hand: " + " ".join(argv[:-2]) + " python -c '...'"
    return [found, Check("ncu reads counters", False, detail, fix, (PROFILE,))]


def check_nsys(p: Probes) -> Check:
    status = probe_nsys(runner=p.runner, which=p.which)
    detail = f"{status.path} ({status.version}): {status.detail}" if status.path else status.detail
    fix = "" if status.usable else ("optional: `profile --timeline` needs an nsys that makes reports "
                                    "(CUDA toolkit); layer A's CUDA events cover per-call times")
    return Check("nsys timeline", status.usable, detail, fix, ())


# -- all together --------------------------------------------------------------------------------

def run_checks(p: Probes | None = None, *, probe_counters: bool = True) -> list[Check]:
    p = p or Probes()
    checks = [check_gpu(p), check_torch_cuda(p), *check_cupy_device(p),
              check_import("nvtx", p, (PROFILE,), "pip install nvtx"),
              check_ncu_report(p)]
    if probe_counters:
        checks += check_ncu(p)
    else:
        ncu = p.which("ncu")
        checks.append(Check("ncu", bool(ncu), ncu or "ncu not on PATH", "" if ncu else "install Nsight Compute",
                            (PROFILE,)))
    checks.append(check_nsys(p))
    return checks


def readiness(checks: Sequence[Check]) -> dict[str, bool]:
    """Which commands can run: every check that a command needs must pass."""
    return {cmd: all(c.ok for c in checks if cmd in c.needed_by) for cmd in (LADDER, PROFILE)}


__all__ = ["Check", "Probes", "run_checks", "readiness", "check_gpu", "check_import", "check_ncu_report",
           "check_torch_cuda", "check_cupy_device", "check_ncu", "check_nsys", "device_properties"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true",
                   help="skip the ncu counter probe (it profiles a tiny kernel: a few seconds)")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    checks = run_checks(probe_counters=not args.quick)
    table = Table(title="l2attr doctor")
    for col in ("check", "ok", "detail", "needed by", "fix"):
        table.add_column(col, overflow="fold")
    for c in checks:
        mark = "[green]yes[/green]" if c.ok else ("[red]NO[/red]" if c.needed_by else "[yellow]no[/yellow]")
        table.add_row(escape(c.name), mark, escape(c.detail), ", ".join(c.needed_by) or "optional", escape(c.fix))
    console = Console()
    console.print(table)
    ready = readiness(checks)
    for cmd, ok in ready.items():
        console.print(f"{cmd}: {'can run' if ok else 'cannot run here'}", markup=False, highlight=False)
    if not all(ready.values()):
        missing = [cmd for cmd, ok in ready.items() if not ok]
        raise UserError(f"not ready for {' and '.join(missing)}; see the failed checks above")
    return 0
