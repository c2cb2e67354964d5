"""Steps for the Nsight Compute second reader (l2attr/steps/measure/ncu.py): factories that build a
step and its arguments, so that the ncu child and the test's own `l2attr.step` run the same step.

    python -m l2attr.steps.measure.ncu child examples/steps/ncu_pairs.py:selfcheck 7
"""

from __future__ import annotations


def selfcheck():
    import torch

    from selfcheck import make

    return make(torch.cuda.get_device_properties(0).L2_cache_size // 4), ()


def bert():
    """The shipped BERT layer's fast path, which torch takes only without autograd: the step sets
    inference mode itself, so the ncu child (which captures in the step's own grad mode) and the
    test's `l2attr.step` capture the same kernels."""
    import torch

    from shipped import steps

    fn, args, _ = steps(["bert-layer-fastpath"])["bert-layer-fastpath"]

    def step(*a):
        with torch.inference_mode():
            return fn(*a)
    return step, args


def writeback():
    """A step whose second kernel inherits write-back: the first writes half an L2 (dirty lines), the
    second reads a buffer of one L2 it never shares, evicting them. (The matched arm's GPU test.)"""
    import torch

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    out = torch.empty(l2 // 8, device="cuda")
    src = torch.randn(l2 // 4, device="cuda")
    sink = torch.empty((), device="cuda")

    def step(out, src, sink):
        out.fill_(1.0)                              # writes L2 / 2 of dirty lines
        torch.sum(src, dim=0, out=sink)             # reads L2: evicts them, pays their write-back
    return step, (out, src, sink)


def split():
    """A step whose split is known by construction: the first kernel reads only what was there before
    the step (a quarter-L2 weight) and writes an activation; the second reads only that activation."""
    import torch

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    w = torch.randn(l2 // 16, device="cuda")
    act = torch.empty_like(w)
    sink = torch.empty((), device="cuda")

    def step(w, act, sink):
        torch.mul(w, 2.0, out=act)                  # reads the weight (before the step), writes the activation
        torch.sum(act, dim=0, out=sink)             # reads the activation (within the step)
    return step, (w, act, sink)
