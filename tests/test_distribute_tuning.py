"""benchmarks/tune_fast.py --workers on a real LocalCluster with fake GPUs: the grid in chunks,
each with its own tuned reference, the table rewritten as chunks arrive with the GPU of each row,
the choice made from same-GPU ratios, `--resume` measuring only the chunks not in the table.
Skips without Dask."""

from __future__ import annotations

import argparse
import importlib.util
import sys

import pandas as pd
import pytest

pytest.importorskip("distributed")

from conftest import REPO  # noqa: E402

from l2attr.ladders.tuning.table import choose  # noqa: E402
from l2attr.distribute.cluster import open_cluster  # noqa: E402
from l2attr.distribute.options import Distribute  # noqa: E402
from l2attr.distribute.where import where_am_i  # noqa: E402

SLOTS = ("GPU-fake-0", "GPU-fake-1")
DIST = Distribute(workers=2, slots=SLOTS)
PROFILES = ["random", "reuse_medium"]


def fake_chunk(pts, profiles, batches, repeats, cache_dir):
    """A chunk on a fake GPU: GPU 1 runs everything 20 % slower, the tuned reference too."""
    f = 1.0 + 0.2 * SLOTS.index(where_am_i().gpu_uuid)
    rows = [{"profile": prof, "warps_per_bag": p[0], "bags_per_block": p[1], "unroll": p[2], "load": p[3],
             "maxrregcount": p[4], "median_us": (10.0 + p[0] + 0.1 * p[2]) * f, "spread_pct": 0.5,
             "tuned_optmt_us": 20.0 * f, "vs_tuned": (10.0 + p[0] + 0.1 * p[2]) / 20.0, "check_error": 0.0}
            for prof in profiles for p in pts]
    return {"rows": rows, "log": [f"chunk of {len(pts)} points"]}


@pytest.fixture(scope="module")
def tune():
    import cloudpickle

    spec = importlib.util.spec_from_file_location("tune_fast_under_test", REPO / "benchmarks" / "tune_fast.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    cloudpickle.register_pickle_by_value(mod)
    yield mod
    del sys.modules[spec.name]


def test_chunks_on_two_gpus_and_resume(tune, tmp_path, monkeypatch):
    monkeypatch.setattr(tune, "measure_chunk", fake_chunk)
    pts = tune.points()[:12]
    args = argparse.Namespace(out=tmp_path, chunk=4, resume=False, batches=1, repeats=1)
    with open_cluster(DIST, log=lambda s: None, prefer_cuda=False) as c:
        tune.on_workers(args, DIST, pts, PROFILES, client=c)
        table = pd.read_csv(tmp_path / "fast_tuning.csv")
        assert len(table) == len(pts) * len(PROFILES) and set(table["gpu_uuid"]) <= set(SLOTS)
        assert table["gpu_uuid"].nunique() == 2
        # the choice: the smallest same-GPU ratio (warps 1, unroll 4), wherever it ran
        assert choose(table)["warps_per_bag"] == 1 and choose(table)["unroll"] == 4
        last = pts[8:]
        cut = table[~table[["warps_per_bag", "bags_per_block", "unroll", "load", "maxrregcount"]]
                    .apply(tuple, axis=1).isin(last)]
        cut.to_csv(tmp_path / "fast_tuning.csv", index=False)              # the run stopped before chunk 3
        said = []
        monkeypatch.setattr("builtins.print", lambda *a, **k: said.append(" ".join(map(str, a))))
        tune.on_workers(argparse.Namespace(**{**vars(args), "resume": True}), DIST, pts, PROFILES, client=c)
    assert "tune_fast: resume: 2 chunks kept, 1 to measure" in said
    again = pd.read_csv(tmp_path / "fast_tuning.csv")
    assert len(again) == len(table)
    assert not again.duplicated(["profile", "warps_per_bag", "bags_per_block", "unroll", "load", "maxrregcount"]).any()
