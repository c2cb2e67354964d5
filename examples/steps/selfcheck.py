"""The step method's self-check: a two-kernel step whose consumer reads the producer's output.

At a quarter of the L2 the output is still in L2 when the consumer reads it (a large saving);
at four times the L2 it is not (no saving within the interval). The edge producer -> consumer is
measured apart too (selective eviction, with its control); and the quarter-L2 step again as
replays of a CUDA graph.

    python examples/steps/selfcheck.py --out runs
"""

from __future__ import annotations

import argparse

import l2attr


def make(nbytes: int):
    import torch

    src = torch.randn(nbytes // 4, device="cuda")
    buf = torch.empty_like(src)

    def two_kernels() -> None:
        torch.mul(src, 2.0, out=buf)     # producer: writes buf
        buf.sum()                        # consumer: reads it

    return two_kernels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="runs")
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    import torch

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    for name, nbytes, graph in (("selfcheck-quarter-l2", l2 // 4, False), ("selfcheck-4x-l2", 4 * l2, False),
                                ("selfcheck-quarter-l2-graph", l2 // 4, True)):
        ans = l2attr.step(make(nbytes), name=name, repeats=args.repeats, out=args.out, keep_trace=True, edges=1,
                          graph=graph)
        print(ans.headline(name))


if __name__ == "__main__":
    main()
