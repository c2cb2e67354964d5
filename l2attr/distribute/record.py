"""What the lead records of a distributed run: per unit where it ran (units.csv), per GPU its facts.

The manifest's `gpu` keeps meaning "the GPU this run measured on": with one GPU it is that GPU's
facts, UUID included, as a one-process run writes them; with several it holds the facts they all
share (name, L2 size, ...) and no UUID, and `gpus` holds each one's own (host, worker, UUID,
bandwidths a unit measured there). Workers with GPUs of two kinds are refused: their cells would be
one study of two machines.
"""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from l2attr.distribute.units import Arrived
from l2attr.distribute.where import Where, where_am_i
from l2attr.errors import UserError
from l2attr.manifest_model import sections
from l2attr.rundir import RunDir
from l2attr.schema import UNITS

PER_GPU = ("uuid", "host", "sm_clock_mhz", "mem_clock_mhz", "power_limit_w", "ecc_mode", "persistence_mode")


def record_unit(run: RunDir, arrived: Arrived, facts: dict[str, Any] | None = None) -> None:
    """units.csv gets the unit's row; manifest.gpus[uuid] what the unit measured of its GPU."""
    run.append(UNITS, pd.DataFrame([arrived.units_row()]))
    if facts:
        gpus = dict(sections(run.manifest(), ("gpus",), f"{run.path}/manifest.json").get("gpus") or {})
        entry = dict(gpus.get(arrived.where.gpu_uuid) or {})
        entry.update(facts)
        gpus[arrived.where.gpu_uuid] = entry
        run.update_manifest(gpus=gpus)


def probe(check: Callable[..., Any] | None, args: tuple[Any, ...]) -> dict[str, Any]:
    """On a worker: its GPU's facts, the software there, and the run's own checks (check_fits ...)."""
    from l2attr.gpu.device import gpu_facts, software_versions

    facts = gpu_facts()
    return {"where": where_am_i(), "gpu": facts, "versions": software_versions(),
            "check": check(*args) if check is not None else None}


def probe_workers(client: Any, check: Callable[..., Any] | None = None, args: tuple[Any, ...] = (),
                  fn: Callable[..., dict[str, Any]] = probe) -> list[dict[str, Any]]:
    """`fn(check, args)` once on every worker (its GPU held); a UserError there is raised here."""
    from l2attr.distribute.cluster import GPU_RESOURCE

    workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
    futures = [client.submit(fn, check, args, key=f"probe-{i}-{w}", workers=[w], allow_other_workers=False,
                             resources={GPU_RESOURCE: 1}, pure=False) for i, w in enumerate(workers)]
    return client.gather(futures)


def run_gpu(probes: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(the manifest's gpu, its gpus by UUID) from every worker's probe."""
    gpus: dict[str, dict[str, Any]] = {}
    for p in probes:
        where: Where = p["where"]
        facts = dict(p["gpu"])
        uuid = facts.get("uuid") or where.gpu_uuid
        facts.update(uuid=uuid, host=where.host, worker=where.worker)
        gpus[uuid] = facts
    kinds = sorted({str(f.get("name")) for f in gpus.values()})
    if len(kinds) > 1:
        raise UserError(f"the workers' GPUs are of {len(kinds)} kinds ({', '.join(kinds)}); a run measures one "
                        "kind of GPU: give each kind its own run (and `l2attr report --allow-mixed` to set them "
                        "side by side)")
    facts = list(gpus.values())
    if len(facts) == 1:
        return dict(facts[0]), gpus
    shared = {k: v for k, v in facts[0].items()
              if k not in PER_GPU and k != "worker" and all(f.get(k) == v for f in facts)}
    shared["count"] = len(facts)
    return shared, gpus


def merge_facts(into: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Dict-valued manifest facts (variants, checks, workloads ...) merged key by key; a scalar
    fact keeps the first unit's value (the per-GPU copies live in `gpus`)."""
    out = dict(into)
    for k, v in new.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = {**out[k], **v}
        else:
            out.setdefault(k, v)
    return out
