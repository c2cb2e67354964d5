"""The distributed runner on a real distributed.LocalCluster (processes, one per fake GPU):
units pinned one per GPU, results handed to the lead as they arrive, a killed worker losing only
its unit, Nsight Compute units never two at a time on one GPU. Skips without Dask."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from l2attr.distribute.cluster import open_cluster  # noqa: E402
from l2attr.distribute.options import Distribute  # noqa: E402
from l2attr.distribute.units import Unit, run_units  # noqa: E402
from l2attr.errors import UserError  # noqa: E402

SLOTS = ("GPU-fake-0", "GPU-fake-1")


def env_of(i: int, pause: float) -> tuple[int, str, int]:
    time.sleep(pause)
    return i, os.environ.get("CUDA_VISIBLE_DEVICES", ""), os.getpid()


def die_first_time(marker: str) -> str:
    """A unit whose worker dies the first time it runs it (os._exit: no exception, no cleanup)."""
    if not Path(marker).exists():
        Path(marker).write_text("died once")
        os._exit(3)
    return "second attempt"


def die_always() -> None:
    os._exit(4)


def user_mistake() -> None:
    raise UserError("variant tuned optmt is wrong on the random workload")


def interval(i: int, pause: float) -> tuple[float, float]:
    start = time.time()
    time.sleep(pause)
    return start, time.time()


@pytest.fixture(scope="module")
def client():
    with open_cluster(Distribute(workers=2, slots=SLOTS), log=lambda s: None, prefer_cuda=False) as c:
        yield c


def test_units_run_in_their_own_process_pinned_to_one_gpu(client):
    got = []
    out = run_units(client, [Unit(f"u{i}", env_of, (i, 0.3)) for i in range(6)], got.append, log=lambda s: None)
    assert sorted(out.done) == [f"u{i}" for i in range(6)] and not out.missing
    for a in got:
        i, env, pid = a.value
        assert env in SLOTS and a.where.gpu_uuid == env          # where = the worker's own GPU
        assert pid != os.getpid()
        assert a.units_row()["gpu_uuid"] == env and a.units_row()["worker"]
    assert {a.where.gpu_uuid for a in got} == set(SLOTS)        # both GPUs took units
    assert len({a.value[2] for a in got}) == 2                  # one process per GPU


def test_a_killed_worker_loses_only_its_unit(client, tmp_path):
    got = []
    units = [Unit(f"ok{i}", env_of, (i, 0.2)) for i in range(3)]
    units += [Unit("dies-once", die_first_time, (str(tmp_path / "marker"),)), Unit("dies-always", die_always)]
    said: list[str] = []
    out = run_units(client, units, got.append, log=said.append)
    assert (tmp_path / "marker").exists()                       # its first attempt killed a worker
    # a unit lost with a worker gets one more try alone (so a neighbour cannot take it down)
    assert any("tried once more, alone" in s and "dies-always" in s for s in said)
    assert {a.key: a.value for a in got}["dies-once"] == "second attempt"   # re-run on a fresh one
    assert list(out.missing) == ["dies-always"] and "KilledWorker" in out.missing["dies-always"]
    assert "dies-always" not in {a.key for a in got}           # never handed to the lead: nothing written
    assert sorted(out.done) == ["dies-once", "ok0", "ok1", "ok2"]
    # the cluster goes on measuring after the deaths (each nanny restarts its worker when it can)
    client.wait_for_workers(1, timeout=300)
    again = []
    out = run_units(client, [Unit(f"after{i}", env_of, (i, 0.1)) for i in range(3)], again.append, log=lambda s: None)
    assert sorted(out.done) == ["after0", "after1", "after2"] and {a.where.gpu_uuid for a in again} <= set(SLOTS)


def test_a_user_error_in_a_unit_is_raised_in_the_lead(client):
    with pytest.raises(UserError, match="wrong on the random workload"):
        run_units(client, [Unit("bad", user_mistake)], lambda a: None, log=lambda s: None)


def test_repeated_unit_keys_are_refused(client):
    with pytest.raises(ValueError, match="repeat"):
        run_units(client, [Unit("same", env_of, (0, 0)), Unit("same", env_of, (1, 0))], lambda a: None)


def _overlaps(spans: list[tuple[float, float]]) -> bool:
    spans = sorted(spans)
    return any(b[0] < a[1] for a, b in zip(spans, spans[1:]))


def test_ncu_units_take_turns_on_a_gpu_and_run_in_parallel_on_two():
    """Three workers, two of them on one GPU: only the per-GPU profiling lock keeps two ncu
    children off it at once. The same units without the lock do overlap there (the test can fail)."""
    dist = Distribute(workers=3, slots=("GPU-fake-A", "GPU-fake-A", "GPU-fake-B"))
    with open_cluster(dist, log=lambda s: None, prefer_cuda=False) as c:
        for ncu in (True, False):
            got = []
            run_units(c, [Unit(f"p{i}", interval, (i, 0.6), ncu=ncu) for i in range(9)], got.append,
                      log=lambda s: None, tag=f"ncu{ncu}")
            by_gpu: dict[str, list[tuple[float, float]]] = {}
            for a in got:
                by_gpu.setdefault(a.where.gpu_uuid, []).append(a.value)
            assert set(by_gpu) == {"GPU-fake-A", "GPU-fake-B"}
            assert _overlaps(by_gpu["GPU-fake-A"]) is (not ncu)
            assert not _overlaps(by_gpu["GPU-fake-B"])     # one worker there: never two at once
            # different GPUs profile at the same time
            assert any(a[0] < b[1] and b[0] < a[1] for a in by_gpu["GPU-fake-A"] for b in by_gpu["GPU-fake-B"])
