"""Runs combined in one report measure one workload on one kind of GPU, or are a comparison.

Why one rule for every kind: ladder and profile runs of different configs were refused, but a
sweep of 500K rows was quietly reported beside a ladder of 100K rows (its break-even quoted in
the verdict), and an "A100" ladder beside an H200 profile. The identity of a run is its
workload config (the shape the kernels read) and its GPU (name, L2 size, UUID where both runs
record one); any difference is
refused in one line, or with `--allow-mixed` written at the top of the report as a comparison.
"""

from __future__ import annotations

from typing import Any

from l2attr.errors import UserError

# The GPU: its kind (name, L2 size) and, where both runs record it, the physical device (uuid):
# two GPUs of one kind differ by a percent or two in HBM bandwidth, so their cells are two
# measurements, not one.
GPU_FIELDS = ("name", "l2_bytes", "uuid")


def identity(manifest: dict[str, Any]) -> dict[str, Any]:
    """The facts two runs must share to be read as one study: config keys and gpu.<field>."""
    out = {f"config.{k}": v for k, v in (manifest.get("config") or {}).items()}
    gpu = manifest.get("gpu") if isinstance(manifest.get("gpu"), dict) else {}
    out.update({f"gpu.{k}": gpu.get(k) for k in GPU_FIELDS if gpu.get(k) is not None})
    return out


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """'key: a vs b' for each identity fact that differs (or that only one manifest records);
    config keys are named as before (`rows: ...`), GPU facts as `gpu.name: ...`."""
    ia, ib = identity(a), identity(b)
    out = []
    for key in sorted(set(ia) | set(ib), key=lambda k: (k.startswith("gpu."), k)):
        if key.startswith("gpu.") and key != "gpu.name" and not (key in ia and key in ib):
            continue    # a GPU fact only one writer records (older runs) is no difference
        va, vb = ia.get(key, "<absent>"), ib.get(key, "<absent>")
        if va != vb:
            out.append(f"{key.removeprefix('config.')}: {va!r} vs {vb!r}")
    return out


def combine(named: list[tuple[str, dict[str, Any]]], allow_mixed: bool) -> tuple[list[str], set[str]]:
    """Compare every run with the first: (the caveats to put at the top, the names of runs that
    differ). Refused in one line unless `allow_mixed`."""
    notes: list[str] = []
    differing: set[str] = set()
    if not named:
        return notes, differing
    first_name, first = named[0]
    for name, manifest in named[1:]:
        diff = differences(first, manifest)
        if not diff:
            continue
        message = f"runs {first_name} and {name} differ in workload or GPU ({'; '.join(diff)})"
        if not allow_mixed:
            raise UserError(message + "; combine runs of one workload on one GPU, or pass --allow-mixed "
                                      "to show them as a comparison")
        notes.append(message + "; shown side by side as a comparison (--allow-mixed), not as one "
                               "measurement: compare with care")
        differing.add(name)
    return notes, differing
