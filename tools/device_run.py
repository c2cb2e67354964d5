"""The device runner that tools/device.py drives: a call's context, a plan's steps, their budgets,
the install of what was carried, and the packing of $OUT to a call's limits. The plans themselves
are data (tools/device_plans.py); this module knows none of them, so plans import it and not the
other way round."""


from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
MAX_FILES, MAX_BYTES, MAX_DEPTH = 8, 16 << 20, 3       # what one device call brings back of $OUT
TAIL = 15                                              # lines of a step's log echoed after it


@dataclass
class Ctx:
    """What a step sees: the output folder, the arguments passed through, the GPU's name."""
    out: Path
    args: list[str]
    gpu: str
    env: dict[str, str]
    say: Callable[[str], None] = print


@dataclass(frozen=True)
class Step:
    """One command (argv, formatted) or one in-process call (`call`, for packing and summaries).

    budget: seconds it may run before it is stopped; need: seconds that must be left of the
    plan's deadline for it to start (default its budget); when: a word the GPU's name must hold;
    always: runs whatever time is left (packing)."""
    name: str
    cmd: tuple[str, ...] = ()
    budget: int = 60
    log: str | None = None
    call: Callable[[Ctx], None] | None = None
    when: str | None = None
    always: bool = False
    need: int | None = None
    deadline: int | None = None
    default_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """A named campaign: its steps in order, and the seconds they may use together."""
    doc: str
    steps: tuple[Step, ...]
    budget: int = 560


def banner(ctx: Ctx, text: str, t0: float) -> None:
    ctx.say(f"\n=== {text} ({time.strftime('%H:%M:%S', time.gmtime())}, {time.monotonic() - t0:.0f} s in)")


def last_run(out: Path, pattern: str) -> str | None:
    """The last run folder under $OUT matching a glob (run folders sort by their time stamp)."""
    found = sorted(out.glob(pattern))
    return str(found[-1]) if found else None


def argv_of(step: Step, ctx: Ctx) -> list[str] | None:
    """The step's command with {out} and {args} filled, {run:GLOB} as the last matching run folder;
    None when a run it names is not there (the step is then skipped and said)."""
    argv: list[str] = []
    for part in step.cmd:
        if part == "{args}":
            argv += ctx.args or list(step.default_args)
        elif part.startswith("{run:"):
            run = last_run(ctx.out, part[5:-1])
            if run is None:
                ctx.say(f"device: {step.name} skipped: no run {part[5:-1]} under {ctx.out}")
                return None
            argv.append(run)
        else:
            argv.append(part.format(out=ctx.out, python=sys.executable))
    return argv


