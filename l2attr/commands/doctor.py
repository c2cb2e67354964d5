"""Check GPU, driver, torch/cupy, L2 sizes, ncu counter access, nsys, nvtx, ncu_report, cuda-bindings
and transformers: which verb can run here.

Prints one row per verb (ladder, profile, sweep, step, experiment, l2attr.write_back, and the HF
grid of examples/steps/hf_grid.py) with what it needs and what this machine lacks, then one row per
check with a fix hint for each failure, all within 80 columns. Exit status 0 only when every verb
can run here; without a GPU it is 2, with the reason on one line. Optional checks (nsys, the HF
grid's transformers) never fail it.
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

LADDER, PROFILE, SWEEP = Command.LADDER.value, Command.PROFILE.value, Command.SWEEP.value
STEP, EXPERIMENT, WRITE_BACK = Command.STEP.value, Command.EXPERIMENT.value, "write_back"
HF_GRID = "HF grid"          # examples/steps/hf_grid.py: a step of HuggingFace models (optional)
# every verb that runs on the GPU, and the HF grid (never in the exit status)
VERBS = (LADDER, PROFILE, SWEEP, STEP, EXPERIMENT, WRITE_BACK)
GPU_ALL = (*VERBS, HF_GRID)
# what each verb needs (the checks' needed_by say the same: tests/test_doctor.py), and what it can
# use but runs without, said beside its row (not in its readiness)
_BASE = ("GPU", "torch", "cupy")
NEEDS = {LADDER: _BASE, PROFILE: (*_BASE, "chip", "nvtx", "ncu_report", "ncu", "counters"), SWEEP: _BASE,
         STEP: _BASE, EXPERIMENT: _BASE, WRITE_BACK: (*_BASE, "ncu", "counters", "cuda-bindings"),
         HF_GRID: (*_BASE, "transformers")}
ALSO = {STEP: "cuda-bindings for graph surgery (else per op)", EXPERIMENT: "ncu, counters for its profile",
        SWEEP: "ncu, counters for --profile", HF_GRID: "cuda-bindings as step"}
NO_GPU_FIX = "needs a GPU (see GPU and driver)"

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
                     "install the NVIDIA driver, or run on a machine with an NVIDIA GPU", GPU_ALL)
    try:
        res = p.runner([smi, "--query-gpu=name,driver_version,compute_cap,memory.total",
                        "--format=csv,noheader"], 30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("GPU and driver", False, f"nvidia-smi failed: {exc}", "check the driver", GPU_ALL)
    line = _first_line(res.stdout)
    if res.returncode != 0 or not line:
        return Check("GPU and driver", False, _first_line(res.stderr or res.stdout) or "no GPU listed",
                     "check that the driver is loaded and a GPU is visible", GPU_ALL)
    return Check("GPU and driver", True, line, "", GPU_ALL)


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


def check_torch_cuda(p: Probes, gpu: bool = True) -> Check:
    """torch, and whether it sees a GPU; a torch build is suggested only where there is a GPU to see."""
    base = check_import("torch", p, GPU_ALL, "pip install 'l2attr[gpu]' (torch with CUDA)")
    if not base.ok:
        return base
    torch = p.importer("torch")
    try:
        ok = bool(torch.cuda.is_available())
    except Exception as exc:
        ok, _ = False, exc
    detail = f"{base.detail}, CUDA {getattr(torch.version, 'cuda', '?')}, GPU visible: {ok}"
    fix = "" if ok else "install a torch build for this CUDA version" if gpu else NO_GPU_FIX
    return Check("torch + CUDA", ok, detail, fix, GPU_ALL)


def device_properties(p: Probes) -> dict[str, Any]:
    """Device 0's properties through CuPy (which the ladder uses anyway)."""
    cupy = p.importer("cupy")
    props = cupy.cuda.runtime.getDeviceProperties(0)
    # Some fields are raw bytes (uuid, luid), not text: decode leniently, never fail on them.
    return {k: (v.decode("utf-8", "replace").rstrip("\x00") if isinstance(v, bytes) else v)
            for k, v in props.items()}


