"""Wall time of each shipped step attribution (target: <= 2 min each at the shipped sizes).

Every shipped step, each measured as `l2attr.step` does (natural vs cold per kernel, then the top
edges by selective eviction): the self-check (and its CUDA-graph twin), the Llama-shaped decoder
layer's grid (examples/steps/llama_layer.py: decode batch {1, 16} x KV {2K, 8K} and 8 x 4K,
prefill {512, 2K}, the batch-8 decode as a CUDA graph) and the three DLRM steps.

    python benchmarks/bench_steps.py --out runs
    python benchmarks/bench_steps.py --out runs --only selfcheck llama-decode-b1-kv2k
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
    ap.add_argument("--edges", type=int, default=5)
    ap.add_argument("--only", nargs="*", help="run names (or prefixes) to run; default all")
    args = ap.parse_args()
    import torch

    import l2attr
    from dlrm_step import build
    from llama_layer import grid, layer
    from selfcheck import make

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    steps = {   # name -> (fn, args, facts, graph, edges)
        "selfcheck-quarter-l2": (make(l2 // 4), (), {}, False, 1),
        "selfcheck-4x-l2": (make(4 * l2), (), {}, False, 1),
        "selfcheck-quarter-l2-graph": (make(l2 // 4), (), {}, True, 1),
    }
    for name, (fn, facts, graph) in grid(layer()).items():
        steps[name] = (fn, (), facts, graph, args.edges)
    dlrm = build()
    for variant in ("no-pin", "inline", "side-stream"):
        steps[f"dlrm-step-{variant}"] = (dlrm, (variant,), {"series": "dlrm", "pins": variant}, False, args.edges)
    walls = {}
    with torch.inference_mode():
        for name, (fn, a, facts, graph, edges) in steps.items():
            if args.only and not any(name.startswith(o) for o in args.only):
                continue
            t0 = time.perf_counter()
            try:
                ans = l2attr.step(fn, *a, name=name, repeats=args.repeats, out=args.out, edges=edges, graph=graph,
                                  facts=facts, keep_trace=name.startswith("selfcheck"), log=lambda s: None)
            except Exception as exc:       # one step's failure must not lose the others' runs
                print(f"{name}: FAILED after {time.perf_counter() - t0:.1f} s: {type(exc).__name__}: {exc}", flush=True)
                continue
            walls[name] = time.perf_counter() - t0
            print(f"{name}: attribution wall {walls[name]:.1f} s | {ans.headline(name)}", flush=True)
            for line in _edges(ans):
                print(f"    {line}", flush=True)
    if walls:
        worst = max(walls, key=walls.get)
        print(f"slowest attribution: {worst} {walls[worst]:.1f} s (target <= 120 s); all {sum(walls.values()):.1f} s")


def _edges(ans) -> list[str]:
    from l2attr.report.step_text import graph_line, measured_edge_lines

    error = ans.manifest.get("edges_error")
    return [x for x in [*measured_edge_lines(ans), f"edges not measured: {error}" if error else "", graph_line(ans)] if x]


if __name__ == "__main__":
    main()
