"""Hot sets of any size come from one ranking whose prefix is the ladder's hot set."""

from __future__ import annotations

import numpy as np
import pytest

from l2attr.dlrm.config import WorkloadConfig
from l2attr.sweep.measure.device import hot_ranking
from l2attr.dlrm.workload import build_workload


@pytest.mark.parametrize("profile", ["reuse_high", "reuse_low", "random"])
def test_ranking_prefix_is_the_ladders_hot_set(profile):
    cfg = WorkloadConfig(tables=2, rows=20_000, batch_size=64, pooling=10, batches=3, warmup_batches=1,
                         hot_rows=500)
    w = build_workload(cfg, profile=profile)
    ranking = hot_ranking(cfg, profile, w.indices)
    assert np.array_equal(ranking[:cfg.hot_rows], w.hot)
    assert sorted(ranking.tolist()) == list(range(cfg.rows))        # every row once: any size is a prefix
    counts = np.bincount(w.indices.reshape(-1), minlength=cfg.rows)
    if profile == "random":                                          # ranked on the stream itself
        assert (np.diff(counts[ranking]) <= 0).all()
