"""The manifest's types: what every run kind's manifest.json must say, and in which form.

Why: the report prints the manifest's facts as they stand, so `tables: -12` became "-12 tables",
`rows: "many"` "many rows", a NaN bandwidth a NaN roofline and `created_utc: "yesterday"` an
undated run whose measurements lose to every dated one. A manifest is JSON written by l2attr;
a field of the wrong type was edited or damaged, and is refused like a damaged table row.
"""

from __future__ import annotations

import math
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import Any

from l2attr.ladder.config import WorkloadConfig
from l2attr.errors import Damage, UserError
from l2attr.vocab import Verdict

BANDWIDTHS = ("hbm_copy_GBps", "hbm_read_GBps", "l2_read_GBps")
# validity_control figures that must be numbers when present (analysis/control.py writes them)
CONTROL_NUMBERS = ("hit_rate_gain_points", "dram_read_reduction")
CONTROL_ARMS = ("after_pin", "after_flush", "after_reset")


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_iso_time(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def check_manifest(manifest: dict[str, Any], path: Path, damage: Damage) -> None:
    """Every typed field of a run's manifest (any kind); each wrong one through `damage`."""
    source = f"{path}/manifest.json"

    def bad(field: str, rule: str, value: Any) -> None:
        damage.found(f"{source}: {field} must be {rule} (found {value!r})")

    config = manifest.get("config")
    if isinstance(config, dict):
        known = {f.name for f in fields(WorkloadConfig)}
        for name in ("tables", "rows", "dim", "batch_size", "pooling"):
            if name not in config:
                bad(f"config.{name}", "present (the workload's shape)", None)
        try:
            WorkloadConfig(**{k: v for k, v in config.items() if k in known})
        except UserError as exc:
            damage.found(f"{source}: {exc}")
        except TypeError as exc:   # pragma: no cover - a field WorkloadConfig does not take
            damage.found(f"{source}: config: {exc}")
    # a field left out is shown as "unknown" (older writers, hand-made runs); one present in
    # another form was edited or damaged
    if "created_utc" in manifest and not is_iso_time(manifest["created_utc"]):
        bad("created_utc", "an ISO 8601 time (when the run was made)", manifest["created_utc"])
    if "gpu" in manifest:
        gpu = manifest.get("gpu")
        name = gpu.get("name") if isinstance(gpu, dict) else None
        if not (isinstance(name, str) and name.strip()):
            bad("gpu.name", "a non-empty string (the GPU the run measured)", name if isinstance(gpu, dict) else gpu)
    if "measure" in manifest and not isinstance(manifest["measure"], dict):
        bad("measure", "an object (the ladder's settings)", manifest["measure"])
    if "sweep" in manifest and not isinstance(manifest["sweep"], dict):
        bad("sweep", "an object (the sweep's settings)", manifest["sweep"])
    for key in BANDWIDTHS:
        value = manifest.get(key)
        if value is not None and not (is_number(value) and value > 0):
            bad(key, "a finite number > 0 (GB/s)", value)
    _check_control(manifest.get("validity_control"), bad)
    _check_passes(manifest.get("replayer_passes"), bad)


def _check_control(vc: Any, bad: Any) -> None:
    """The validity control's figures are printed as percentages: "high %" is not one."""
    if vc is None:
        return
    if not isinstance(vc, dict):
        bad("validity_control", "an object", vc)
        return
    verdict = vc.get("verdict")
    if verdict not in (*Verdict.values(), "skipped"):
        bad("validity_control.verdict", f"one of {', '.join(Verdict.values())}, skipped", verdict)
    for key in CONTROL_NUMBERS:
        if key in vc and vc[key] is not None and not is_number(vc[key]):
            bad(f"validity_control.{key}", "a finite number", vc[key])
    for arm in CONTROL_ARMS:
        facts = vc.get(arm)
        if facts is None:
            continue
        if not isinstance(facts, dict):
            bad(f"validity_control.{arm}", "an object", facts)
            continue
        for key, value in facts.items():
            if value is not None and not is_number(value):
                bad(f"validity_control.{arm}.{key}", "a finite number", value)
            elif key == "calls" and value is not None and not (is_whole(value) and value >= 0):
                bad(f"validity_control.{arm}.calls", "a whole number >= 0", value)


def _check_passes(passes: Any, bad: Any) -> None:
    if passes is None:
        return
    if not isinstance(passes, dict):
        bad("replayer_passes", "an object (report -> kernel count)", passes)
        return
    for report, facts in passes.items():
        kernels = facts.get("kernels") if isinstance(facts, dict) else facts
        if not (is_whole(kernels) and kernels >= 0):
            bad(f"replayer_passes[{report}].kernels", "a whole number >= 0", kernels)
