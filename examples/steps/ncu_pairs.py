"""Steps for the Nsight Compute second reader (l2attr/steps/ncu.py): factories that build a
step and its arguments, so that the ncu child and the test's own `l2attr.step` run the same step.

    python -m l2attr.steps.ncu child examples/steps/ncu_pairs.py:selfcheck 7
"""

from __future__ import annotations


def selfcheck():
    import torch

    from selfcheck import make

    return make(torch.cuda.get_device_properties(0).L2_cache_size // 4), ()


def bert():
    from shipped import steps

    fn, args, _ = steps(["bert-layer-fastpath"])["bert-layer-fastpath"]
    return fn, args