def check_cupy_device(p: Probes, gpu: bool = True) -> list[Check]:
    """CuPy, then compute capability -> chip, then L2 and persisting-L2 sizes."""
    base = check_import("cupy", p, GPU_ALL, "pip install cupy-cuda13x (or cupy-cuda12x)")
    if not base.ok:
        return [base]
    if not gpu:
        return [base, Check("CUDA device", False, "not asked: no GPU here", NO_GPU_FIX, GPU_ALL)]
    try:
        props = device_properties(p)
    except Exception as exc:
        return [base, Check("CUDA device", False, f"{type(exc).__name__}: {_first_line(str(exc))}",
                            "check the driver / CUDA runtime match", GPU_ALL)]
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


NCU_USERS = (PROFILE, WRITE_BACK)


def check_ncu(p: Probes, gpu: bool = True) -> list[Check]:
    """ncu on PATH and its version, then whether it can read counters on a tiny kernel (a GPU's)."""
    ncu = p.which("ncu")
    if not ncu:
        return [Check("ncu", False, "ncu not on PATH",
                      "install Nsight Compute (CUDA toolkit) and put its folder on PATH", NCU_USERS)]
    try:
        res = p.runner(ncu_cmd.version_argv(ncu), 60)
        version = ncu_cmd.parse_ncu_version(res.stdout + res.stderr) or _first_line(res.stdout) or "?"
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [Check("ncu", False, f"{ncu}: {exc}", "reinstall Nsight Compute", NCU_USERS)]
    found = Check("ncu", True, f"{ncu} (version {version})", "", NCU_USERS)
    if not gpu:
        return [found, Check("ncu reads counters", False, "not probed: no GPU here", NO_GPU_FIX, NCU_USERS)]
    argv = [ncu, "--config-file", "off", "--cache-control", Ncu.NONE.value,
            "--clock-control", Ncu.NONE.value, "--metrics", "gpu__time_duration.sum", p.python, "-c", TINY_KERNEL]
    try:
        res = p.runner(argv, 180)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [found, Check("ncu reads counters", False, f"probe failed: {exc}", "", NCU_USERS)]
    out = (res.stdout or "") + (res.stderr or "")
    ok = res.returncode == 0 and "gpu__time_duration.sum" in out and "==ERROR==" not in out
    if ok:
        return [found, Check("ncu reads counters", True, "profiled a tiny CuPy kernel", "", NCU_USERS)]
    problems = ncu_errors.translate(out)
    detail = ncu_errors.summarize(out, res.returncode) if problems else (
        _first_line(out[-400:]) or f"exit status {res.returncode}")
    fix = problems[0].hint if problems else "run the probe by hand: " + " ".join(argv[:-2]) + " python -c '...'"
    return [found, Check("ncu reads counters", False, detail, fix, NCU_USERS)]


def check_nsys(p: Probes) -> Check:
    status = probe_nsys(runner=p.runner, which=p.which)
    detail = f"{status.path} ({status.version}): {status.detail}" if status.path else status.detail
    fix = "" if status.usable else ("optional: `profile --timeline` needs an nsys that makes reports "
                                    "(CUDA toolkit); layer A's CUDA events cover per-call times")
    return Check("nsys timeline", status.usable, detail, fix, ())


# -- all together --------------------------------------------------------------------------------

def run_checks(p: Probes | None = None, *, probe_counters: bool = True) -> list[Check]:
    """Every check; those that need a GPU ask nothing of one when the first check found none."""
    p = p or Probes()
    gpu = check_gpu(p)
    checks = [gpu, check_torch_cuda(p, gpu.ok), *check_cupy_device(p, gpu.ok),
              check_import("nvtx", p, (PROFILE,), "pip install nvtx"),
              check_ncu_report(p)]
    if probe_counters:
        checks += check_ncu(p, gpu.ok)
    else:
        ncu = p.which("ncu")
        checks.append(Check("ncu", bool(ncu), ncu or "ncu not on PATH", "" if ncu else "install Nsight Compute",
                            NCU_USERS))
    checks.append(check_import("cuda.bindings", p, (WRITE_BACK,), "pip install cuda-bindings"))
    checks.append(check_import("transformers", p, (HF_GRID,), "pip install transformers"))
    checks.append(check_nsys(p))
    return checks


