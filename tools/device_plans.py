"""The device calls a maintainer makes today, as data for tools/device.py, and the few in-process
helpers their steps need (the machine line, run folders trimmed to what is committed, archives).

Why here and not in shell: each past campaign script (tools/device_*.sh, removed after d1021aa;
`git show d1021aa:tools/device_speed.sh`) wrote these steps again. The plans keep those scripts'
steps, budgets and archive names, so their records under examples/logs/ read the same.
"""

from __future__ import annotations

import gzip
import json
import lzma
import os
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Callable

from device_run import ROOT, Ctx, Plan, Step, pack

PY = "{python}"
GPU_SUITE = (PY, "-m", "pytest", "-q", "-rfE", "-m", "gpu", "tests", "-p", "no:cacheprovider",
             "-W", "ignore::DeprecationWarning")
COMMITTED_BENCH = "examples/20261130T231356Z-bench"      # the fixed run a fresh ladder is set beside


def machine(rel: str) -> Callable[[Ctx], None]:
    """The machine's line for a record: GPU, UUID, driver, clock; the commit; the image's bytecode setting."""
    def write(ctx: Ctx) -> None:
        try:
            smi = subprocess.run(["nvidia-smi", "--query-gpu=name,uuid,driver_version,clocks.max.sm",
                                  "--format=csv,noheader"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            smi = "no nvidia-smi"
        from datetime import datetime, timezone
        text = (f"{(smi.strip().splitlines() or ['?'])[0]}\n"
                f"commit {ctx.env.get('COMMIT', '?')}, {datetime.now(timezone.utc):%Y-%m-%dT%H:%M:%SZ}\n"
                f"PYTHONDONTWRITEBYTECODE in the image: {ctx.env.get('L2ATTR_DEVICE_DONTWRITEBYTECODE', '?')} "
                "(tools/device.py unsets it)\n")
        (ctx.out / rel).parent.mkdir(parents=True, exist_ok=True)
        (ctx.out / rel).write_text(text)
        ctx.say(text.rstrip())
    return write


def copy_run(run: Path, dest: Path) -> None:
    """What a call brings back of a run folder: the manifest and small tables, samples.csv and
    metrics.csv gzipped, each child pass's manifest, the children's check memo and ncu's sections."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("manifest.json", "cells.csv", "timeline.csv", "phases.csv"):
        if (run / name).is_file():
            shutil.copy2(run / name, dest / name)
    for name in ("samples.csv", "metrics.csv"):
        if (run / name).is_file():
            with open(run / name, "rb") as src, gzip.open(dest / f"{name}.gz", "wb", compresslevel=9) as dst:
                shutil.copyfileobj(src, dst)
    for m in sorted(run.glob("child/*/manifest.json")):
        (dest / "child" / m.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy2(m, dest / "child" / m.parent.name / m.name)
    for memo in sorted(run.glob("child/checks-memo-*.json")):
        shutil.copy2(memo, dest / "child" / memo.name)
    if (run / "ncu" / "sections").is_dir():
        shutil.copytree(run / "ncu" / "sections", dest / "sections", dirs_exist_ok=True)


def runs_to(dest: str, *globs: str) -> Callable[[Ctx], None]:
    def copy(ctx: Ctx) -> None:
        for g in globs:
            for run in sorted(ctx.out.glob(g)):
                if run.is_dir():
                    copy_run(run, ctx.out / dest / run.name)
    return copy


def archive(name: str, *paths: str) -> Callable[[Ctx], None]:
    def make(ctx: Ctx) -> None:
        made = pack(ctx.out, name, list(paths))
        ctx.say(f"{made.name}: {made.stat().st_size / 2**20:.2f} MiB" if made else f"{name}: nothing to pack")
    return make


def remove(*paths: str) -> Callable[[Ctx], None]:
    def rm(ctx: Ctx) -> None:
        for p in paths:
            shutil.rmtree(ctx.out / p, ignore_errors=True)
    return rm


def clear_caches(ctx: Ctx) -> None:
    """Process A pays what a fresh machine pays: the workload cache (outside $OUT) and CuPy's kernels."""
    cache = ctx.env.get("L2ATTR_CACHE_DIR", "")
    if cache.startswith("/tmp/"):
        shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(ctx.env.get("CUPY_CACHE_DIR", os.path.expanduser("~/.cupy/kernel_cache")), ignore_errors=True)


def speed_summary(ctx: Ctx) -> None:
    """speed.json: the ladder's three processes, their compare and the profile, with the targets' verdicts."""
    def load(name: str) -> dict | None:
        p = ctx.out / name
        return json.loads(p.read_text()) if p.is_file() else None
    a, b, c, cmp_, prof = (load(n) for n in ("ladder_a.json", "ladder_b.json", "ladder_c.json", "compare.json",
                                             "profile.json"))
    summary = {"ladder_cold_caches": a, "ladder": b, "ladder_second": c, "compare": cmp_, "profile": prof,
               "ladder_within_12_s": bool(b and b.get("within_target")),
               "two_process_within_1_pct": bool(cmp_ and cmp_.get("within_1_pct")),
               "profile_within_60_s": bool(prof and prof.get("within_target")),
               "control": prof and prof.get("control")}
    (ctx.out / "speed.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
    ctx.say(json.dumps({k: summary[k] for k in ("ladder_within_12_s", "two_process_within_1_pct",
                                                "profile_within_60_s", "control")}))


# The full-width grid's committed folder per GPU kind (one GPU kind per grid: L2 is 50 MB against 60 MB)
GRID_HOME = {"H200": "examples/steps/hf_h200", "H100": "examples/steps/hf_full"}
# What the grid measures: four full-width models (one MoE), two decode batches at KV 4K and a 2K
# prefill, at two and four layers; one full-depth row that holds the per-layer model; one compiled row.
GRID_ARGS = ("--models", "llama3-8b", "qwen2.5-7b", "llama2-7b", "olmoe-1b-7b", "--batches", "1", "32",
             "--kvs", "4096", "--prefills", "2048", "--max-repeats", "30", "--full", "llama3-8b:decode:1:4096",
             "--compiled", "llama3-8b:decode:1:4096")


def resume_grid(ctx: Ctx) -> None:
    """Copy the committed grid of this GPU kind into {out}/grid, so the call measures only what is
    missing (hf_grid.py skips finished runs and reads whole ncu caches); a kind with none starts empty."""
    home = next((ROOT / d for k, d in GRID_HOME.items() if k in (ctx.gpu or "")), None)
    if home is not None and home.is_dir():
        shutil.copytree(home, ctx.out / "grid", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("*.ncu-rep", "README.md", "logs"))
        ctx.say(f"resumed from {home.relative_to(ROOT)}")


def gzip_grid_tables(ctx: Ctx) -> None:
    """The grid's step_kernels.csv files are committed gzipped; its log travels with its runs."""
    grid = ctx.out / "grid"
    if (ctx.out / "logs" / "hf_grid.log").is_file() and grid.is_dir():
        shutil.copy2(ctx.out / "logs" / "hf_grid.log", grid / "hf_grid.log")
    for f in sorted(grid.rglob("step_kernels.csv")):
        with open(f, "rb") as src, gzip.open(f.with_suffix(".csv.gz"), "wb", compresslevel=9) as dst:
            shutil.copyfileobj(src, dst)
        f.unlink()


def ladder(p: str, budget: int, deadline: int | None, when: str | None, *extra: str) -> Step:
    """Process P of the ladder record: bench_ladder.py, a cold process (A with the startup probe)."""
    return Step(f"process {p.upper()}: the default ladder, a cold process", deadline=deadline, budget=budget,
                when=when, log=f"bench_ladder_{p}.log",
                cmd=(PY, "benchmarks/bench_ladder.py", *extra, "--out", f"{{out}}/runs-{p}", "--name", f"speed-{p}",
                     "--json", f"{{out}}/ladder_{p}.json"))


def speed_steps(deadline: int | None = None, when: str | None = None, profile: bool = True) -> tuple[Step, ...]:
    """Issue 39's ladder record (process A with the caches empty; B the record, C its second
    process), their compare, optionally the profile job, the process's two ends; one archive."""
    steps = [
        Step("machine", call=machine("logs/machine.log"), when=when),
        Step("empty caches", call=clear_caches, when=when, deadline=deadline, budget=0),
        ladder("a", 100, deadline, when),
        *(ladder(p, 80, deadline, when, "--no-startup-probe") for p in "bc"),
        Step("compare B and C", when=when, deadline=deadline, budget=60, log="compare_b_c.log",
             cmd=(PY, "tools/compare/runs.py", "{run:runs-b/*-speed-b}", "{run:runs-c/*-speed-c}",
                  "--json", "{out}/compare.json")),
        Step("B against the committed fixed run", when=when, deadline=deadline, budget=60,
             log="compare_committed_b.log", cmd=(PY, "tools/compare/runs.py", COMMITTED_BENCH, "{run:runs-b/*-speed-b}")),
    ]
    if profile:
        steps.append(Step("bench_profile: profile --metrics l2, then --timeline", budget=240, need=150,
                          log="bench_profile.log", when=when, deadline=deadline,
                          cmd=(PY, "benchmarks/bench_profile.py", "--out", "{out}/runs-profile", "--json",
                               "{out}/profile.json")))
    steps += [
        Step("summary", call=speed_summary, when=when, always=True),
        Step("run folders to commit", when=when, always=True,
             call=runs_to("examples", "runs-b/*-speed-b", "runs-c/*-speed-c", "runs-profile/*")),
        Step("drop the runs", call=remove("runs-a", "runs-b", "runs-c", "runs-profile", "runs"), when=when, always=True),
        Step("the process's two ends", budget=60, need=40, log="exit_probe.log", when=when, deadline=deadline,
             cmd=(PY, "tools/probes/process_ends.py", "--json", "{out}/exit_probe.json")),
        Step("pack speed.tar.gz", call=archive("speed.tar.gz", "examples", "logs"), when=when, always=True),
    ]
    return tuple(steps)


PROFILE_RECORD = (
    Step("machine", call=machine("logs/profile_record/machine.log")),
    Step("import torch, cupy once (bytecode written, untimed)", budget=120, log="profile_record/warm.log",
         cmd=(PY, "-c", "import torch, cupy")),
    Step("bench_profile: profile --metrics l2, then --timeline", budget=240, log="profile_record/bench_profile.log",
         cmd=(PY, "benchmarks/bench_profile.py", "--out", "{out}/runs-profile", "--json",
              "{out}/logs/profile_record/profile.json")),
    Step("run folders", call=runs_to("pack", "runs-profile/*"), always=True),
    Step("pack profile_record.tar.gz", always=True,
         call=lambda ctx: (archive("profile_record.tar.gz", "logs/profile_record", "pack")(ctx),
                           remove("runs-profile")(ctx))),
)
GPU_TESTS = Step("the GPU suite (pytest -m gpu)", budget=420, log="gpu_tests.log", need=60,
                 cmd=(*GPU_SUITE, "{args}"))

PLANS: dict[str, Plan] = {
    "gpu-tests": Plan("every GPU test on this tree (ARGs go to pytest), then the Experiment example", (
        Step("machine", call=machine("logs/machine.log")), GPU_TESTS,
        Step("the Experiment example", budget=100, need=30, log="kv_pin_sdpa.log",
             cmd=(PY, "examples/experiments/kv_pin_sdpa.py", "--out", "{out}/runs")),
        Step("drop its runs", call=remove("runs"), always=True))),
    "grid": Plan("issue 50's LLM grid: the rewarm GPU tests, then examples/steps/hf_grid.py with ARGs, resumed "
                 "from the committed grid of this GPU kind (GRID_HOME: its runs and ncu caches travel with the "
                 "tree), into grid.tar.gz; unpack it over that folder", (
        Step("machine", call=machine("logs/machine.log")),
        Step("the committed grid of this GPU kind", call=resume_grid, always=True),
        Step("the rewarm GPU tests", budget=90, need=30, log="gpu_rewarm.log",
             cmd=(*GPU_SUITE[:-5], "tests/test_gpu_step_rewarm.py", "-p", "no:cacheprovider")),
        Step("the grid", budget=450, need=60, log="hf_grid.log", cmd=(PY, "examples/steps/hf_grid.py", "--out",
             "{out}/grid", "{args}"), default_args=GRID_ARGS),
        Step("gzip step_kernels.csv", call=gzip_grid_tables, always=True),
        Step("pack grid.tar.gz", call=archive("grid.tar.gz", "grid"), always=True)), budget=580),
    "speed": Plan("issue 39's speed record: three cold ladder processes, their compare, the profile job, the "
                  "process's ends (examples/logs/speed/)", speed_steps(), budget=450),
    "profile-record": Plan("issue 39's profile record alone: bench_profile (profile + timeline, cold processes)",
                           PROFILE_RECORD, budget=400),
    "closing": Plan("a session's last call: on an H200 the ladder's speed record (130 s), then the profile "
                    "record and the whole GPU suite", (*speed_steps(deadline=130, when="H200", profile=False),
                                                      *PROFILE_RECORD, GPU_TESTS), budget=570),
}


def pack_wheels(root: Path, python: str) -> int:
    """.whl/plotly-min.tar.xz and .whl/nvtx-min.tar.xz, small enough to carry beside the tree: plotly
    (its wheel) and narwhals (this machine's) without the Jupyter bundles and datasets (about 2 MB of
    10), nvtx without its Cython sources and its extensions stripped (0.4 MB of 3). Each package's
    metadata travels with it (plotly reads its version). The wheels move to .whl/packed/ so that a
    call does not install them as well."""
    whl, done = root / ".whl", root / ".whl" / "packed"
    done.mkdir(parents=True, exist_ok=True)

    def wheel(name: str) -> Path | None:
        found = sorted([*whl.glob(f"{name}-*.whl"), *done.glob(f"{name}-*.whl")])
        return found[-1] if found else None

    def xz(target: Path, base: Path, names: list[str], drop: tuple[str, ...] = ()) -> None:
        def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
            return None if "__pycache__" in info.name or info.name.startswith(drop) else info
        with tarfile.open(target, "w:xz", preset=9 | lzma.PRESET_EXTREME) as tar:
            for n in names:
                tar.add(base / n, arcname=n, filter=keep)

    with tempfile.TemporaryDirectory() as tmp:
        w = Path(tmp)
        if (p := wheel("plotly")) is not None:
            zipfile.ZipFile(p).extractall(w / "plotly")
            nw = Path(subprocess.run([python, "-c", "import narwhals, os; print(os.path.dirname(narwhals.__file__))"],
                                     capture_output=True, text=True, check=True).stdout.strip())
            for d in [nw, *nw.parent.glob("narwhals-*.dist-info")]:
                shutil.copytree(d, w / "plotly" / d.name)
            names = ["plotly", "_plotly_utils", "narwhals", *(d.name for d in (w / "plotly").glob("*.dist-info"))]
            xz(whl / "plotly-min.tar.xz", w / "plotly", names, drop=("plotly/labextension",
               "plotly/package_data/widgetbundle.js", "plotly/package_data/datasets"))
            if p.parent != done:
                shutil.move(p, done / p.name)
        if (n := wheel("nvtx")) is not None:
            zipfile.ZipFile(n).extractall(w / "nvtx")
            for f in (w / "nvtx" / "nvtx").rglob("*"):
                if f.suffix in (".pyx", ".pxd", ".c", ".cpp"):
                    f.unlink()
                elif f.suffix == ".so":     # symbol tables and debug sections; the dynamic symbols stay
                    subprocess.run(["strip", "--strip-unneeded", str(f)], check=True)
            xz(whl / "nvtx-min.tar.xz", w / "nvtx", ["nvtx", *(d.name for d in (w / "nvtx").glob("nvtx-*.dist-info"))])
            if n.parent != done:
                shutil.move(n, done / n.name)
    for f in sorted(whl.glob("*.tar.xz")):
        print(f"{f}: {f.stat().st_size / 2**20:.2f} MiB")
    return 0
