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
from l2attr.schema import STEP_KERNELS
from l2attr.vocab import L2Condition, StepMode

GRAPH_ONLY = -2       # op_index of a kernel the eager ops did not launch (integrity/step.py)


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


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
        return "surgery", {"graph_kernels": int(nodes.nunique()),
                           "matched_kernels": int(nodes[op != GRAPH_ONLY].nunique())}
    if mode == StepMode.GRAPH.value:
        matched = (op != GRAPH_ONLY).groupby(step).sum()
        return "graph", {"replay_kernels": int(step.value_counts().max()), "matched_kernels": int(matched.min())}
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
    if section == "surgery":
        _check_call_times(got, manifest, path, damage)
    eager = got.get("eager_kernels")
    if eager is not None and (not _whole(eager) or eager < want["matched_kernels"]):
        damage.found(f"{path / 'manifest.json'}: field {section}.eager_kernels is {eager!r}: a whole number "
                     f"no smaller than the {want['matched_kernels']} kernels matched to eager ops")


def _times(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                       and 0 < x < 1e12 for x in v)


def _check_call_times(got: dict[str, Any], manifest: dict[str, Any], path: Path, damage: Damage) -> None:
    """The function called on its own and torch's replay of the capture: one time per repeat each, or
    both empty (the user's own graph has neither). The page prints their medians beside natural."""
    call, torch_g = got.get("call_us"), got.get("torch_graph_us")
    repeats = (manifest.get("step") or {}).get("repeats")
    for key, v in (("call_us", call), ("torch_graph_us", torch_g)):
        if not _times(v):
            damage.found(f"{path / 'manifest.json'}: field surgery.{key} must be a list of times in µs (> 0)")
            return
    if len(call) != len(torch_g) or (call and _whole(repeats) and len(call) != repeats):
        damage.found(f"{path / 'manifest.json'}: fields surgery.call_us and surgery.torch_graph_us hold "
                     f"{len(call)} and {len(torch_g)} times: one per repeat ({repeats!r}) each, or none")
