"""Time an experiment into a run dir: check it, warm it up, then repeat after repeat to disk.

Order of work: the inputs are made (setup), every callable runs once (torch's allocator, Triton
and CuPy compile on first call), the consumer's output is checked against the reference, then
device and host repeats alternate, every declared condition inside each repeat (a slow drift of
the GPU touches all conditions alike). Each finished (condition, repeat) is appended to
exp_samples.csv at once; exp_cells.csv is rewritten from the samples after every repeat.
`resume=` skips complete units and drops units a crash cut short.

Repeats are the engine's rounds (measure/adaptive.py): `repeats` fixed rounds, or with
`until_rel_ci` the adaptive rule every caller shares (measure/adaptive.py: a condition stops once
the 95 % interval of its kernel-timed medians, consumer and producer, has a half-width <=
`until_rel_ci` x the median, after at least `repeats` and at most `max_repeats` repeats or
`max_seconds` of them; exp_cells.csv `stopped` says target or limit).
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pandas as pd

from l2attr.errors import UserError
from l2attr.annotation import child_spec
from l2attr.measure.adaptive import AdaptiveRule, measure_rounds
from l2attr.measure.cell import run_repeat
from l2attr.measure.stats import summarize_pairs
from l2attr.rundir import RunDir, command_line, open_for_resume
from l2attr.schema import EXP_CELLS, EXP_SAMPLES
from l2attr.vocab import Command, Quantity, RepeatMode, RepeatStop, Timer

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


# the kernel-timed columns of exp_samples.csv the adaptive rule waits for
KERNEL_COLUMNS = ("consumer_time_us", "producer_time_us")


def adaptive_rule(exp: "Experiment") -> AdaptiveRule | None:
    """The declaration's stopping rule (None: `repeats` fixed repeats)."""
    if not exp.until_rel_ci:
        return None
    return AdaptiveRule(target_rel=float(exp.until_rel_ci), min_repeats=exp.repeats,
                        max_repeats=exp.max_repeats, max_seconds=float(exp.max_seconds))


def kernel_values(frame: pd.DataFrame) -> dict[str, list[float]]:
    """A device repeat's kept kernel-timed values (discarded samples left out)."""
    kept = frame[frame["discard"].fillna("").astype(str) == ""] if "discard" in frame else frame
    return {c: kept[c].astype(float).dropna().tolist() for c in KERNEL_COLUMNS if c in kept}


def cells_with_stops(samples: pd.DataFrame, stops: dict[str, RepeatStop | None] | None) -> pd.DataFrame:
    """exp_cells.csv from the samples; with an adaptive run, each condition's `stopped`."""
    cells = summarize_pairs(samples)
    if stops is None:
        return cells
    return cells.assign(stopped=[getattr(stops.get(str(c)), "value", "") or "" for c in cells["condition"]])


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
        recorded, now = m.get("experiment") or {}, exp.declaration()
        if "max_seconds" not in recorded:      # a run made before the adaptive rule had a time limit
            now.pop("max_seconds", None)
        if recorded != now:
            raise UserError(f"{resume}: declared with other settings; resume only the same experiment")
        return run
    return RunDir.create(Path(out or exp.out), exp.name, manifest)


def time_experiment(exp: "Experiment", repeats: int | None = None, out: Path | str | None = None,
                    resume: Path | str | None = None, log: Callable[[str], None] = print,
                    device: Any = None) -> Path | None:
    """Measure every declared condition of `exp` (left unchanged: a `repeats` override times a
    copy); the run dir it wrote (None in the profiling child). `device`: the verbs of measure/verbs.py
    (a fake in the CPU tests)."""
    if child_spec() is not None:       # re-entered as the Nsight Compute child: timing means nothing
        return None
    from l2attr.measure.verbs import Device

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
        rule = adaptive_rule(exp)
        plan = [(i, mode == RepeatMode.DEVICE) for i, mode in repeat_plan(rule.max_repeats if rule else exp.repeats)]
        stops: dict[str, RepeatStop | None] | None = {} if rule else None
        old = run.read(EXP_SAMPLES) if run.has(EXP_SAMPLES) else None

        def run_one(cond: Any, repeat: int, device_timed: bool) -> pd.DataFrame | None:
            if (cond.value, repeat) in done:
                return None
            mode = RepeatMode.DEVICE if device_timed else RepeatMode.HOST
            rows = run_repeat(dev, lambda i: ops, cond, mode, exp.calls, exp.warmup)
            return pd.DataFrame([{"experiment": exp.name, "condition": cond.value, "repeat": repeat,
                                  "mode": mode.value, **r} for r in rows], columns=list(EXP_SAMPLES.columns))

        def on_disk(cond: Any, repeat: int) -> pd.DataFrame | None:
            return None if old is None else old[(old["condition"] == cond.value) & (old["repeat"] == repeat)]

        def write_round(frames: list[pd.DataFrame]) -> None:
            if frames:
                run.append(EXP_SAMPLES, pd.concat(frames, ignore_index=True))
            if run.has(EXP_SAMPLES):
                run.write(EXP_CELLS, cells_with_stops(run.read(EXP_SAMPLES), stops))

        got = measure_rounds(list(exp.conditions), plan, run_one, write_round, rule, on_disk,
                             values=kernel_values)
        if rule is not None:
            stops = {c.value: s for c, s in got.items()}
            run.write(EXP_CELLS, cells_with_stops(run.read(EXP_SAMPLES), stops))
            limit = [c for c, s in stops.items() if s == RepeatStop.LIMIT]
            log(f"experiment {exp.name}: adaptive repeats (95 % half-width <= {rule.target_rel:.2%} of the "
                f"median): " + (f"noisy: stopped at the limit: {', '.join(limit)}" if limit else
                                "every condition stopped on its interval"))
        run.update_manifest(status="complete", persisting_reset=bool(dev.reset_ok),
                            timings={"total_s": round(time.perf_counter() - t_start, 3)},
                            **({"adaptive": rule.manifest()} if rule else {}))
        how = (f"{rule.min_repeats}..{rule.max_repeats} adaptive" if rule else f"{exp.repeats}")
        log(f"experiment {exp.name}: {how} device + host repeats x "
            f"{len(exp.conditions)} conditions x {exp.calls - 1} calls -> {run.path}")
        return run.path
    finally:
        dev.close()
