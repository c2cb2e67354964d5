"""Where a profiled child's seconds go under Nsight Compute: one small program, run plain and under ncu.

    python tools/probes/ncu_cost.py [--torch] [--n N] [--m M] [--fast-exit] [--tag TAG]

Prints one line `PROBE {json}` per run of the program, so under application or app-range replay
the number of such lines is the number of passes ncu needed. The line holds the process's age at
each step (seconds since the kernel started the process: interpreter, imports, the first CuPy
kernel, `import torch`, torch's first CUDA work), the seconds of M launches outside any l2attr
NVTX range and of N launches each inside its own `l2attr@probe:<i>` range (what
`--nvtx-include 'regex:l2attr@probe:.*/'` profiles), and the CUDA/ncu variables the process saw.
`--fast-exit` ends with os._exit, as `l2attr.cli.end_without_teardown` would, to see whether ncu
still keeps every kernel. Needs a GPU, CuPy and the nvtx package; torch only with --torch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def age() -> float:
    """Seconds since this process started (from /proc: 10 ms resolution)."""
    with open("/proc/self/stat") as fh:
        start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as fh:
        uptime = float(fh.read().split()[0])
    return round(uptime - start_ticks / os.sysconf("SC_CLK_TCK"), 3)


SOURCE = r"""
extern "C" __global__ void rd(const float* x, float* o, long long n) {
  float s = 0.f;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) s += x[i];
  atomicAdd(o + (threadIdx.x & 255), s);
}
"""


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torch", action="store_true")
    ap.add_argument("--n", type=int, default=100, help="launches, each in its own l2attr@probe range")
    ap.add_argument("--m", type=int, default=300, help="launches outside any range")
    ap.add_argument("--fast-exit", action="store_true")
    ap.add_argument("--tag", default="")
    args = ap.parse_args(argv)
    marks = {"python": age()}
    import cupy
    import numpy as np
    import nvtx

    marks["imports"] = age()
    buf = cupy.ones((16 << 20,), dtype=cupy.float32)      # 64 MB
    out = cupy.zeros((256,), dtype=cupy.float32)
    kern = cupy.RawKernel(SOURCE, "rd")
    launch = lambda: kern((264,), (256,), (buf, out, np.int64(buf.size)))  # noqa: E731
    launch()
    cupy.cuda.Device().synchronize()
    marks["cupy_first_kernel"] = age()
    if args.torch:
        import torch

        marks["torch_import"] = age()
        w = torch.ones((1000, 64), device="cuda")
        idx = torch.arange(100, device="cuda")
        torch.nn.functional.embedding_bag(idx, w, torch.tensor([0, 50], device="cuda"))
        torch.cuda.synchronize()
        marks["torch_first_op"] = age()
    t0 = time.perf_counter()
    for _ in range(args.m):
        launch()
    cupy.cuda.Device().synchronize()
    unprofiled = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(args.n):
        with nvtx.annotate(f"probe:{i}", domain="l2attr"):
            launch()
    cupy.cuda.Device().synchronize()
    profiled = time.perf_counter() - t0
    marks["loops_done"] = age()
    env = {k: v for k, v in os.environ.items()
           if k.startswith(("CUDA_", "NV_", "NSIGHT", "LD_PRELOAD", "NVTX", "CUPTI"))}
    print("PROBE " + json.dumps({"tag": args.tag, "marks": marks, "m": args.m, "n": args.n,
                                 "unprofiled_s": round(unprofiled, 4), "profiled_s": round(profiled, 4),
                                 "per_unprofiled_ms": round(1e3 * unprofiled / max(args.m, 1), 3),
                                 "per_profiled_ms": round(1e3 * profiled / max(args.n, 1), 3), "env": env}),
          flush=True)
    sys.stderr.flush()
    if args.fast_exit:
        os._exit(0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
