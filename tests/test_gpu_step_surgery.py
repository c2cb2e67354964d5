"""Graph surgery on the GPU: the self-check's signs, the second reader (Nsight Compute, cache
control all against none) agreeing with the surgery's per-kernel deltas, and bad steps refused.

With L2ATTR_FIXTURE_DIR set, the comparison tables are written there (tests/fixtures/steps/)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "examples" / "steps" / "ncu_pairs.py"
SLACK_US = 0.25         # both readers' clock resolution and per-launch jitter, added to each interval


@pytest.fixture(scope="module")
def gpu(cuda_torch):
    sys.path.insert(0, str(ROOT / "examples" / "steps"))
    return cuda_torch


def _step(gpu, factory: str, tmp_path: Path):
    import l2attr
    from l2attr.steps.measure.ncu import load_factory

    fn, args = load_factory(f"{PAIRS}:{factory}")()
    with gpu.inference_mode():
        return l2attr.step(fn, *args, name=f"surgery-{factory}", repeats=12, out=tmp_path, edges=0, log=lambda s: None)


def test_selfcheck_signs(gpu, tmp_path):
    ans = _step(gpu, "selfcheck", tmp_path)
    k = ans.kernels.sort_values("node")
    assert len(k) == 2 and bool(k["met_flush"].all())
    consumer = k.iloc[1]
    assert consumer["cold_lo"] > consumer["natural_hi"], "the quarter-L2 consumer must be faster warm"
    assert ans.judgement == "faster"


@pytest.mark.parametrize("factory", ["selfcheck", "bert"])
def test_ncu_reader_agrees_with_surgery(gpu, tmp_path, factory):
    if shutil.which("ncu") is None:
        pytest.skip("ncu not on PATH")
    from l2attr.steps.measure.ncu import deltas, profile_graph

    ans = _step(gpu, factory, tmp_path)
    k = ans.kernels.sort_values("node").reset_index(drop=True)
    d = deltas(profile_graph(f"{PAIRS}:{factory}", tmp_path / "ncu", replays=7, log=lambda s: None))
    assert list(d["node"]) == list(k["node"]), "ncu profiled other kernels than the graph's"
    both = k.merge(d, on="node", suffixes=("", "_ncu"))
    both["surgery_delta_us"] = both["cold_us"] - both["natural_us"]
    both["surgery_lo"] = both["cold_lo"] - both["natural_hi"]
    both["surgery_hi"] = both["cold_hi"] - both["natural_lo"]
    both["agree"] = ((both["surgery_lo"] - SLACK_US <= both["delta_hi"] + SLACK_US)
                     & (both["delta_lo"] - SLACK_US <= both["surgery_hi"] + SLACK_US))
    out = os.environ.get("L2ATTR_FIXTURE_DIR")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        both.drop(columns=[c for c in both.columns if c.startswith("kernel_")], errors="ignore").to_csv(
            Path(out) / f"ncu_vs_surgery_{factory}.csv", index=False)
    bad = both[~both["agree"]]
    assert bad.empty, f"ncu and surgery disagree on {len(bad)} kernels:\n{bad[['node', 'surgery_delta_us', 'surgery_lo', 'surgery_hi', 'delta_us', 'delta_lo', 'delta_hi']]}"


def test_bad_steps_are_one_line(gpu, tmp_path):
    import l2attr
    from l2attr.errors import UserError

    x = gpu.randn(1 << 20, device="cuda")
    calls = {"n": 0}

    def changes():
        calls["n"] += 1
        return x * 2 if calls["n"] % 2 else (x * 2).sum()

    with pytest.raises(UserError, match="changes between calls"):
        l2attr.step(changes, repeats=2, out=tmp_path, edges=0, log=lambda s: None)

    def counts():                 # a Python counter baked into the launch: x + 1.0, x + 2.0, x + 3.0
        calls["n"] += 1
        return x + calls["n"]

    with pytest.raises(UserError, match="moves by one step per call"):
        l2attr.step(counts, repeats=2, out=tmp_path, edges=0, log=lambda s: None)
    with pytest.raises(UserError, match="cpu tensor"):
        l2attr.step(lambda t: t * 2, gpu.randn(4), repeats=2, out=tmp_path, edges=0, log=lambda s: None)


def _host_node_graph(gpu):
    """A user's own graph (keep_graph=True) with a host callback node added after capture."""
    import ctypes

    from cuda.bindings import runtime as rt

    x = gpu.randn(1 << 20, device="cuda")
    g = gpu.cuda.CUDAGraph(keep_graph=True)
    side = gpu.cuda.Stream()
    side.wait_stream(gpu.cuda.current_stream())
    with gpu.cuda.stream(side):
        (x * 2).sum()
    gpu.cuda.current_stream().wait_stream(side)
    with gpu.cuda.graph(g):
        (x * 2).sum()
    callback = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda _: None)
    params = rt.cudaHostNodeParams()
    params.fn = rt.cudaHostFn_t(init_value=ctypes.cast(callback, ctypes.c_void_p).value)
    err, _ = rt.cudaGraphAddHostNode(rt.cudaGraph_t(init_value=int(g.raw_cuda_graph())), None, 0, params)
    assert err == rt.cudaError_t.cudaSuccess, f"cudaGraphAddHostNode: {err}"
    return g, callback, x


