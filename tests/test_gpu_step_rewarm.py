"""The rewarmed arms on the GPU: the flush's non-data cost per kernel node, on steps whose answer is
known by construction, and the headroom on a real step (issue 50).

- No data to reuse: 48 sums over disjoint 4 MiB slices (192 MiB a step, four L2s), so no kernel finds
  what an earlier one (of this step or the last) read. Every microsecond the matched arm adds is the
  flush's non-data cost, so the activations (within minus non-data, paired by repeat) must hold 0.
- Reuse by construction: a kernel writes 8 MiB and the next reads it back; the activations are a
  saving beyond noise, and the headroom (natural minus every input resident) is >= 0 within its interval.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def torch(cuda_torch):
    return cuda_torch


def _answer(fn, args, name, tmp_path, repeats=16):
    import l2attr

    return l2attr.step(fn, *args, name=name, repeats=repeats, out=tmp_path, edges=0, log=lambda s: None,
                       write_back=0)        # these steps leave no dirty lines worth matching


def test_no_data_to_reuse_reads_as_no_activations(torch, tmp_path):
    from l2attr.analysis.step_split import REWARM_METHOD

    n, k = (4 << 20) // 4, 48
    buf = torch.ones(k * n, device="cuda")
    outs = torch.empty(k, device="cuda")

    def step(buf, outs):
        for i in range(k):
            torch.sum(buf[i * n:(i + 1) * n], dim=0, out=outs[i])

    ans = _answer(step, (buf, outs), "no-reuse", tmp_path)
    sp = ans.parts
    assert sp is not None and sp.method == REWARM_METHOD and sp.unread == 0
    assert sp.nondata.median > 0, "a flush costs a short kernel something besides its data"
    assert sp.activations.lo <= 0 <= sp.activations.hi, (sp.activations, sp.within, sp.nondata)
    # the constant control times K is the other estimate of the same cost: both bracket the saving
    assert abs(sp.activations.median) < 0.25 * sp.within.median + 1.0


def test_reuse_by_construction_and_headroom(torch, tmp_path):
    x = torch.ones((8 << 20) // 4, device="cuda")
    y, s = torch.empty_like(x), torch.empty((), device="cuda")

    def step(x, y, s):
        torch.mul(x, 2.0, out=y)          # writes 8 MiB
        torch.sum(y, dim=0, out=s)        # reads it right after

    ans = _answer(step, (x, y, s), "reuse", tmp_path)
    sp = ans.parts
    assert sp is not None and sp.activations.lo > 0, (sp.activations, sp.within, sp.nondata)
    assert sp.headroom is not None and sp.headroom.hi >= 0, sp.headroom


def test_headroom_on_the_readme_mlp(torch, tmp_path):
    x = torch.randn(32, 4096, device="cuda", dtype=torch.bfloat16)
    w1, w2 = (torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) for _ in range(2))

    def mlp(x):
        return torch.nn.functional.gelu(x @ w1) @ w2

    ans = _answer(mlp, (x,), "mlp", tmp_path)
    assert ans.parts is not None and ans.parts.headroom is not None
    assert ans.parts.headroom.hi >= 0, ans.parts.headroom
