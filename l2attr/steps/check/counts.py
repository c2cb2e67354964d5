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

from l2attr.errors import STRICT, Damage, UserError
from l2attr.integrity.manifest import is_whole
from l2attr.manifest_model import StepManifest, typed
from l2attr.steps.check.rules import GRAPH_ONLY
from l2attr.schema import STEP_KERNELS
from l2attr.vocab import L2Condition, StepMode

def _whole(v: Any) -> bool:
    return is_whole(v) and v >= 0


def _natural(kernels: pd.DataFrame) -> pd.DataFrame:
    return kernels[kernels["condition"].astype(str) == L2Condition.NATURAL.value]


def expected_counts(manifest: dict[str, Any], kernels: pd.DataFrame) -> tuple[str, dict[str, int]]:
    """(manifest section, the counts its kernel table implies); empty for a per-op step."""
    mode = typed(manifest, model=StepManifest).mode
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
    """Each count the manifest records for the graph is the one the table implies (its type: the
    model's, manifest_model.py, one line here where nothing checked the manifest first)."""
    section, want = expected_counts(manifest, kernels)
    if not section:
        return
    t = typed(manifest, str(path / "manifest.json"), StepManifest)
    got = t.surgery if section == StepMode.SURGERY.value else t.graph
    if got is None:
        damage.found(f"{path / 'manifest.json'}: field {section} must be an object of the graph's kernel counts")
        return
    for key, value in want.items():
        have = getattr(got, key)
        if not _whole(have) or have != value:
            damage.found(f"{path / 'manifest.json'}: field {section}.{key} is {have!r}, but "
                         f"{STEP_KERNELS.filename} holds {value} (the count it summarises)")
    if section == StepMode.SURGERY.value:
        _check_call_times(got, t, path, damage)
    eager = got.eager_kernels
    if eager is not None and (not _whole(eager) or eager < want["matched_kernels"]):
        damage.found(f"{path / 'manifest.json'}: field {section}.eager_kernels is {eager!r}: a whole number "
                     f"no smaller than the {want['matched_kernels']} kernels matched to eager ops")


def _times(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                       and 0 < x < 1e12 for x in v)


def _check_call_times(got: Any, manifest: StepManifest, path: Path, damage: Damage) -> None:
    """The function called on its own and torch's replay of the capture: at most one time per repeat
    each (a blocking-timer sample it discards is left out; a run may keep none of either: every
    sample of one timer discarded, or the call given up behind the blocking kernel); the call's
    kernel sums (the profiler, no discards), when recorded, one per repeat or none (the user's own
    graph has no call). The page prints their medians beside natural."""
    where = path / "manifest.json"
    call, torch_g = got.call_us, got.torch_graph_us
    repeats = manifest.step.repeats if manifest.step is not None else None
    for key, v in (("call_us", call), ("torch_graph_us", torch_g)):
        if not _times(v):
            damage.found(f"{where}: field surgery.{key} must be a list of times in µs (> 0)")
            return
    most = repeats if _whole(repeats) else 10 ** 9
    if len(call) > most or len(torch_g) > most:
        damage.found(f"{where}: fields surgery.call_us and surgery.torch_graph_us hold {len(call)} and "
                     f"{len(torch_g)} times: at most one per repeat ({repeats!r}) each")
        return
    if not {"call_kernel_us", "call_kernels"} & got.model_fields_set:
        return                              # a run made before the call's kernels were traced
    sums, counts = got.call_kernel_us, got.call_kernels
    ok = (_times(sums) and isinstance(counts, list) and all(_whole(c) and c > 0 for c in counts)
          and len(sums) == len(counts) and len(sums) in (0, most))
    if not ok:
        damage.found(f"{where}: fields surgery.call_kernel_us and surgery.call_kernels must be one kernel "
                     f"time (µs > 0) and one kernel count (> 0) per repeat ({repeats!r}), or none")


# -- the tables against the declaration ------------------------------------------------------------
# Why: the battery of issue 38 relabelled one kernel's cold rows (the kernel dropped out of the
# answer, 27.6 % -> 14.7 %), cut repeats 5-9 from every arm, deleted the clean cold arm (a KeyError),
# zeroed every natural duration ("-inf % slower") and cut step_times.csv to its header; each table
# was whole by its own rules. What the manifest declares (the arms, the repeats) is what they must
# hold, so each is held to it here.

# the arms a step run measured before its manifest listed them (`surgery.arms`)
DEFAULT_ARMS = {StepMode.SURGERY.value: (L2Condition.NATURAL.value, L2Condition.COLD.value, L2Condition.COLD_DIRTY.value)}
TWO_ARMS = (L2Condition.NATURAL.value, L2Condition.COLD.value)


def declared_arms(manifest: dict[str, Any]) -> tuple[str, ...]:
    """The conditions a step run's step_kernels.csv holds: `surgery.arms` where the writer lists
    them, else the arms its mode has always measured."""
    t = typed(manifest, model=StepManifest)
    mode, listed = t.mode, t.surgery.arms if t.surgery is not None else None
    if listed:
        return tuple(listed)
    return DEFAULT_ARMS.get(str(mode), TWO_ARMS)


