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


def test_a_ladder_unit_measures_into_a_scratch_dir_and_the_bandwidth_once_per_gpu(monkeypatch):
    """ladders.measure.distribute.measure_unit in this process, run_ladder replaced by one that records
    what it was asked: the unit's tables and facts come back; the bandwidths only on the GPU's
    first unit."""
    import pandas as pd

    import l2attr.ladders.measure.run as run_mod
    from l2attr.ladders.measure import distribute as dl
    from l2attr.dlrm.config import WorkloadConfig
    from l2attr.dlrm.declare import parse_families, parse_rungs
    from l2attr.schema import CELLS, SAMPLES, empty

    asked = []

    def fake_run_ladder(cfg, opts, run, log=print, progress=None):
        asked.append((opts.families, opts.profiles, opts.bandwidth, run.path.parent.name))
        run.write(SAMPLES, empty(SAMPLES))
        run.write(CELLS, empty(CELLS))
        run.update_manifest(variants={"tuned/optmt/none": {}}, **({"hbm_read_GBps": 4500.0} if opts.bandwidth else {}),
                            timings={"measure_s": 1.0})
        return pd.DataFrame()

    monkeypatch.setattr(run_mod, "run_ladder", fake_run_ladder)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-test-record")
    dl._MEASURED_BANDWIDTH.discard("GPU-test-record")
    cfg = WorkloadConfig(tables=2, rows=1000, batch_size=4, pooling=2, batches=3, warmup_batches=1, hot_rows=10)
    opts = run_mod.LadderOptions(rungs=parse_rungs(None), profiles=["random", "reuse_high"],
                                 families=parse_families("tuned,fast"))
    units = dl.unit_options(opts)
    assert [k for k, _ in units] == ["ladder:tuned:random", "ladder:fast:random", "ladder:tuned:reuse_high",
                                     "ladder:fast:reuse_high"]
    assert any(v.rung.name == "torch" for v in units[0][1].variants)
    assert not any(v.rung.name == "torch" for v in units[1][1].variants)     # the reference once per profile
    first = dl.measure_unit(cfg, units[0][1])
    second = dl.measure_unit(cfg, units[1][1])
    assert first["gpu_facts"] == {"hbm_read_GBps": 4500.0} and second["gpu_facts"] == {}
    assert [a[2] for a in asked] == [True, False]
    assert first["facts"]["variants"] == {"tuned/optmt/none": {}} and first["timings"] == {"measure_s": 1.0}
    assert asked[0][3].startswith("l2attr-unit-")                      # a scratch dir, gone afterwards


def test_a_sweep_unit_measures_into_a_scratch_dir():
    from dataclasses import replace

    from helpers_sweep import LIMITS, FakeSweepDevice

    from l2attr.sweep.measure.distribute import group_units, measure_unit
    from l2attr.dlrm.config import WorkloadConfig
    from l2attr.sweep.declare import SweepOptions
    from l2attr.vocab import Family, Order, SweepAxis

    cfg = WorkloadConfig(tables=2, rows=1000, batch_size=4, pooling=2, batches=3, warmup_batches=1, hot_rows=10)
    opts = SweepOptions(axis=SweepAxis.AMORTISATION, families=[Family.TUNED], profiles=["random"], repeats=1,
                        ks=[1, 4], orders=[Order.INTERLEAVED])
    out = measure_unit(cfg, replace(opts), LIMITS, FakeSweepDevice)
    keys = {tuple(r) for r in out["units"][["family", "profile", "point", "arm", "repeat", "mode"]]
            .astype(object).to_numpy().tolist()}
    assert keys == set(group_units(cfg, opts, LIMITS, "tuned", "random"))
    assert out["units"]["rows"].sum() == len(out["samples"]) and not out["points"].empty
    assert "limits" in out["facts"]
