"""`l2attr sweep --workers` on a real LocalCluster with fake GPUs (helpers_sweep's device with
known times): the same points as one process, one GPU per family x profile, a killed worker,
a unit group that kills every worker it meets (missing, nothing of it written), and `--resume`
of a one-process sweep cut short. Skips without Dask."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pandas as pd
import pytest
from helpers_sweep import LIMITS, FakeSweepDevice

pytest.importorskip("distributed")

from l2attr.sweep.analyse.judge import analyse_sweep  # noqa: E402
from l2attr.sweep.load import load_sweep  # noqa: E402
from l2attr.distribute.cluster import open_cluster  # noqa: E402
from l2attr.distribute.options import Distribute  # noqa: E402
from l2attr.sweep.measure.distribute import sweep_on_workers  # noqa: E402
from l2attr.distribute.where import where_am_i  # noqa: E402
from l2attr.errors import UserError  # noqa: E402
from l2attr.dlrm.config import WorkloadConfig  # noqa: E402
from l2attr.sweep.measure.run import run_sweep  # noqa: E402
from l2attr.sweep.declare import SweepOptions  # noqa: E402
from l2attr.sweep.table import SWEEP_POINTS, SWEEP_SAMPLES, SWEEP_UNITS  # noqa: E402
from l2attr.rundir import RunDir  # noqa: E402
from l2attr.schema import UNITS  # noqa: E402
from l2attr.vocab import Family, Order, SweepAxis  # noqa: E402

SLOTS = ("GPU-fake-0", "GPU-fake-1")
DIST = Distribute(workers=2, slots=SLOTS)
CFG = WorkloadConfig(tables=2, rows=1000, batch_size=4, pooling=2, batches=3, warmup_batches=1, hot_rows=10)
OPTS = SweepOptions(axis=SweepAxis.AMORTISATION, families=[Family.ARTIFACT, Family.TUNED],
                    profiles=["reuse_high", "random"], repeats=2, ks=[1, 4], orders=[Order.INTERLEAVED])
KEY = ["family", "pin", "profile", "point", "arm", "quantity", "timer"]


def fake_probe(check, args):
    """A worker's probe without a GPU: its fake GPU's facts and the fake device limits."""
    w = where_am_i()
    return {"where": w, "gpu": {"name": "Fake GPU", "l2_bytes": LIMITS.l2_bytes, "uuid": w.gpu_uuid},
            "versions": {"l2attr": "test"}, "check": LIMITS}


class DyingDevice(FakeSweepDevice):
    """The fake device, except that its worker dies inside the 5th arm of the tuned/random group
    (after rows were measured into the worker's scratch dir): the first time only, or always."""

    def __init__(self, marker, always, cfg, opts, limits, log=print):
        super().__init__(cfg, opts, limits, log)
        self.marker, self.always = Path(marker), always

    def arm(self, family, p, arm):
        mine = family == Family.TUNED and self.profiles[-1:] == ["random"]
        if mine and self.units == 4 and (self.always or not self.marker.exists()):
            self.marker.write_text("died")
            os._exit(7)
        return super().arm(family, p, arm)


def dying(marker: Path, always: bool = False):
    return partial(DyingDevice, str(marker), always)


class Interrupted(FakeSweepDevice):
    """A one-process sweep stopped (Ctrl-C) in its 41st unit: the reuse_high groups (32 units)
    are finished, random's artifact group is part-measured (8 of its 16 units), tuned's empty."""

    def arm(self, family, p, arm):
        if self.units == 40:
            raise KeyboardInterrupt
        return super().arm(family, p, arm)


@pytest.fixture(scope="module")
def client():
    with open_cluster(DIST, log=lambda s: None, prefer_cuda=False) as c:
        yield c


def one_process(root: Path, device=FakeSweepDevice) -> RunDir:
    run = RunDir.create(root, "one", {"kind": "sweep", "config": CFG.to_dict(), "sweep": OPTS.manifest(),
                                      "gpu": {"name": "Fake GPU"}})
    run_sweep(CFG, OPTS, run, LIMITS, device_factory=device, log=lambda s: None)
    return run


def on_workers(client, root: Path, run=None, device=FakeSweepDevice, log=lambda s: None) -> RunDir:
    return sweep_on_workers(CFG, OPTS, run, DIST, root, "many", "l2attr sweep amortisation --workers 2",
                            log=log, device_factory=device, probe_fn=fake_probe, client=client)


def points_of(run: RunDir) -> pd.DataFrame:
    return run.read(SWEEP_POINTS).sort_values(KEY).reset_index(drop=True)


def same_points(a: RunDir, b: RunDir) -> None:
    pa, pb = points_of(a), points_of(b)
    assert len(pa) == len(pb) > 0
    pd.testing.assert_frame_equal(pa[KEY + ["n_samples", "median_us"]], pb[KEY + ["n_samples", "median_us"]],
                                  check_dtype=False)


def test_two_workers_measure_what_one_process_does_one_gpu_per_group(client, tmp_path):
    ref = one_process(tmp_path / "ref")
    run = on_workers(client, tmp_path / "w")
    same_points(ref, run)
    units = run.read(SWEEP_UNITS)
    assert len(units) == len(ref.read(SWEEP_UNITS)) and units["rows"].sum() == len(run.read(SWEEP_SAMPLES))
    assert set(units["gpu_uuid"]) <= set(SLOTS)
    assert units.groupby(["family", "profile"])["gpu_uuid"].nunique().eq(1).all()   # a group is one GPU
    per_unit = run.read(UNITS)
    assert sorted(per_unit["unit"]) == sorted(f"sweep:{f}:{p}" for f in ("artifact", "tuned")
                                              for p in ("reuse_high", "random"))
    m = run.manifest()
    assert set(m["gpus"]) <= set(SLOTS) and "uuid" not in m["gpu"] or len(m["gpus"]) == 1
    an = analyse_sweep(load_sweep(run.path))          # the sweep's own integrity checks accept it
    assert not an.table.empty


def test_a_worker_killed_mid_group_loses_nothing(client, tmp_path):
    run = on_workers(client, tmp_path / "w", device=dying(tmp_path / "marker"))
    assert (tmp_path / "marker").exists()
    same_points(one_process(tmp_path / "ref"), run)
    s = run.read(SWEEP_SAMPLES)
    keys = ["family", "profile", "point", "arm", "repeat", "mode", "group", "table", "position", "role"]
    assert not s.duplicated(keys).any()               # the dead worker's rows never reached the run dir


def test_a_group_that_kills_every_worker_is_missing_whole_then_resumed(client, tmp_path):
    with pytest.raises(UserError, match=r"1 units missing.*sweep:tuned:random.*--resume"):
        on_workers(client, tmp_path / "w", device=dying(tmp_path / "marker", always=True))
    (run_path,) = (tmp_path / "w").iterdir()
    run = RunDir(run_path)
    units = run.read(SWEEP_UNITS)
    assert not ((units.family == "tuned") & (units.profile == "random")).any()
    samples = run.read(SWEEP_SAMPLES)
    assert not ((samples.family == "tuned") & (samples.profile == "random")).any()
    assert run.manifest()["missing_units"].keys() == {"sweep:tuned:random"}
    client.wait_for_workers(1, timeout=300)
    on_workers(client, tmp_path, run=run)             # --resume: only the missing group is measured
    assert len(run.read(UNITS)) == 4
    same_points(one_process(tmp_path / "ref"), run)
    assert run.manifest()["missing_units"] is None


def test_resume_on_workers_of_a_one_process_run_cut_short(client, tmp_path):
    ref = one_process(tmp_path / "ref")
    with pytest.raises(KeyboardInterrupt):
        one_process(tmp_path / "cut", device=Interrupted)
    (cut,) = (tmp_path / "cut").iterdir()
    run = RunDir(cut)
    before = run.read(SWEEP_UNITS)
    assert len(before) == 40
    said: list[str] = []
    on_workers(client, tmp_path, run=run, log=said.append)
    assert any("1 family x profile group(s) were part-measured (artifact/random)" in s for s in said)
    assert any("2 finished group(s) kept" in s for s in said)
    assert len(run.read(UNITS)) == 2                  # only the two groups left were measured
    same_points(ref, run)
    units = run.read(SWEEP_UNITS)
    assert len(units) == len(ref.read(SWEEP_UNITS))
    # the part-measured group was measured again whole, on one GPU: no group mixes GPUs
    assert units.groupby(["family", "profile"])["gpu_uuid"].nunique(dropna=False).eq(1).all()