def test_a_graph_with_a_host_node_is_one_line(gpu, tmp_path):
    import l2attr
    from l2attr.errors import UserError

    g, _keep, _x = _host_node_graph(gpu)
    with pytest.raises(UserError, match="holds Host node"):
        l2attr.step(g, repeats=2, out=tmp_path, edges=0, log=lambda s: None)


def test_kernel_level_edges_from_pointer_arguments(gpu, tmp_path):
    """A 16 MB producer -> reduction consumer, an unrelated small kernel between them: the pointer
    arguments join node 0 to node 2 over the 16 MB block, and the consumer is faster with it resident."""
    import l2attr
    from l2attr.schema import KERNEL_EDGES

    x = gpu.randn(4 << 20, device="cuda")
    y = gpu.randn(1 << 10, device="cuda")

    def step():
        a = x * 2
        b = y + 1
        return a.sum(), b.sum()

    with gpu.inference_mode():
        ans = l2attr.step(step, name="kernel-edges", repeats=12, out=tmp_path, edges=3, log=print)
    assert ans.manifest.get(KERNEL_EDGES) is True, ans.manifest.get("kernel_edges_error")
    e = ans.measured_edges
    top = e[(e["producer"] == 0) & (e["consumer"] == 2)]
    assert len(top) == 1, e[["producer", "consumer", "bytes"]].to_string()
    r = top.iloc[0]
    assert r["bytes"] >= 16 << 20
    assert r["control"] == "holds", r.to_dict()
    assert r["judgement"] == "faster", r.to_dict()


@pytest.mark.parametrize("name", ["llama-compiled-decode-b8-kv4k", "llama-compiled-prefill-512"])
def test_the_compiled_decoder_graph_is_the_program_it_runs(gpu, tmp_path, name):
    """The natural replay's kernels against the compiled function called on its own: the same
    kernel count, and their time within 2 % (steps/check/program.py); Triton's kernels present."""
    import l2attr
    from l2attr.steps.check.program import PROGRAM_TOLERANCE, program_check
    from shipped import steps

    fn, args, _ = steps([name])[name]
    with gpu.inference_mode():
        ans = l2attr.step(fn, *args, name=name, repeats=12, out=tmp_path, edges=0, log=lambda s: None)
    assert ans.kernels["kernel"].str.startswith("triton_").any()
    check = program_check(ans.manifest, ans.kernels)
    assert check is not None, "the run traced no call of the function on its own"
    assert check.graph_kernels == check.call_kernels
    assert abs(check.ratio) <= PROGRAM_TOLERANCE, f"natural {check.natural_kernel_us:.1f} µs, call {check.call_kernel_us:.1f} µs"


def test_a_failed_capture_leaves_torch_random_ops_working(gpu, tmp_path):
    """A step that syncs the host inside capture falls back to the per-op method; torch's random ops
    work after it (a failed capture left the CUDA generator expecting a graph, and the next
    torch.randn anywhere in the process raised "Offset increment outside graph capture")."""
    import l2attr

    x = gpu.randn(1 << 20, device="cuda")

    def syncs():
        return (x * 2).sum().item()

    ans = l2attr.step(syncs, name="syncs", repeats=2, out=tmp_path, edges=0, log=lambda s: None)
    assert "could not be captured" in ans.headline("syncs")
    assert gpu.randn(4, device="cuda").isfinite().all()
