"""Wall time of each shipped step attribution (target: <= 2 min each at the shipped sizes).

    python benchmarks/bench_steps.py --out runs
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "steps"))
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="runs")
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    import torch

    import l2attr
    from dlrm_step import build
    from llama_layer import HIDDEN, KV_HEADS, DIM, layer
    from selfcheck import make

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    model = layer()
    dlrm = build()
    x1 = torch.randn(8, 1, HIDDEN, device="cuda", dtype=torch.bfloat16)
    cache = tuple(torch.randn(8, KV_HEADS, 4096, DIM, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    xp = torch.randn(1, 2048, HIDDEN, device="cuda", dtype=torch.bfloat16)
    steps = {
        "selfcheck-quarter-l2": (make(l2 // 4), ()),
        "selfcheck-4x-l2": (make(4 * l2), ()),
        "llama-decode-b8-kv4k": (lambda: model(x1, cache, 4095), ()),
        "llama-prefill-2k": (lambda: model(xp), ()),
        "dlrm-step-no-pin": (dlrm, ("no-pin",)),
        "dlrm-step-inline": (dlrm, ("inline",)),
        "dlrm-step-side-stream": (dlrm, ("side-stream",)),
    }
    with torch.inference_mode():
        for name, (fn, a) in steps.items():
            t0 = time.perf_counter()
            ans = l2attr.step(fn, *a, name=name, repeats=args.repeats, out=args.out,
                              keep_trace=name.startswith("selfcheck"), log=lambda s: None)
            wall = time.perf_counter() - t0
            print(f"{name}: attribution wall {wall:.1f} s | {ans.headline(name)}", flush=True)


if __name__ == "__main__":
    main()
