"""Does a grid step capture the program its eager call runs? A CPU check of examples/steps/hf_grid.py.

    python tools/check_grid_capture.py          # needs torch and transformers (no GPU)

transformers asks `is_cuda_stream_capturing()` before it skips the causal mask, so a step captured
into a CUDA graph can run another attention than its eager call. This builds each kind of grid step
(small: one layer, hidden 256, KV 64, prefill 32) on the CPU, records the arguments of every SDPA
call with the capture flag off and on, first as transformers decides and then with the grid's
`eager_masks_under_capture`, and prints one line per step and case: K's heads, the mask's shape,
`is_causal`, `enable_gqa`. It also calls each step twice and says whether the outputs agree (the
StaticCache's counter set back). Exit 1 when, with the grid's setting, a capture differs from eager.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def grid_module():
    """examples/steps/hf_models.py on the CPU, every model's shape cut small (its family, heads' ratio
    and experts kept: they decide the attention call and the MoE path)."""
    import dataclasses

    spec = importlib.util.spec_from_file_location("hf_models", ROOT / "examples" / "steps" / "hf_models.py")
    grid = importlib.util.module_from_spec(spec)
    sys.modules["hf_models"] = grid           # its dataclasses look their module up by name
    spec.loader.exec_module(grid)
    grid.DEVICE = "cpu"
    for name, s in grid.MODELS.items():
        grid.MODELS[name] = dataclasses.replace(s, hidden=256, ffn=512, heads=8, kv_heads=max(1, 8 * s.kv_heads // s.heads),
                                                vocab=1024, experts=min(s.experts, 4), active=min(s.active, 2))
    return grid


CONFIGS = (("decode", 2, 64), ("prefill", 1, 32))


def main() -> int:
    import torch
    import transformers.utils.import_utils as iu

    grid = grid_module()
    real_flag, real_sdpa = iu.is_cuda_stream_capturing, torch.nn.functional.scaled_dot_product_attention
    seen: list[tuple] = []

    def spy(q, k, v, attn_mask=None, **kw):
        seen.append((k.shape[1], None if attn_mask is None else tuple(attn_mask.shape), kw.get("is_causal"),
                     kw.get("enable_gqa", False)))
        return real_sdpa(q, k, v, attn_mask=attn_mask, **kw)

    torch.nn.functional.scaled_dot_product_attention = spy
    bad = 0
    for model in grid.MODELS:
        m, cfg = grid.build(model, 1, 65)       # build() applies the grid's setting; undone per case below
        m = m.float()
        for phase, b, n in CONFIGS:
            name = f"{model}-{phase}-b{b}-{n}"
            fn, args = grid.step_of(m, cfg, phase, b, n)
            for case in ("as transformers decides", "the grid's setting"):
                got = {}
                for capturing in (False, True):
                    torch.cuda.is_current_stream_capturing = (lambda v=capturing: v)
                    iu.is_cuda_stream_capturing = real_flag
                    if case == "the grid's setting":
                        grid.eager_masks_under_capture()
                    seen.clear()
                    first = fn(*args)
                    got[capturing] = seen[0]
                    same = bool(torch.equal(first, fn(*args)))
                differs = got[False] != got[True]
                bad += differs and case == "the grid's setting"
                print(f"{name:22s} {case:24s} eager (K heads, mask, is_causal, gqa) {got[False]} | captured {got[True]}"
                      f" | {'DIFFERS' if differs else 'same'} | two calls equal: {same}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
