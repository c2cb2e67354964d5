"""What the lead records of the workers' GPUs (no Dask needed): one GPU keeps today's manifest
`gpu`, several keep what they share and no UUID, two kinds are refused."""

from __future__ import annotations

import pytest

from l2attr.distribute.record import merge_facts, run_gpu
from l2attr.distribute.where import Where
from l2attr.errors import UserError


def probe(uuid: str, name: str = "NVIDIA H200", clock: str = "1980") -> dict:
    return {"where": Where(uuid, name, "host-a", f"tcp://w-{uuid}"),
            "gpu": {"name": name, "l2_bytes": 62914560, "uuid": uuid, "sm_clock_mhz": clock}}


def test_one_gpu_is_recorded_as_one_process_records_it():
    gpu, gpus = run_gpu([probe("GPU-1")])
    assert gpu["uuid"] == "GPU-1" and gpu["name"] == "NVIDIA H200" and list(gpus) == ["GPU-1"]


def test_several_gpus_share_their_kind_not_their_uuid():
    gpu, gpus = run_gpu([probe("GPU-1"), probe("GPU-2", clock="1755")])
    assert "uuid" not in gpu and "sm_clock_mhz" not in gpu and gpu["count"] == 2
    assert gpu["name"] == "NVIDIA H200" and gpu["l2_bytes"] == 62914560
    assert gpus["GPU-2"]["sm_clock_mhz"] == "1755" and gpus["GPU-2"]["worker"] == "tcp://w-GPU-2"


def test_two_kinds_of_gpu_are_refused():
    with pytest.raises(UserError, match="2 kinds .*NVIDIA A100.*NVIDIA H200"):
        run_gpu([probe("GPU-1"), probe("GPU-2", name="NVIDIA A100")])


def test_dict_facts_merge_and_scalars_keep_the_first():
    out = merge_facts({"checks": {"a": 1}, "telemetry": "NVML"}, {"checks": {"b": 2}, "telemetry": "none", "x": 3})
    assert out == {"checks": {"a": 1, "b": 2}, "telemetry": "NVML", "x": 3}
