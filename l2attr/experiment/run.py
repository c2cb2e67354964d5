"""Time an experiment into a run dir: check it, warm it up, then repeat after repeat to disk.

Order of work: the inputs are made (setup), every callable runs once (torch's allocator, Triton
and CuPy compile on first call), the consumer's output is checked against the reference, then
device and host repeats alternate, every declared condition inside each repeat (a slow drift of
the GPU touches all conditions alike). Each finished (condition, repeat) is appended to
exp_samples.csv at once; exp_cells.csv is rewritten from the samples after every repeat.
`resume=` skips complete units and drops units a crash cut short.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pandas as pd

from l2attr.errors import UserError
from l2attr.experiment.child import child_spec
from l2attr.measure.cell import run_repeat
from l2attr.measure.stats import summarize_pairs
from l2attr.rundir import RunDir, command_line, open_for_resume
from l2attr.schema import EXP_CELLS, EXP_SAMPLES
from l2attr.vocab import Quantity, RepeatMode, Command, Timer

if TYPE_CHECKING:
    from l2attr.experiment.declare import Declaration as Experiment

KIND = Command.EXPERIMENT.value


def repeat_plan(repeats: int) -> list[tuple[int, RepeatMode]]:
    """(repeat index, mode) in run order: device and host repeats alternate."""
    plan: list[tuple[int, RepeatMode]] = []
    for _ in range(repeats):
        plan.append((len(plan), RepeatMode.DEVICE))
        plan.append((len(plan), RepeatMode.HOST))
    return plan


def complete_units(run: RunDir, calls: int) -> set[tuple[str, int]]:
    """(condition, repeat) of every unit with all its rows on disk."""
    if not run.has(EXP_SAMPLES):
        return set()
    s = run.read(EXP_SAMPLES)
    counts = s.groupby(["condition", "repeat"]).size()
    return {(str(c), int(r)) for (c, r), n in counts.items() if n == calls - 1}


def drop_cut_units(run: RunDir, calls: int) -> int:
    """Remove the rows of units a crash cut short; how many rows went."""
    if not run.has(EXP_SAMPLES):
        return 0
    s = run.read(EXP_SAMPLES)
    size = s.groupby(["condition", "repeat"])["call"].transform("size")
    cut = size != calls - 1
    if cut.any():
        run.write(EXP_SAMPLES, s[~cut].reset_index(drop=True))
    return int(cut.sum())


def narrow_enough(cells: pd.DataFrame, rel: float) -> bool:
    """The stopping rule: every condition's consumer kernel median known to `rel` (CI width / median)."""
    k = cells[(cells["quantity"] == Quantity.CONSUMER.value) & (cells["timer"] == Timer.KERNEL.value)]
    if k.empty:
        return False
    return bool(((k["ci95_hi_us"] - k["ci95_lo_us"]) / k["median_us"] <= rel).all())


def check_reference(exp: "Experiment", dev: Any) -> dict[str, Any]:
    """Producer -> sync -> consumer once; its return value against the reference's."""
    ops = exp.ops()
    if ops.producer is not None:
        ops.producer()
        dev.sync()
    got = ops.consumer()
    dev.sync()
    if exp.reference is None:
        return {"reference": "none declared"}
    want = exp.reference_output()
    dev.sync()
    torch = dev.torch
    try:
        g, w = torch.as_tensor(got).double(), torch.as_tensor(want).double().to(torch.as_tensor(got).device)
    except Exception as exc:
        raise UserError(f"experiment {exp.name}: consumer and reference outputs cannot be compared ({exc})") from None
    if g.shape != w.shape:
        raise UserError(f"experiment {exp.name}: consumer output shape {tuple(g.shape)} != reference {tuple(w.shape)}")
    err = float((g - w).abs().max().item()) if g.numel() else 0.0
    scale = float(w.abs().max().item()) if w.numel() else 0.0
    if not torch.allclose(g, w, rtol=exp.rtol, atol=exp.atol):
        raise UserError(f"experiment {exp.name}: consumer output differs from the reference "
                        f"(max abs error {err:.3g}, reference max {scale:.3g}, rtol {exp.rtol}, atol {exp.atol})")
    return {"reference": "matched", "max_abs_error": err, "reference_max_abs": scale}


def _open_run(exp: "Experiment", out: Path | str | None, resume: Path | str | None,
              manifest: dict[str, Any]) -> RunDir:
    if resume is not None:
        run, m = open_for_resume(Path(resume), KIND)
        if m.get("experiment") != exp.declaration():
            raise UserError(f"{resume}: declared with other settings; resume only the same experiment")
        return run
    return RunDir.create(Path(out or exp.out), exp.name, manifest)


def time_experiment(exp: "Experiment", repeats: int | None = None, out: Path | str | None = None,
                    resume: Path | str | None = None, log: Callable[[str], None] = print,
                    device: Any = None) -> Path | None:
    """Measure every declared condition of `exp` (left unchanged: a `repeats` override times a
    copy); the run dir it wrote (None in the profiling child). `device`: the verbs of experiment/device.py
    (a fake in the CPU tests)."""
    if child_spec() is not None:       # re-entered as the Nsight Compute child: timing means nothing
        return None
    from l2attr.experiment.device import Device

    if repeats is not None:
        exp = dataclasses.replace(exp, repeats=int(repeats))
    t_start = time.perf_counter()
    dev = device if device is not None else Device(exp.timer)
    try:
        exp.prepare()
        check = check_reference(exp, dev)
        manifest = {"kind": KIND, "experiment": exp.declaration(), "command": command_line(),
                    "cwd": os.getcwd(), **dev.facts(),
                    "reference_check": check, "timer": {"kind": exp.timer, "default_sm_clock_mhz":
                                                        getattr(dev.timer, "default_mhz", None)}}
        run = _open_run(exp, out, resume, manifest)
        cut = drop_cut_units(run, exp.calls)
        if cut:
            log(f"resume: dropped {cut} rows of units cut short; they are measured again")
        done = complete_units(run, exp.calls)
        ops = exp.ops()
        for cond in exp.conditions:        # warm every path once more, outside the records
            run_repeat(dev, lambda i: ops, cond, RepeatMode.DEVICE, 2, 1)
        limit = exp.max_repeats if exp.until_rel_ci else exp.repeats
        for repeat, mode in repeat_plan(limit):
            if (exp.until_rel_ci and mode == RepeatMode.DEVICE and repeat // 2 >= exp.repeats
                    and narrow_enough(run.read(EXP_CELLS), exp.until_rel_ci)):
                log(f"experiment {exp.name}: every consumer CI within {exp.until_rel_ci:.2%} after "
                    f"{repeat // 2} repeats: stopped")
                break
            for cond in exp.conditions:
                if (cond.value, repeat) in done:
                    continue
                rows = run_repeat(dev, lambda i: ops, cond, mode, exp.calls, exp.warmup)
                frame = pd.DataFrame([{"experiment": exp.name, "condition": cond.value, "repeat": repeat,
                                       "mode": mode.value, **r} for r in rows], columns=list(EXP_SAMPLES.columns))
                run.append(EXP_SAMPLES, frame)
            run.write(EXP_CELLS, summarize_pairs(run.read(EXP_SAMPLES)))
        run.update_manifest(status="complete", persisting_reset=bool(dev.reset_ok),
                            timings={"total_s": round(time.perf_counter() - t_start, 3)})
        log(f"experiment {exp.name}: {exp.repeats} device + {exp.repeats} host repeats x "
            f"{len(exp.conditions)} conditions x {exp.calls - 1} calls -> {run.path}")
        return run.path
    finally:
        dev.close()