def check_declared(manifest: dict[str, Any], kernels: pd.DataFrame, times: pd.DataFrame | None,
                   dram: pd.DataFrame | None, path: Path, damage: Damage = STRICT) -> None:
    """Every declared arm present and no other; each arm the declared repeats, every kernel (node)
    of the step in every arm, durations finite and > 0; step_times.csv two timings per repeat (the
    writer's warm-up pairs left out); step_dram.csv both cache controls. Missing repeats go through
    `damage` (--allow-partial reads what is there and says so); an arm or a kernel missing never does:
    an answer without it is not the step's."""
    from l2attr.vocab import CACHE_CONTROLS

    source = str(path / STEP_KERNELS.filename)
    arms = declared_arms(manifest)
    cond = kernels["condition"].astype(str)
    have = list(dict.fromkeys(cond))
    missing, extra = [a for a in arms if a not in have], [c for c in have if c not in arms]
    if missing or extra:
        raise UserError(f"{source}: the arms are {', '.join(have) or '(no rows)'}, the manifest declares "
                        f"{', '.join(arms)} (" + ("; ".join(
                            ([f"missing {', '.join(missing)}"] if missing else [])
                            + ([f"undeclared {', '.join(extra)}"] if extra else []))) + ")")
    dur = pd.to_numeric(kernels["duration_us"], errors="coerce")
    bad = ~(dur > 0) | dur.isin([float("inf")])
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise UserError(f"{source}:{row + 2}: column duration_us must be a finite time > 0 "
                        f"(found {kernels['duration_us'].iloc[row]!r})")
    t = typed(manifest, model=StepManifest)
    if t.mode != StepMode.GRAPH.value:         # a graph's natural replay may hold its own kernels
        _same_kernels_in_every_arm(kernels, cond, arms, source)
    repeats = t.step.repeats if t.step is not None else None
    if not _whole(repeats):
        return
    steps = pd.to_numeric(kernels["step"], errors="coerce")
    for arm in arms:
        named = steps[cond == arm]
        _named(kernels["step"][cond == arm], named, repeats, f"{source}: arm {arm}", list(STEP_KERNELS.columns)[1])
        n = int(named.nunique())
        if n != repeats:
            damage.found(f"{source}: arm {arm} holds {n} steps, the manifest declares step.repeats {repeats} "
                         "(cut, or rows deleted)")
    if times is not None:
        raw = pd.to_numeric(times["repeat"], errors="coerce")
        _named(times["repeat"], raw, 2 * repeats, str(path / "step_times.csv"), "repeat")
        got = sorted(int(x) for x in raw)
        if got != list(range(2 * repeats)):
            damage.found(f"{path / 'step_times.csv'}: {len(got)} timings, the step writer times {2 * repeats} "
                         f"(two per repeat, step.repeats {repeats}; cut, or rows deleted)")
    if dram is not None:
        controls = set(dram["cache_control"].astype(str))
        lacking = [c for c in CACHE_CONTROLS if c not in controls]
        if lacking:
            raise UserError(f"{path / 'step_dram.csv'}: no rows under cache control {', '.join(lacking)}: the "
                            f"step is profiled under each of {', '.join(CACHE_CONTROLS)} (the L2 as left, flushed)")


def _named(text: pd.Series, values: pd.Series, n: int, where: str, column: str) -> None:
    """Repeats are named 0..n-1, not counted (issue 52: an arm of steps 0-8 and 10 passed the count
    and printed "not measured at nan %"): a number outside, not whole, or named twice in step_times.csv
    is damage whatever --allow-partial says (a missing one is the count's business)."""
    whole = values.notna() & (values == values.round()) & (values >= 0) & (values < n)
    if not whole.all():
        v = text.iloc[int((~whole).to_numpy().argmax())]
        v = repr(v) if isinstance(v, str) else v
        raise UserError(f"{where}: {column} {v} is no repeat of 0..{n - 1} (the declared "
                        f"repeats are numbered from 0): edited or mixed data")
    if column == "repeat" and values.duplicated().any():
        raise UserError(f"{where}: repeat {int(values[values.duplicated()].iloc[0])} is timed twice: edited or mixed data")


def _same_kernels_in_every_arm(kernels: pd.DataFrame, cond: pd.Series, arms: tuple[str, ...], source: str) -> None:
    """Each arm runs the step's kernels, each at its node (graph surgery) or op and launch index."""
    parts = [kernels[c].astype(str) for c in ("node", "op_index", "kernel_index") if c in kernels.columns]
    ident = parts[0].str.cat(parts[1:], sep="/") + " " + kernels["kernel"].astype(str)
    first = set(ident[cond == arms[0]])
    for arm in arms[1:]:
        other = set(ident[cond == arm])
        if other != first:
            odd = sorted(first ^ other)[0]
            raise UserError(f"{source}: arm {arm} holds other kernels than {arms[0]} (first differing: "
                            f"{'node/' if 'node' in kernels.columns else ''}op/kernel {odd[:80]}): every kernel "
                            "of the step is measured in every arm")
