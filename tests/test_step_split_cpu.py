"""The split of a step's matched saving (steps/analyse/split.py), the stopping rule that adds repeats,
the periodic write-back (steps/measure/ncu.py) and write_back's child error, on data whose answer is
known by hand."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from l2attr.analysis.significance import Interval
from l2attr.steps.analyse.split import CONTROL_METHOD, REWARM_METHOD, decided, node_sums, per_layer, split
from l2attr.errors import UserError
from l2attr.steps.measure.ncu import Layered, at_depth, layer_shape

ROOT = Path(__file__).resolve().parents[1]


def _pairs(n: int = 20, seed: int = 0) -> pd.DataFrame:
    """Per repeat: a start saving of 5, a within-step saving of 10 + noise, of which 4 is non-data
    (rewarmed - warm_inputs, with the same noise: paired), so the activations are 6 in every repeat."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(0, 3.0, n)
    start = np.full(n, 5.0)
    return pd.DataFrame({"step": range(n), "saving_cold_start_us": start,
                         "saving_cold_matched_us": start + 10 + noise,
                         "saving_rewarmed_us": 7 + noise, "saving_warm_inputs_us": 3 - np.zeros(n),
                         "kernel_time_us": np.full(n, 1000.0), "span_us": np.full(n, 1100.0)})


def test_the_activations_are_a_paired_difference_not_the_ends_of_two_intervals():
    p = _pairs()
    sp = split(p, [], flushed=10, unread=0)
    assert sp.method == REWARM_METHOD and sp.unread == 0
    assert sp.activations.median == pytest.approx(6.0) and sp.activations.hi - sp.activations.lo < 1e-9
    ends = Interval(0, sp.within.lo - sp.nondata.hi, sp.within.hi - sp.nondata.lo)     # the old way
    assert ends.hi - ends.lo > 2.0                                                        # much wider
    assert sp.headroom.median == pytest.approx(-3.0)            # natural - warm_inputs = -S(warm_inputs)


def test_the_first_kernel_and_unread_kernels_are_charged_as_said():
    p = _pairs()
    first = np.full(len(p), 0.5)          # node 0's flush: the start arm pays it too
    sp = split(p, [0.25] * len(p), flushed=10, first=first, unread=2)
    nd = p["saving_rewarmed_us"] - p["saving_warm_inputs_us"] - 0.5 + 2 * 0.25
    assert sp.nondata.median == pytest.approx(float(nd.median()))
    assert sp.activations.median == pytest.approx(6.0) and sp.activations.hi - sp.activations.lo < 1e-9
    assert sp.unread == 2


def test_without_rewarmed_arms_the_control_times_the_flushes_paired_by_repeat():
    p = _pairs().drop(columns=["saving_rewarmed_us", "saving_warm_inputs_us"])
    sp = split(p, [1.0] * len(p), flushed=5)
    assert sp.method == CONTROL_METHOD and sp.headroom is None
    assert sp.nondata.median == pytest.approx(4.0)
    assert split(p.drop(columns=["saving_cold_start_us"]), [], 5) is None


