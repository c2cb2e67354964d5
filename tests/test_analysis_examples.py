"""The whole analysis on the committed H200 run dirs under examples/ (skipped until they exist).

Every check recomputes a number straight from the CSVs with plain pandas and compares it with
what the analysis reports, so a wrong join or a wrong basis fails here, on real data.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pandas as pd
import pytest

from l2attr.study import analyse, load_runs
from l2attr.analysis.series import Series, series_frame
from l2attr.report.html import render_html
from l2attr.report.markdown import render_markdown

# L2ATTR_EXAMPLES_DIR points the checks at other run dirs (e.g. fresh ones from the device).
EXAMPLES = Path(os.environ.get("L2ATTR_EXAMPLES_DIR") or Path(__file__).resolve().parents[1] / "examples")


def example_runs() -> list[Path]:
    if not EXAMPLES.is_dir():
        return []
    return sorted(p.parent for p in EXAMPLES.rglob("manifest.json"))


def config_groups() -> list[list[Path]]:
    """Example run dirs grouped by workload config (only same-config runs are combined)."""
    groups: dict[str, list[Path]] = {}
    for run in example_runs():
        manifest = json.loads((run / "manifest.json").read_text())
        if manifest.get("kind") in ("ladder", "profile") and isinstance(manifest.get("config"), dict):
            groups.setdefault(json.dumps(manifest["config"], sort_keys=True), []).append(run)
    return list(groups.values())


GROUPS = config_groups()
pytestmark = pytest.mark.skipif(not GROUPS, reason=f"no example run dir with a manifest under {EXAMPLES}")


def _ids() -> list[str]:
    return ["+".join(p.name for p in g) for g in GROUPS]


@pytest.fixture(params=GROUPS, ids=_ids(), scope="module")
def analysis(request: pytest.FixtureRequest):
    return analyse(load_runs(request.param))


def _median(cells: pd.DataFrame, state: str, profile: str, rung: str, quantity: str,
            timer: str | None = None) -> float:
    timer = timer or ("wall" if quantity == "call" else "kernel")
    hit = cells[(cells["l2_state"] == state) & (cells["profile"] == profile) & (cells["rung"] == rung)
                & (cells["quantity"] == quantity) & (cells["timer"] == timer)]
    return float(hit["median_us"].iloc[0]) if len(hit) else math.nan


def test_speedups_recomputed_from_cells_csv(analysis) -> None:
    cells = analysis.study.cells
    if cells.empty:
        pytest.skip("no ladder run in this group")
    checked = 0
    for rec in analysis.ladder.to_dict("records"):
        s, p, r = rec["l2_state"], rec["profile"], rec["rung"]
        cells = series_frame(analysis.study.cells, Series(rec["family"], rec["pin"]))
        base = _median(cells, s, p, "baseline", "consumer")
        cons = _median(cells, s, p, r, "consumer")
        if not (math.isnan(base) or math.isnan(cons)):
            assert rec["speedup_consumer"] == pytest.approx(base / cons, rel=1e-12)
            checked += 1
        kernels = _median(cells, s, p, r, "kernels")
        if math.isnan(kernels):
            kernels = cons + (_median(cells, s, p, r, "pin") if rec["pins"] else 0.0)
        base_k = _median(cells, s, p, "baseline", "kernels")
        base_k = base if math.isnan(base_k) else base_k
        if not (math.isnan(base_k) or math.isnan(kernels)):
            assert rec["speedup_kernels"] == pytest.approx(base_k / kernels, rel=1e-12)
        wall, base_w = _median(cells, s, p, r, "call"), _median(cells, s, p, "baseline", "call")
        if not (math.isnan(wall) or math.isnan(base_w)):
            assert rec["speedup_wall"] == pytest.approx(base_w / wall, rel=1e-12)
        art, base_a = _median(cells, s, p, r, "consumer", "artifact"), _median(cells, s, p, "baseline", "consumer", "artifact")
        if not (math.isnan(art) or math.isnan(base_a)):
            assert rec["speedup_artifact"] == pytest.approx(base_a / art, rel=1e-12)
    assert checked > 0


def test_layer_b_medians_recomputed_from_metrics_csv(analysis) -> None:
    """DRAM bytes per call: summed over the call's kernels with plain pandas, then the median."""
    metrics = analysis.study.metrics
    if metrics.empty:
        pytest.skip("no profile run in this group")
    dram = metrics[metrics["metric"] == "dram__bytes_read.sum"]
    if dram.empty:
        pytest.skip("dram__bytes_read.sum not collected")
    keys = ["run", "condition", "role", "family", "rung", "pin", "profile", "table", "batch"]
    per_call = dram.groupby(keys, dropna=False)["value"].sum().reset_index()
    checked = 0
    for rec in analysis.l2.to_dict("records"):
        rows = per_call[(per_call["condition"] == rec["condition"]) & (per_call["role"] == rec["role"])
                        & (per_call["rung"] == rec["rung"]) & (per_call["profile"] == rec["profile"])
                        & (per_call["family"] == rec["family"])
                        & per_call["pin"].isin([rec["pin"], "none", ""])]
        if rows.empty or math.isnan(rec["dram_read"]):
            continue
        assert rec["dram_read"] == pytest.approx(float(rows["value"].median()))
        checked += 1
    assert checked > 0


def test_reports_render(analysis) -> None:
    html = render_html(analysis, plotly_js="")
    profiles = set(analysis.ladder["profile"]) if not analysis.ladder.empty else set(analysis.l2["profile"])
    for profile in profiles:
        assert profile in html
    md = render_markdown(analysis)
    assert "**Verdict — " in md
