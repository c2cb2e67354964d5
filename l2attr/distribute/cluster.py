"""The Dask cluster a run's units go to: local workers pinned one per GPU, or a running scheduler.

Local: dask-cuda's LocalCUDACluster where it is installed (it sets CUDA_VISIBLE_DEVICES per
worker and makes each worker's CUDA context at start), else a distributed.LocalCluster whose
worker specs carry the same variable (PinnedCluster). Every worker offers the resource GPU=1 and
runs one thread, so a unit asking for GPU=1 has its GPU to itself. A worker that dies mid-unit
is restarted by its nanny; the scheduler re-runs the unit elsewhere `lost_worker_retries` times
(distributed.scheduler.allowed-failures) before the unit is reported missing.
"""

from __future__ import annotations

import copy
import logging
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from l2attr.distribute.options import Distribute
from l2attr.errors import UserError

GPU_RESOURCE = "GPU"
CONNECT_TIMEOUT_S = 20
WORKERS_TIMEOUT_S = 120


def pinned_cluster_class() -> type:
    """A LocalCluster that gives worker i the env CUDA_VISIBLE_DEVICES=slots[i] (Dask imported late)."""
    from distributed import LocalCluster

    class PinnedCluster(LocalCluster):  # type: ignore[misc]
        """One nanny-managed worker process per slot, the slot's GPU its only visible one."""

        def __init__(self, slots: list[str], **kwargs: Any) -> None:
            self._slots = {f"gpu{i}": slot for i, slot in enumerate(slots)}
            super().__init__(n_workers=0, **kwargs)
            self.scale(len(self._slots))
            self.sync(self._correct_state)

        def new_worker_spec(self) -> dict[str, Any]:
            free = [name for name in self._slots if name not in self.worker_spec]
            if not free:
                raise ValueError(f"no GPU left for another worker (slots {list(self._slots.values())})")
            spec = copy.deepcopy(self.new_spec)
            env = {**spec["options"].get("env", {}), "CUDA_VISIBLE_DEVICES": self._slots[free[0]]}
            spec["options"]["env"] = env
            return {free[0]: spec}

    return PinnedCluster


def _local(dist: Distribute, log: Callable[[str], None], prefer_cuda: bool) -> Any:
    common = dict(threads_per_worker=1, resources={GPU_RESOURCE: 1}, dashboard_address=":0", memory_limit=0,
                  silence_logs=logging.ERROR)     # LocalCUDACluster sets processes=True itself
    if prefer_cuda:
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:
            pass
        else:
            try:
                cluster = LocalCUDACluster(CUDA_VISIBLE_DEVICES=list(dist.slots), n_workers=len(dist.slots),
                                           **common)
                log(f"cluster: dask-cuda LocalCUDACluster, {len(dist.slots)} worker(s), one per GPU")
                return cluster
            except Exception as exc:   # no NVML, an odd device list: the plain cluster pins as well
                log(f"cluster: dask-cuda could not start ({type(exc).__name__}: {exc}); using LocalCluster")
    cluster = pinned_cluster_class()(list(dist.slots), processes=True, **common)
    log(f"cluster: distributed LocalCluster, {len(dist.slots)} worker(s), CUDA_VISIBLE_DEVICES per worker")
    return cluster


def _check_workers(client: Any, where: str) -> None:
    try:
        client.wait_for_workers(1, timeout=WORKERS_TIMEOUT_S)
    except Exception:
        raise UserError(f"{where}: no worker joined within {WORKERS_TIMEOUT_S} s") from None
    workers = client.scheduler_info(n_workers=-1)["workers"]
    if not any((w.get("resources") or {}).get(GPU_RESOURCE) for w in workers.values()):
        raise UserError(f"{where}: its workers offer no {GPU_RESOURCE} resource; start one per GPU with "
                        f"`dask-cuda-worker ADDRESS --resources {GPU_RESOURCE}=1` (or `dask worker ADDRESS "
                        f"--nthreads 1 --resources {GPU_RESOURCE}=1` with CUDA_VISIBLE_DEVICES set)")


@contextmanager
def open_cluster(dist: Distribute, log: Callable[[str], None] = print, lost_worker_retries: int = 1,
                 prefer_cuda: bool = True) -> Iterator[Any]:
    """A connected distributed.Client; the local cluster (if any) is shut down on the way out."""
    import dask
    from distributed import Client

    with dask.config.set({"distributed.scheduler.allowed-failures": lost_worker_retries}):
        if dist.scheduler is not None:
            try:
                client = Client(dist.scheduler, timeout=f"{CONNECT_TIMEOUT_S}s")
            except (OSError, TimeoutError) as exc:
                raise UserError(f"--scheduler {dist.scheduler}: cannot reach it ({type(exc).__name__}: "
                                f"{str(exc).splitlines()[0] if str(exc) else 'no answer'})") from None
            try:
                _check_workers(client, f"--scheduler {dist.scheduler}")
                yield client
            finally:
                client.close()
            return
        cluster = _local(dist, log, prefer_cuda)
        try:
            with Client(cluster) as client:
                _check_workers(client, "local cluster")
                yield client
        finally:
            cluster.close()


@contextmanager
def using_cluster(dist: Distribute, log: Callable[[str], None], client: Any = None) -> Iterator[Any]:
    """`client` when the caller holds one (tests share a cluster), else a cluster opened for the run."""
    if client is not None:
        yield client
        return
    with open_cluster(dist, log) as c:
        yield c