def _nodes(act_us: float, repeats: int, nodes: int = 4, seed: int = 1) -> pd.DataFrame:
    """Node-keyed kernels: natural 10 µs a node; matched +2 on each node after the first, start +0,
    warm_inputs -0.5, rewarmed = matched - act/(nodes-1) per node after the first; 0.2 µs of noise a kernel."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(repeats):
        for j in range(nodes):
            later = j > 0
            arms = {"natural": 10, "cold_start": 10, "cold_matched": 10 + 2 * later,
                    "warm_inputs": 9.5, "rewarmed": 9.5 + (2 - act_us / (nodes - 1)) * later}
            rows += [{"condition": c, "step": i, "node": j, "duration_us": v + rng.normal(0, 0.2)}
                     for c, v in arms.items()]
    return pd.DataFrame(rows)


def test_the_stopping_rule_decides_against_the_bound():
    ctx = {"eager_us": [1000.0] * 5, "control_us": [0.1] * 5, "unread": 0}
    k = _nodes(act_us=3.0, repeats=6)                 # 3 µs of 1000: 0.3 %, below 0.65 %
    assert node_sums(k)["saving_cold_matched_us"].median() == pytest.approx(6.0, abs=0.5)
    assert decided(k, ctx, claim=0.0065)
    assert decided(_nodes(act_us=12.0, repeats=6), ctx, claim=0.0065)          # 1.2 %: above
    assert not decided(_nodes(act_us=6.5, repeats=6, seed=3), ctx, claim=0.0065, half_width=1e-6)
    assert decided(_nodes(act_us=6.5, repeats=6, seed=3), ctx, claim=0.0065, half_width=0.01)   # narrow enough
    assert decided(k[k["condition"] != "cold_start"], ctx, claim=0.0065)      # nothing to decide: stop


def test_the_periodic_write_back_maps_layers_as_said():
    one = ["emb", "a", "b", "c", "norm", "head"]
    two = ["emb", "a", "b", "c", "a", "b", "c", "norm", "head"]
    shape = layer_shape(one, two)
    assert isinstance(shape, Layered) and shape.nodes(4) == 15
    d2 = {j: float(j) for j in range(9)}
    d4 = at_depth(d2, shape, 4)          # each deep node takes a two-layer node of its own kind
    assert [two[int(d4[j])] for j in range(15)] == ["emb", *["a", "b", "c"] * 4, "norm", "head"]
    assert sorted(set(d4.values())) == list(range(9)) and at_depth(d2, shape, 2) == d2
    with pytest.raises(UserError, match="not the one-layer step"):
        layer_shape(one, ["emb", "a", "x", "c", "a", "b", "c", "norm", "z"])
    # a per-layer node away from the block (a cache counter reset at the head) repeats too: four layers
    # are four resets, the embedding, four blocks and the head
    fills = layer_shape(["fill", "emb", "a", "head"], ["fill", "fill", "emb", "a", "a", "head"])
    assert fills.nodes(1) == 4 and fills.nodes(4) == 10
    assert list(at_depth({j: float(j) for j in range(6)}, fills, 4).values()) == [0, 0, 0, 1, 2, 3, 4, 4, 4, 5]
    with pytest.raises(UserError, match="covers"):
        at_depth({0: 1.0}, shape, 4)


def test_write_back_shows_its_childs_error_then_one_line_naming_the_verb(tmp_path):
    """A factory that raises in the ncu child: its own error line, then `l2attr: error: write_back: ...`
    (a fake ncu that runs the child command it is given, as ncu would)."""
    (tmp_path / "bin").mkdir()
    ncu = tmp_path / "bin" / "ncu"
    ncu.write_text('#!/bin/sh\nwhile [ "$#" -gt 6 ]; do shift; done\nexec "$@"\n')
    ncu.chmod(0o755)
    smi = tmp_path / "bin" / "nvidia-smi"              # the chip, as an H100's nvidia-smi gives it
    smi.write_text("#!/bin/sh\necho 9.0\n")
    smi.chmod(0o755)
    (tmp_path / "fac.py").write_text("def make():\n    return {}['no such step']\n")
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""
        import l2attr
        l2attr.write_back({str(tmp_path / 'fac.py')!r} + ":make", out={str(tmp_path / 'wb')!r}, replays=1)
    """))
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    got = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert got.returncode != 0
    lines = [x for x in got.stderr.splitlines() if x.strip()]
    child = [i for i, x in enumerate(lines) if "l2attr write_back child: KeyError" in x]
    assert child, got.stderr
    assert lines[-1].startswith("l2attr: error: write_back: the step's child failed"), got.stderr
    assert "Traceback" not in got.stderr


def test_the_per_layer_model_is_the_ratio_of_two_lines():
    """Saving 10 + 5 x layers and eager step 1000 + 100 x layers, measured at 2 and 4 layers with a
    little noise: at 32 layers the share is 170 / 4200, its interval around it; one depth is no model."""
    rng = np.random.default_rng(0)
    at = (lambda d: (d, 10 + 5 * d + rng.normal(0, 0.1, 30), 1000 + 100 * d + rng.normal(0, 1, 30)))  # noqa: E731
    got = per_layer(at(2), at(4), 32)
    assert got.median == pytest.approx(170 / 4200, rel=0.02) and got.lo < got.median < got.hi
    assert got.hi - got.lo < 0.01
    assert np.isnan(per_layer(at(2), at(2), 32).median)
