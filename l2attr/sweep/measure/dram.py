"""`l2attr sweep ... --profile`: DRAM bytes per point under Nsight Compute, after the timing.

The sweep runs again as a child under ncu (application replay, caches and clocks untouched, as
`l2attr profile` does: kernel replay would erase the pin's L2 state, docs/facts.md#ncu-replay), one
device repeat, NVTX ranges only around the pin and consumer kernels of the first 4 tables of each
unit's last pin group (so a few calls per point are profiled, not all). Each range names what it holds
(l2attr.names.SWEEP: `l2attr@sweep:<role>:<family>:<profile>:<arm>:t<table>:g<group>:p<position>:<point>`,
the point id last: it may hold ':'). The child's own timings are discarded; `dram__bytes_read.sum` per kernel
goes to RUN_DIR/sweep_dram.csv and the sweep's analysis adds DRAM MiB per call to its table.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr import atomic
from l2attr.errors import UserError
from l2attr.schema import Table
from l2attr.vocab import Command, Job, Role
from l2attr.names import SWEEP_NVTX_INCLUDE, parse_sweep_range_name

METRICS = ("dram__bytes_read.sum", "gpu__time_duration.sum")
PROFILED_TABLES = 4                     # tables per unit whose kernels are profiled (of its last group)
PROFILED_ROLES = (Role.PIN.value, Role.CONSUMER.value)    # the polluting read's DRAM bytes are its size

SWEEP_DRAM = Table(
    "sweep_dram",
    {"family": "kernel family", "profile": "reuse profile", "point": "point id", "arm": "arm",
     "role": "pin, consumer or pollute", "table": "embedding table", "group": "pin group",
     "position": "call after the pin (1..k)", "dram_read_bytes": "ncu dram__bytes_read.sum of the kernel",
     "duration_ns": "ncu gpu__time_duration.sum (under the profiler; not a timing)"},
    ("family", "profile", "point", "arm", "role", "table", "group", "position"),
)


def require_ncu() -> str:
    ncu = shutil.which("ncu")
    if not ncu:
        raise UserError("--profile needs Nsight Compute's ncu on PATH (see `l2attr doctor`)")
    return ncu


def child_argv(run_dir: Path, cfg: Any, opts: Any) -> list[str]:
    """The sweep again, one device repeat, ranges on, into RUN_DIR/ncu/ (same workload, same points)."""
    cfg_file = run_dir / "ncu" / "workload.toml"
    atomic.write_text(cfg_file, "[workload]\n" + "".join(
        f"{k} = {v!r}\n".replace("'", '"') for k, v in cfg.to_dict().items()))
    spec = opts.spec
    if spec.renamed_to is not None:
        raise UserError(f"a {opts.axis} sweep predates the rename to {spec.renamed_to}: profile a new "
                        f"`l2attr sweep {spec.renamed_to} --profile` run")
    argv = [sys.executable, "-m", "l2attr", Command.SWEEP.value, str(opts.axis), "--config", str(cfg_file),
            "--family", ",".join(f.value for f in opts.families), "--profiles", ",".join(opts.profiles),
            "--repeats", "1", "--no-host-repeat", "--nvtx-ranges", "--quiet", "--name", "ncu-child",
            "--out", str(run_dir / "ncu"), "--spin-us", "0"]
    for option in spec.options:            # the axis' own values: the same points
        argv += [option.flag, option.text(opts.values[option.key])]
    if opts.cache_dir:
        argv += ["--cache-dir", str(opts.cache_dir)]
    if opts.pin_granularity:
        argv += ["--pin-granularity", opts.pin_granularity]
    return argv


def to_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """ncu rows (one per kernel x metric, nvtx_range naming the kernel) -> SWEEP_DRAM rows."""
    rows: dict[tuple, dict[str, Any]] = {}
    for r in metrics.itertuples():
        ident = parse_sweep_range_name(str(r.nvtx_range))
        if ident is None or r.metric not in METRICS:
            continue
        key = tuple(ident[k] for k in SWEEP_DRAM.key)
        row = rows.setdefault(key, {**ident, "dram_read_bytes": float("nan"), "duration_ns": float("nan")})
        row["dram_read_bytes" if r.metric == METRICS[0] else "duration_ns"] = float(r.value)
    return pd.DataFrame(list(rows.values()), columns=list(SWEEP_DRAM.columns))


def profile_dram(run_dir: Path, cfg: Any, opts: Any, log: Any = print) -> pd.DataFrame:
    """Run the child under ncu, read its report, write RUN_DIR/sweep_dram.csv; the rows."""
    import subprocess

    from l2attr.profile.ncu_cmd import NcuOptions, build_ncu_argv, report_path
    from l2attr.profile.ncu_import import read_report
    from l2attr.rundir import RunDir

    ncu = require_ncu()
    out = run_dir / "ncu" / Job.SWEEP.value
    argv = build_ncu_argv(child_argv(run_dir, cfg, opts), METRICS, out,
                          NcuOptions(nvtx_include=(SWEEP_NVTX_INCLUDE,)), ncu=ncu)
    log("profile: " + " ".join(argv))
    res = subprocess.run(argv, capture_output=True, text=True, check=False)
    atomic.write_text(run_dir / "ncu" / "ncu.log", res.stdout[-20000:] + "\n" + res.stderr[-20000:])
    if res.returncode != 0 or not report_path(out).is_file():
        tail = (res.stderr.strip().splitlines() or res.stdout.strip().splitlines() or [""])[-1][:300]
        raise UserError(f"ncu failed (status {res.returncode}): {tail}; see {run_dir / 'ncu' / 'ncu.log'}")
    result = read_report(report_path(out), keep=METRICS, nvtx_include=(SWEEP_NVTX_INCLUDE,))
    table = to_table(result.table)
    RunDir(run_dir).write(SWEEP_DRAM, table)
    child_runs = [p for p in (run_dir / "ncu").glob("*-ncu-child") if p.is_dir()]
    for p in child_runs:
        shutil.rmtree(p, ignore_errors=True)       # its timings are the profiler's, not results
    log(f"profile: {len(table)} kernels' DRAM bytes in {run_dir / SWEEP_DRAM.filename}")
    return table
