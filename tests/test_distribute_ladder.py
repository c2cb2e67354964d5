"""`l2attr ladder --workers` on a real LocalCluster with fake GPUs: a fake unit measurement whose
times say which GPU measured them (GPU 1 is 10 % slower), so the lead's records can be checked
against the numbers; a killed worker, a unit that kills every worker (missing, then resumed), a
unit found part-measured; and the analysis rule: no ratio across two GPUs unless asked. Skips
without Dask."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from l2attr.analysis.load import load_runs  # noqa: E402
from l2attr.study.study import analyse  # noqa: E402
from l2attr.distribute.cluster import open_cluster  # noqa: E402
from l2attr.ladders.measure.distribute import ladder_on_workers, unit_options  # noqa: E402
from l2attr.distribute.options import Distribute  # noqa: E402
from l2attr.distribute.where import where_am_i  # noqa: E402
from l2attr.errors import UserError  # noqa: E402
from l2attr.dlrm.config import WorkloadConfig  # noqa: E402
from l2attr.dlrm.declare import parse_families, parse_rungs  # noqa: E402
from l2attr.ladders.measure.protocol import samples_per_repeat  # noqa: E402
from l2attr.ladders.measure.run import LadderOptions, consumer_bytes_per_call, ladder_manifest, repeat_plan  # noqa: E402
from l2attr.measure.stats import summarize_cell  # noqa: E402
from l2attr.rundir import RunDir  # noqa: E402
from l2attr.schema import CELLS, SAMPLES, UNITS  # noqa: E402
from l2attr.vocab import Family  # noqa: E402

SLOTS = ("GPU-fake-0", "GPU-fake-1")
DIST = Distribute(workers=2, slots=SLOTS)
CFG = WorkloadConfig(tables=2, rows=1000, batch_size=4, pooling=2, batches=3, warmup_batches=1, hot_rows=10)
OPTS = LadderOptions(rungs=parse_rungs(None), profiles=["reuse_high", "random"], families=parse_families("all"),
                     repeats=2)
BASE_US = {"baseline": 100.0, "optmt": 90.0, "rpf_optmt": 80.0, "l2p_optmt": 85.0, "combined": 75.0, "torch": 120.0}


def slow(gpu: str) -> float:
    return 1.0 + 0.1 * SLOTS.index(gpu)


def fake_measure(cfg, opts, marker: str = "", always: bool = False):
    """What ladders.measure.distribute.measure_unit returns, from times set by rung and GPU; the worker dies
    in the tuned/random unit the first time (marker) or every time (always)."""
    if marker and opts.families == [Family.TUNED] and opts.profiles == ["random"]:
        if always or not Path(marker).exists():
            Path(marker).write_text("died")
            os._exit(9)
    f = slow(where_am_i().gpu_uuid)
    rows = []
    for p in opts.profiles:
        for st in opts.states:
            for v in opts.variants:
                for rep, device in repeat_plan(opts):
                    for i in range(samples_per_repeat(cfg)):
                        base = BASE_US[v.rung.name] * (0.5 if v.family == Family.FAST else 1.0) * f
                        rows.append({"family": v.family.value, "rung": v.rung.name, "pin": v.pin.value, "profile": p,
                                     "l2_state": st, "repeat": rep, "batch": 1 + (i + 1) // cfg.tables,
                                     "table": (i + 1) % cfg.tables,
                                     "pin_time_us": 10.0 * f if device and v.rung.pins else np.nan,
                                     "consumer_time_us": base + 0.01 * i if device else np.nan,
                                     "consumer_artifact_time_us": np.nan if device else base + 5.0,
                                     "call_wall_time_us": np.nan if device else base + 20.0})
    samples = pd.DataFrame(rows)
    cells = pd.concat([summarize_cell(g, consumer_bytes_per_call(cfg))
                       for _, g in samples.groupby(["family", "rung", "pin", "profile", "l2_state"], sort=False)],
                      ignore_index=True)
    return {"samples": samples, "cells": cells, "facts": {"variants": {"/".join(v.key): {} for v in opts.variants}},
            "gpu_facts": {"hbm_read_GBps": 4500.0 / f}, "timings": {"measure_s": 0.1}, "log": []}


def fake_probe(check, args):
    w = where_am_i()
    return {"where": w, "gpu": {"name": "Fake GPU", "l2_bytes": 60 << 20, "uuid": w.gpu_uuid},
            "versions": {"l2attr": "test"}, "check": None}


@pytest.fixture(scope="module")
def client():
    with open_cluster(DIST, log=lambda s: None, prefer_cuda=False) as c:
        yield c


def on_workers(client, root: Path, run=None, measure=fake_measure, log=lambda s: None) -> RunDir:
    return ladder_on_workers(CFG, OPTS, run, DIST, root, "many",
                             lambda versions, gpu: ladder_manifest(CFG, OPTS, "l2attr ladder --workers 2", versions, gpu),
                             log=log, measure=measure, probe_fn=fake_probe, client=client)


def _check_cells_name_their_gpu(run: RunDir) -> pd.DataFrame:
    cells = run.read(CELLS)
    cons = cells[(cells.quantity == "consumer") & (cells.timer == "kernel")]
    for r in cons.to_dict("records"):
        base = BASE_US[r["rung"]] * (0.5 if r["family"] == "fast" else 1.0)
        assert r["median_us"] == pytest.approx(base * slow(r["gpu_uuid"]), abs=0.05)   # the GPU that measured it
    return cells


def test_units_and_the_lead_records(client, tmp_path):
    run = on_workers(client, tmp_path)
    cells = _check_cells_name_their_gpu(run)
    units = run.read(UNITS)
    assert sorted(units["unit"]) == sorted(k for k, _ in unit_options(OPTS))      # 3 families x 2 profiles
    assert set(units["gpu_uuid"]) == set(SLOTS)
    ref = cells[cells.family == "reference"]
    assert set(ref["profile"]) == {"reuse_high", "random"} and len(ref.drop_duplicates(
        ["rung", "profile", "quantity", "timer"])) == len(ref)                      # the torch cells once
    samples = run.read(SAMPLES)
    n_cells = len(cells[(cells.quantity == "consumer") & (cells.timer == "kernel")])
    assert len(samples) == n_cells * len(repeat_plan(OPTS)) * samples_per_repeat(CFG)   # every repeat, once
    m = run.manifest()
    assert m["gpu"]["count"] == 2 and "uuid" not in m["gpu"] and set(m["gpus"]) == set(SLOTS)
    assert {g["hbm_read_GBps"] for g in m["gpus"].values()} == {4500.0, 4500.0 / 1.1}
    study = load_runs([run.path])                # integrity: every declared cell, every sample counted
    assert not study.cells.empty


def test_no_ratio_across_two_gpus_unless_asked(client, tmp_path):
    run = on_workers(client, tmp_path)
    cells = run.read(CELLS)
    # put the fast family on the other GPU than the tuned one for reuse_high (the unit's record)
    pick = (cells.profile == "reuse_high") & (cells.family == "fast")
    tuned = cells[(cells.profile == "reuse_high") & (cells.family == "tuned")]["gpu_uuid"].iloc[0]
    other = SLOTS[1 - SLOTS.index(tuned)]
    cells.loc[pick, "gpu_uuid"] = other
    run.write(CELLS, cells)
    units = run.read(UNITS)             # the unit's own record says the same GPU (units.csv's contract)
    units.loc[units["unit"].astype(str).str.endswith(":fast:reuse_high"), "gpu_uuid"] = other
    run.write(UNITS, units)
    fam = analyse(load_runs([run.path])).families.set_index(["profile", "family"])
    assert np.isnan(fam.loc[("reuse_high", "fast"), "vs_tuned"])
    assert "two GPUs" in fam.loc[("reuse_high", "fast"), "missing"]["vs_tuned"]
    asked = analyse(load_runs([run.path], allow_mixed=True)).families.set_index(["profile", "family"])
    assert asked.loc[("reuse_high", "fast"), "vs_tuned"] > 0
    cells.loc[pick, "gpu_uuid"] = tuned            # the same GPU: the ratio is formed
    run.write(CELLS, cells)
    units.loc[units["unit"].astype(str).str.endswith(":fast:reuse_high"), "gpu_uuid"] = tuned
    run.write(UNITS, units)
    same = analyse(load_runs([run.path])).families.set_index(["profile", "family"])
    assert same.loc[("reuse_high", "fast"), "vs_tuned"] > 0


def test_killed_worker_then_missing_unit_then_resume(client, tmp_path):
    from functools import partial

    run = on_workers(client, tmp_path / "once", measure=partial(fake_measure, marker=str(tmp_path / "m1")))
    assert (tmp_path / "m1").exists() and len(run.read(UNITS)) == len(unit_options(OPTS))
    _check_cells_name_their_gpu(run)
    client.wait_for_workers(1, timeout=300)
    with pytest.raises(UserError, match=r"1 units missing.*ladder:tuned:random"):
        on_workers(client, tmp_path / "always", measure=partial(fake_measure, marker=str(tmp_path / "m2"), always=True))
    (path,) = (tmp_path / "always").iterdir()
    cut = RunDir(path)
    assert not ((cut.read(SAMPLES).family == "tuned") & (cut.read(SAMPLES).profile == "random")).any()
    with pytest.raises(UserError, match="cells manifest.json declares are missing"):
        load_runs([path])                          # said, never read as whole
    client.wait_for_workers(1, timeout=300)
    said: list[str] = []
    on_workers(client, tmp_path, run=cut, log=said.append)
    assert any(f"{len(unit_options(OPTS)) - 1} finished unit(s) kept" in s for s in said)
    _check_cells_name_their_gpu(cut)
    load_runs([path])


def test_a_part_measured_unit_is_measured_again_whole(client, tmp_path):
    run = on_workers(client, tmp_path)
    s = run.read(SAMPLES)
    last = (s.family == "artifact") & (s.profile == "random") & (s.repeat == s.repeat.max())
    run.write(SAMPLES, s[~last].reset_index(drop=True))          # a run cut before its last repeat
    said: list[str] = []
    on_workers(client, tmp_path, run=run, log=said.append)
    assert any("1 unit(s) were part-measured (ladder:artifact:random)" in x for x in said)
    again = run.read(SAMPLES)
    assert len(again) == len(s)
    assert not again.duplicated(["family", "rung", "pin", "profile", "l2_state", "repeat", "batch", "table"]).any()
    _check_cells_name_their_gpu(run)