def readiness(checks: Sequence[Check]) -> dict[str, bool]:
    """Which verbs can run (and the HF grid): every check that a verb needs must pass."""
    return {cmd: all(c.ok for c in checks if cmd in c.needed_by) for cmd in GPU_ALL}


# the verb table's words for each check
SHORT = {"GPU and driver": "GPU", "torch + CUDA": "torch", "import torch": "torch", "import cupy": "cupy",
         "CUDA device": "cupy", "compute capability -> chip": "chip", "import nvtx": "nvtx",
         "ncu_report": "ncu_report", "ncu": "ncu", "ncu reads counters": "counters",
         "import cuda.bindings": "cuda-bindings", "import transformers": "transformers"}
WIDTH = 80


def table(header: Sequence[str], widths: Sequence[int], rows: Sequence[Sequence[str]]) -> list[str]:
    """Plain columns two spaces apart, each cell wrapped in its width (a long word cut): every
    line at most sum(widths) + 2 per gap, so the table itself never wraps on an 80-column screen."""
    import textwrap

    out = []
    for row in [header, *rows]:
        cells = [textwrap.wrap(text, w, break_on_hyphens=False) or [""] for text, w in zip(row, widths)]
        for i in range(max(map(len, cells))):
            line = "  ".join((c[i] if i < len(c) else "").ljust(w) for c, w in zip(cells, widths))
            out.append(line.rstrip())
    return out


def verb_rows(checks: Sequence[Check]) -> list[list[str]]:
    """verb, ready, what it needs, what this machine lacks of it."""
    ready = readiness(checks)
    rows = []
    for verb in GPU_ALL:
        lacks = list(dict.fromkeys(SHORT.get(c.name, c.name) for c in checks if verb in c.needed_by and not c.ok))
        also = f"; can use {ALSO[verb]}" if verb in ALSO else ""
        mark = "yes" if ready[verb] else "NO" if verb in VERBS else "no"      # the HF grid is optional
        rows.append([verb, mark, ", ".join(NEEDS[verb]) + also, ", ".join(lacks) or "-"])
    return rows


def render(checks: Sequence[Check]) -> str:
    """The verb table, then the check table (detail, then its fix), within WIDTH columns."""
    verbs = table(("verb", "ready", "needs", "missing here"), (10, 5, 35, 24), verb_rows(checks))
    rows = [[c.name, "yes" if c.ok else "NO" if c.needed_by else "no",
             c.detail + (f"; fix: {c.fix}" if c.fix and not c.ok else "")] for c in checks]
    found = table(("check", "ok", "detail"), (22, 3, WIDTH - 29), rows)
    return "\n".join(["l2attr doctor: can each verb run here?", "", *verbs, "", *found]) + "\n"


def verdict(checks: Sequence[Check]) -> str | None:
    """None when every verb can run; else the one line saying why not (the GPU's absence first)."""
    ready = readiness(checks)
    missing = [v for v in VERBS if not ready[v]]
    if not missing:
        return None
    gpu = next((c for c in checks if c.name == "GPU and driver"), None)
    if gpu is not None and not gpu.ok:
        return f"no usable NVIDIA GPU here ({gpu.detail}); {', '.join(VERBS[:-1])} and {VERBS[-1]} need one"
    return f"not ready for {' and '.join(missing)}; see the failed checks above"


__all__ = ["Check", "Probes", "run_checks", "readiness", "check_gpu", "check_import", "check_ncu_report",
           "check_torch_cuda", "check_cupy_device", "check_ncu", "check_nsys", "device_properties", "render",
           "verdict", "VERBS"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true",
                   help="skip the ncu counter probe (it profiles a tiny kernel: a few seconds)")


def run(args: argparse.Namespace) -> int:
    checks = run_checks(probe_counters=not args.quick)
    sys.stdout.write(render(checks))
    why = verdict(checks)
    if why is not None:
        raise UserError(why)
    return 0
