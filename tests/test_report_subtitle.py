"""A page names the workload its own runs measured: the DLRM EmbeddingBag line only where the
run's config is an EmbeddingBag workload (the ladder, its sweeps), never on an experiment's or a
step's page (issue 26: the subtitle was the study's on every page)."""

from __future__ import annotations

from pathlib import Path

import pytest

from l2attr.cli import main
from l2attr.report.titles import workload_line

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "examples" / "experiments" / "20261201T163508Z-kv-pin-sdpa"
STEP = ROOT / "examples" / "steps" / "runs" / "20261201T170613Z-selfcheck-quarter-l2-marked"
STUDY = "DLRM EmbeddingBag"


def test_workload_line_by_hand() -> None:
    c = {"tables": 2, "rows": 1000, "dim": 64, "dtype": "fp16", "batch_size": 8, "pooling": 3, "hot_rows": 10}
    assert workload_line(c) == (f"{STUDY} · 2 tables × 1,000 rows × 64 fp16 · batch 8 · pooling 3 · "
                                "10 hot rows pinned")
    assert workload_line(c, hot=False).endswith("pooling 3")
    assert STUDY not in workload_line({"name": "my-pair"}) and "my-pair" in workload_line({"name": "my-pair"})


@pytest.mark.parametrize("run", [EXPERIMENT, STEP], ids=["experiment", "step"])
def test_experiment_and_step_pages_do_not_say_the_study(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    assert main(["report", str(run), "-o", str(out)]) == 0
    assert STUDY not in out.read_text()