def run_command(argv: list[str], budget: float, log: Path, env: dict[str, str]) -> int | None:
    """Run argv with its output into log; None when it ran past its budget and was stopped."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as fh:
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                                start_new_session=True)
        try:
            return proc.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)      # the step's children too (ncu, its profiled child)
            proc.wait()
            return None


def run_plan(plan: Plan, ctx: Ctx, clock: Callable[[], float] = time.monotonic) -> int:
    """Every step in order; 0 when each that ran ended with 0, else 1."""
    t0, failed = clock(), False
    for step in plan.steps:
        used = clock() - t0
        deadline = step.deadline or plan.budget
        if step.when and step.when not in ctx.gpu:
            ctx.say(f"device: {step.name} skipped: the GPU ({ctx.gpu or 'none'}) is not {step.when}")
            continue
        left = deadline - used
        if not step.always and left < (step.need if step.need is not None else step.budget):
            ctx.say(f"device: {step.name} skipped: {used:.0f} s used of {deadline} s")
            continue
        banner(ctx, step.name, t0)
        if step.call is not None:
            step.call(ctx)
            continue
        argv = argv_of(step, ctx)
        if argv is None:
            continue
        budget = step.budget if step.always else min(step.budget, left)
        log = ctx.out / "logs" / (step.log or f"{step.name.replace(' ', '_')}.log")
        rc = run_command(argv, budget, log, ctx.env)
        lines = log.read_text(errors="replace").splitlines() if log.is_file() else []
        ctx.say("\n".join(lines[-TAIL:]))
        if rc is None:
            ctx.say(f"device: {step.name} stopped at its budget of {budget:.0f} s (its log: {log})")
            failed = True
        elif rc != 0:
            ctx.say(f"device: {step.name} exit {rc}")
            failed = True
    fit_limits(ctx.out, ctx.say)
    ctx.say(f"device: done in {clock() - t0:.0f} s")
    return 1 if failed else 0


def pack(out: Path, name: str, paths: list[str]) -> Path | None:
    """$OUT/NAME (a .tar.gz) of the given paths under $OUT, which then leave $OUT."""
    there = [p for p in paths if (out / p).exists()]
    if not there:
        return None
    target = out / name
    with tarfile.open(target, "w:gz") as tar:
        for p in there:
            tar.add(out / p, arcname=p)
    for p in there:
        shutil.rmtree(out / p) if (out / p).is_dir() else (out / p).unlink()
    return target


def _files(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*") if p.is_file())


def fit_limits(out: Path, say: Callable[[str], None] = print) -> None:
    """Pack $OUT until a call can bring it back: no file deeper than $OUT/a/b/file (its top folder
    becomes TOP.tar.gz), then at most MAX_FILES files (top folders packed, then the rest into
    rest.tar.gz); a file over MAX_BYTES is said, as it will not come back."""
    if not out.is_dir():
        return
    for top in sorted({p.relative_to(out).parts[0] for p in _files(out) if len(p.relative_to(out).parts) > MAX_DEPTH}):
        pack(out, f"{top}.tar.gz", [top])
    if len(_files(out)) > MAX_FILES:
        for top in sorted(p.name for p in out.iterdir() if p.is_dir()):
            pack(out, f"{top}.tar.gz", [top])
    files = _files(out)
    if len(files) > MAX_FILES:
        rest = [p.relative_to(out).as_posix() for p in files[MAX_FILES - 1:]]
        pack(out, "rest.tar.gz", rest)
    for p in _files(out):
        if p.stat().st_size > MAX_BYTES:
            say(f"device: {p.relative_to(out)} is {p.stat().st_size / 2**20:.1f} MiB, over the "
                f"{MAX_BYTES >> 20} MiB a file may come back: it stays behind")
    for d in sorted((p for p in out.rglob("*") if p.is_dir()), reverse=True):
        if not any(d.iterdir()):
            d.rmdir()


def prepare(root: Path, env: dict[str, str], site: Path = Path("/tmp/site")) -> dict[str, str]:
    """The setting every device call needs (it was tools/device_env.sh): what was carried in .whl/
    (wheels, and folders packed by --pack-wheels) installed into SITE, since nothing downloads on
    the device, and put on PYTHONPATH before the repository; unbuffered Python (a stopped step
    keeps its log); one workload cache outside $OUT (nothing of it comes back); bytecode written as
    on an ordinary machine (docs/facts.md#process-exit: the image turns writing off, so every
    process compiled torch's modules again), what the image had kept for the record."""
    wheels, packed = sorted(root.glob(".whl/*.whl")), sorted(root.glob(".whl/*.tar.xz"))
    env = dict(env)
    if wheels or packed:
        site.mkdir(parents=True, exist_ok=True)
        if wheels:
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                            "--no-cache-dir", "--upgrade", "--target", str(site), *map(str, wheels)], check=True)
        for f in packed:
            with tarfile.open(f) as tar:
                tar.extractall(site, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        env["PYTHONPATH"] = f"{site}{os.pathsep}{root}"
    else:
        env["PYTHONPATH"] = str(root)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("L2ATTR_CACHE_DIR", "/tmp/l2attr-cache")
    env["L2ATTR_DEVICE_DONTWRITEBYTECODE"] = env.pop("PYTHONDONTWRITEBYTECODE", "unset")
    return env


def gpu_name() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (out.strip().splitlines() or [""])[0]
