"""An empty chart is never drawn (issue 20): the spec check on specs whose answer is known, and on
the committed examples/report.html.xz (where two fast-family charts were drawn with every y null)."""

from __future__ import annotations

import lzma
import json
import re

import numpy as np
import plotly.graph_objects as go
import pytest

from l2attr.report.html import drawable, has_data
from l2attr.report.charts import figure_json
from tests.conftest import EXAMPLES


def spec(*traces: go.BaseTraceType) -> dict:
    return figure_json(go.Figure(list(traces)))


@pytest.mark.parametrize("figure, drawn", [
    (spec(go.Bar(x=["a", "b"], y=[None, None])), False),
    (spec(go.Bar(x=["a", "b"], y=np.array([np.nan, np.nan]))), False),      # plotly's typed array
    (spec(go.Bar(x=["a", "b"], y=[None, None]), go.Bar(x=["a"], y=[1.5])), True),
    (spec(go.Bar(x=["a", "b"], y=np.array([np.nan, 2.0]))), True),
    (spec(go.Heatmap(z=[[None, None], [None, None]])), False),
    (spec(go.Heatmap(z=np.array([[np.nan, 3.0], [np.nan, np.nan]]))), True),
    (spec(go.Bar(y=["a", "b"], x=[4.0, None], orientation="h")), True),
    (spec(go.Scatter(x=[1, 2], y=[np.inf, None])), False),
    ({"data": [], "layout": {}}, False),
])
def test_has_data(figure: dict, drawn: bool) -> None:
    assert has_data(figure) is drawn
    assert (list(drawable({"f": figure})) == ["f"]) is drawn


def test_the_committed_report_draws_no_empty_chart() -> None:
    html = lzma.decompress((EXAMPLES / "report.html.xz").read_bytes()).decode("utf-8")
    m = re.search(r'<script type="application/json" id="l2attr-figures">(.*?)</script>', html, re.S)
    assert m
    specs = json.loads(m.group(1))
    assert specs and [fid for fid, s in specs.items() if not has_data(s)] == []
    for fid in specs:                     # every drawn spec has its slot, every slot its spec
        assert f'id="{fid}"' in html
