"""The step's answer on the GPU: the write-back-matched arm held to its Nsight Compute reading and to
its bracket, the split by what was reused on a step whose answer is known by construction, a step
that changes between calls refused with one line, and a step's own keywords kept apart from l2attr's."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_gpu_step_surgery import PAIRS, ROOT, gpu  # noqa: F401  (the fixture: torch, cupy, bindings, a GPU)

pytestmark = pytest.mark.gpu


def test_matched_arm_holds_its_ncu_reading_and_its_bracket(gpu, tmp_path):
    if shutil.which("ncu") is None:
        pytest.skip("ncu not on PATH")
    import l2attr
    from l2attr.steps.measure.flushes import grain
    from l2attr.steps.measure.ncu import load_factory

    d = l2attr.write_back(f"{PAIRS}:writeback", out=tmp_path / "ncu", replays=3, log=lambda s: None)
    fn, args = load_factory(f"{PAIRS}:writeback")()
    ans = l2attr.step(fn, *args, name="matched", repeats=12, out=tmp_path, edges=0, write_back=d, log=lambda s: None)
    wb = __import__("pandas").read_csv(ans.run_dir / "step_write_back.csv")
    want = (d["write_none_b"] - d["write_all_b"]).clip(lower=0).tolist()
    assert wb["bytes"].tolist() == pytest.approx(want)           # the arm writes what ncu read, per node
    l2 = gpu.cuda.get_device_properties(0).L2_cache_size
    assert wb["matched_bytes"].tolist() == [grain(x, l2) for x in want]
    assert wb["matched_bytes"].iloc[1] > 8 << 20, "the reader must inherit the writer's dirty lines"
    assert not ans.kernels["out_of_bracket"].any(), ans.kernels.to_string()
    m, c, dd = ans.matched.saving, ans.saving_ci, ans.pairs["saving_dirty_us"].median()
    assert c[0] - 0.5 <= m.median <= dd + 0.5, (c, m, dd)       # inside the clean/dirty bracket
    assert ans.eager is not None and ans.headline().count("the eager step") >= 1


def test_split_is_known_by_construction(gpu, tmp_path):
    import l2attr
    from l2attr.steps.measure.ncu import load_factory

    fn, args = load_factory(f"{PAIRS}:split")()
    ans = l2attr.step(fn, *args, name="split", repeats=16, out=tmp_path, edges=0, write_back={0: 0, 1: 0},
                      log=lambda s: None)
    k = ans.kernels.sort_values("node").reset_index(drop=True)
    first, second = k.iloc[0], k.iloc[1]
    # the first kernel's saving is all from before the step: the start flush takes all of it
    assert first["saving_cold_start_us"] > 0.75 * first["saving_cold_matched_us"] > 0, k.to_string()
    # the second's is all from within the step: the start flush takes none of it
    assert abs(second["saving_cold_start_us"]) < 0.25 * second["saving_cold_matched_us"], k.to_string()
    p = ans.parts
    assert p.before.lo > 0 and p.within.lo > 0
    assert p.within.median == pytest.approx(second["saving_cold_matched_us"], abs=0.3 + 0.25 * p.within.median)


def test_a_step_that_grows_is_refused_with_one_line_and_no_cuda_error(gpu, tmp_path):
    pytest.importorskip("transformers")
    code = f"""
import torch, transformers as tf, l2attr
cfg = tf.LlamaConfig(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=8,
                     num_key_value_heads=2, vocab_size=1000)
cfg._attn_implementation = "sdpa"
with torch.device("cuda"):
    m = tf.LlamaForCausalLM(cfg).eval()
try:
    cache = tf.DynamicCache(config=cfg)
except TypeError:          # a transformers whose DynamicCache takes no config
    cache = tf.DynamicCache()
ids = torch.zeros(2, 1, dtype=torch.long, device="cuda")
def decode(ids):
    with torch.inference_mode():
        return m(input_ids=ids, past_key_values=cache, use_cache=True).logits
l2attr.step(decode, ids, name="dynamic", repeats=2, out={str(tmp_path)!r}, edges=0, log=lambda s: None)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    err = [x for x in r.stderr.strip().splitlines() if x.startswith("l2attr: error:")]
    assert r.returncode != 0 and err, r.stderr[-2000:]
    print(err[0])                     # which difference refused it: shown by the device scripts (-rP)
    assert "changes between calls" in err[0] and "StaticCache" in err[0], err[0]
    assert "Traceback" not in r.stderr and "illegal memory access" not in r.stderr, r.stderr[-2000:]


def test_a_step_that_takes_name_and_out_is_measured(gpu, tmp_path):
    import l2attr

    x = gpu.randn(1 << 20, device="cuda")
    buf = gpu.empty_like(x)

    def step(x, name, out):
        assert name == "mine"
        gpu.mul(x, 2.0, out=out)
        return out.sum()

    ans = l2attr.step(step, x, kwargs={"name": "mine", "out": buf}, name="kw", repeats=4, out=tmp_path, edges=0,
                      log=lambda s: None)
    assert ans.name == "kw" and ans.run_dir.parent == tmp_path and len(ans.kernels) >= 2
