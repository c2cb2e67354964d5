"""A graph step's kernel counts in the manifest, held to the kernel table they summarise.

Why: the first line of a graph or surgery step's answer prints how many of the graph's kernels
were attributed to eager ops (`matched_kernels` of `graph_kernels` / `replay_kernels`). Those
counts were taken as they stood: `true` read as 1 and printed a line saying one kernel was a
compiled step's own, and a smaller number did the same, with nothing refused. Each count is a
fact of step_kernels.csv (op_index -2 marks a kernel the eager ops did not launch), so it is
recomputed here and a manifest that disagrees is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from l2attr.errors import STRICT, Damage
from l2attr.integrity.manifest import is_whole
from l2attr.integrity.step import GRAPH_ONLY
from l2attr.schema import STEP_KERNELS
from l2attr.vocab import L2Condition, StepMode

def _whole(v: Any) -> bool:
    return is_whole(v) and v >= 0


def _natural(kernels: pd.DataFrame) -> pd.DataFrame:
    return kernels[kernels["condition"].astype(str) == L2Condition.NATURAL.value]


def expected_counts(manifest: dict[str, Any], kernels: pd.DataFrame) -> tuple[str, dict[str, int]]:
    """(manifest section, the counts its kernel table implies); empty for a per-op step."""
    mode = (manifest.get("step") or {}).get("mode")
    nat = _natural(kernels)
    if nat.empty:
        return "", {}
    op = pd.to_numeric(nat["op_index"], errors="coerce")
    step = pd.to_numeric(nat["step"], errors="coerce")
    if mode == StepMode.SURGERY.value and "node" in nat.columns:
        nodes = pd.to_numeric(nat["node"], errors="coerce")
        return StepMode.SURGERY.value, {"graph_kernels": int(nodes.nunique()),
                           "matched_kernels": int(nodes[op != GRAPH_ONLY].nunique())}
    if mode == StepMode.GRAPH.value:
        matched = (op != GRAPH_ONLY).groupby(step).sum()
        return StepMode.GRAPH.value, {"replay_kernels": int(step.value_counts().max()), "matched_kernels": int(matched.min())}
    return "", {}


def check_graph_counts(manifest: dict[str, Any], kernels: pd.DataFrame, path: Path, damage: Damage = STRICT) -> None:
    """Each count the manifest records for the graph is a whole number and the one the table implies."""
    section, want = expected_counts(manifest, kernels)
    if not section:
        return
    got = manifest.get(section)
    if not isinstance(got, dict):
        damage.found(f"{path / 'manifest.json'}: field {section} must be an object of the graph's kernel counts")
        return
    for key, value in want.items():
        have = got.get(key)
        if not _whole(have) or have != value:
            damage.found(f"{path / 'manifest.json'}: field {section}.{key} is {have!r}, but "
                         f"{STEP_KERNELS.filename} holds {value} (the count it summarises)")
    if section == StepMode.SURGERY.value:
        _check_call_times(got, manifest, path, damage)
    eager = got.get("eager_kernels")
    if eager is not None and (not _whole(eager) or eager < want["matched_kernels"]):
        damage.found(f"{path / 'manifest.json'}: field {section}.eager_kernels is {eager!r}: a whole number "
                     f"no smaller than the {want['matched_kernels']} kernels matched to eager ops")


def _times(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                       and 0 < x < 1e12 for x in v)


def _check_call_times(got: dict[str, Any], manifest: dict[str, Any], path: Path, damage: Damage) -> None:
    """The function called on its own and torch's replay of the capture: at most one time per repeat
    each (a blocking-timer sample it discards is left out; a run may keep none), both present or
    both empty; the call's kernel sums (the profiler, no discards), when recorded, one per repeat or
    none (the user's own graph has no call). The page prints
    their medians beside natural."""
    where = path / "manifest.json"
    call, torch_g = got.get("call_us"), got.get("torch_graph_us")
    repeats = (manifest.get("step") or {}).get("repeats")
    for key, v in (("call_us", call), ("torch_graph_us", torch_g)):
        if not _times(v):
            damage.found(f"{where}: field surgery.{key} must be a list of times in µs (> 0)")
            return
    most = repeats if _whole(repeats) else 10 ** 9
    if bool(call) != bool(torch_g) or len(call) > most or len(torch_g) > most:
        damage.found(f"{where}: fields surgery.call_us and surgery.torch_graph_us hold {len(call)} and "
                     f"{len(torch_g)} times: at most one per repeat ({repeats!r}) each, both or neither")
        return
    if "call_kernel_us" not in got and "call_kernels" not in got:
        return                              # a run made before the call's kernels were traced
    sums, counts = got.get("call_kernel_us"), got.get("call_kernels")
    ok = (_times(sums) and isinstance(counts, list) and all(_whole(c) and c > 0 for c in counts)
          and len(sums) == len(counts) and len(sums) in (0, most))
    if not ok:
        damage.found(f"{where}: fields surgery.call_kernel_us and surgery.call_kernels must be one kernel "
                     f"time (µs > 0) and one kernel count (> 0) per repeat ({repeats!r}), or none")
