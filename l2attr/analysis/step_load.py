"""Read a step run dir (refusing damaged data) and answer it (analysis/step.py)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.errors import UserError
from l2attr.rundir import RunDir
from l2attr.schema import STEP_KERNELS, STEP_OPS, STEP_TIMES
from l2attr.vocab import RunKind

KIND = RunKind.STEP.value


def load_step(path: Path) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    run = RunDir.open(Path(path))
    m = run.manifest()
    if m.get("kind") != KIND:
        raise UserError(f"{path} is a {m.get('kind')!r} run, not a step run")
    k, ops = run.read(STEP_KERNELS), run.read(STEP_OPS)
    dup = k.duplicated(list(STEP_KERNELS.key), keep=False)
    if dup.any():
        raise UserError(f"{run.path / STEP_KERNELS.filename}: row {int(dup.idxmax()) + 2}: key is not unique")
    bad = ~k["duration_us"].apply(lambda x: isinstance(x, (int, float)) and math.isfinite(x) and x >= 0)
    if bad.any():
        raise UserError(f"{run.path / STEP_KERNELS.filename}: row {int(bad.idxmax()) + 2}: duration_us must be finite and >= 0")
    counts = k.groupby(["condition", "step"]).size()
    if counts.nunique() > 1:
        raise UserError(f"{run.path / STEP_KERNELS.filename}: steps hold different numbers of kernels "
                        f"({counts.min()}-{counts.max()}): cut or mixed data")
    times = run.read(STEP_TIMES) if run.has(STEP_TIMES) else pd.DataFrame(columns=list(STEP_TIMES.columns))
    bad_t = ~times["step_us"].apply(lambda x: isinstance(x, (int, float)) and math.isfinite(x) and x > 0)
    if bad_t.any():
        raise UserError(f"{run.path / STEP_TIMES.filename}: row {int(bad_t.idxmax()) + 2}: step_us must be finite and > 0")
    return m, k, ops, times


def analyse_step(path: Path) -> Any:
    from l2attr.analysis.step import answer

    m, k, ops, times = load_step(path)
    ans = answer(k, ops, times)
    ans.manifest = m
    ans.ops = ops
    return ans


def step_name(ans: Any) -> str:
    """The name a step run was given (the kind's name when none was recorded)."""
    return str((ans.manifest.get("step") or {}).get("name") or KIND)
