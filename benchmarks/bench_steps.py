"""The graph-surgery step cycle on the H200: every shipped step measured by `l2attr.step` (graph
surgery, clean and write-back-paying cold arms), each attribution's wall time, the natural replay
against the function timed on its own, and the bad-input cases. Runs land in --out.

    python benchmarks/bench_steps.py --out runs [--only NAME ...]   # target: each attribution <= 2 min
    python benchmarks/bench_steps.py --out runs --kernels 250 500 1000 --record examples/logs/bench_steps_scale.json
        # chains of N one-kernel ops: attribution's wall against its kernel count (target: 1,000 <= 60 s, linear)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "steps"))
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="runs")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--bad", action="store_true", help="the bad-input cases too")
    ap.add_argument("--edges", type=int, default=2, help="top edges measured apart per step (the self-checks: 1)")
    ap.add_argument("--kernels", nargs="*", type=int, help="only chains of this many kernels (the scale record)")
    ap.add_argument("--record", type=Path, help="with --kernels: write their walls here (JSON)")
    args = ap.parse_args()
    if args.kernels:
        scale(args.kernels, args.out, args.repeats, args.record)
        return
    import numpy as np
    import torch

    import l2attr
    from l2attr.steps.analyse.answer import per_kernel  # noqa: F401
    from selfcheck import make
    from shipped import steps as shipped

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    todo = {"selfcheck-quarter-l2": (make(l2 // 4), (), {}), "selfcheck-4x-l2": (make(4 * l2), (), {})}
    names = [n for n in ["bert-layer-fastpath", "bert-layer-no-fastpath", "llama-compiled-decode-b8-kv4k",
                         "llama-compiled-prefill-512", "dlrm-rung-torch", "dlrm-rung-baseline", "dlrm-rung-optmt",
                         "dlrm-rung-rpf-optmt", "dlrm-rung-l2p-optmt", "dlrm-rung-combined",
                         "llama-decode-32l-b8-kv4k"] if not args.only or any(n.startswith(o) for o in args.only)]
    todo = {k: v for k, v in todo.items() if not args.only or any(k.startswith(o) for o in args.only)}
    with torch.inference_mode():
        for name in names:
            try:
                todo.update(shipped([name]))
            except Exception as exc:
                print(f"{name}: BUILD FAILED {type(exc).__name__}: {exc}", flush=True)
        for name, (fn, a, facts) in todo.items():
            t0 = time.perf_counter()
            try:
                ans = l2attr.step(fn, *a, name=name, repeats=args.repeats, out=args.out, facts=facts,
                                  edges=1 if name.startswith("selfcheck") else args.edges, log=lambda s: print("  ", s))
            except Exception as exc:
                print(f"{name}: FAILED after {time.perf_counter() - t0:.1f} s: {type(exc).__name__}: {exc}", flush=True)
                continue
            wall = time.perf_counter() - t0
            sf = ans.manifest.get("surgery") or {}
            call = sf.get("call_us") or []
            print(f"{name}: wall {wall:.1f} s | {ans.headline(name)}", flush=True)
            print(f"   natural replay {ans.step_time.median:.1f} us; called on its own {np.median(call) if call else float('nan'):.1f} us; "
                  f"torch's own replay {np.median(sf.get('torch_graph_us') or [float('nan')]):.1f} us; kernels {sf.get('graph_kernels')} matched {sf.get('matched_kernels')} overlap {sf.get('overlapping_kernels')} "
                  f"timings {sf.get('timings')}", flush=True)
            from l2attr.steps.section.text import measured_edge_lines

            for line in measured_edge_lines(ans, args.edges or 1):
                print("   " + line, flush=True)
            k = ans.kernels
            for r in k.sort_values("node" if "node" in k else "op_index").head(40).to_dict("records"):
                print(f"   {r.get('node', -1):4} {r['natural_us']:9.2f} {r['cold_us']:9.2f} {r.get('dirty_us', float('nan')):9.2f} "
                      f"{r['judgement']:<22} {r['op'][:28]:<28} {str(r['kernel'])[:70]}", flush=True)
        if args.bad:
            bad(torch, l2attr, args.out)


def chain(torch, n: int):
    """A step of `n` kernels exactly: each adds one to the buffer the kernel before it wrote (1 MiB
    each, four buffers in turn): a chain of activations, every kernel a producer and a consumer."""
    bufs = [torch.zeros(1 << 18, device="cuda") for _ in range(4)]

    def step(bufs):
        for i in range(n):
            torch.add(bufs[i % 4], 1.0, out=bufs[(i + 1) % 4])
    return step, (bufs,)


def scale(counts: list[int], out: str, repeats: int, record: Path | None) -> None:
    """Attribution's wall time against the step's kernel count, with its phases (issue 39: linear,
    1,000 kernels within 60 s)."""
    import torch

    import l2attr

    rows = []
    for n in counts:
        fn, a = chain(torch, n)
        t0 = time.perf_counter()
        ans = l2attr.step(fn, *a, name=f"chain-{n}", repeats=repeats, out=out, edges=0, log=lambda s: None)
        wall = time.perf_counter() - t0
        sf = ans.manifest.get("surgery") or {}
        rows.append({"kernels": int(sf.get("graph_kernels") or 0), "wall_s": round(wall, 2),
                     "timings": {**(sf.get("timings") or {}), **(ans.manifest.get("timings") or {})},
                     "gpu": (ans.manifest.get("gpu") or {}).get("name"), "run": Path(ans.run_dir).name})
        print(f"chain-{n}: {rows[-1]['kernels']} kernels, wall {wall:.1f} s, {rows[-1]['timings']}", flush=True)
    if record is not None:
        from l2attr import atomic
        from l2attr.source import checkout_sha

        atomic.write_text(record, json.dumps({"command": " ".join(sys.argv), "tree": checkout_sha(ROOT)[0],
                                              "runs": rows}, indent=1) + "\n")


_KEEP: list = []      # the host callback must outlive the graph that points at it


def host_node_graph(torch, x):
    """A CUDA graph of the user's own (keep_graph=True) with a host callback between two kernels:
    cudaLaunchHostFunc on the capturing stream makes a host node."""
    import ctypes

    from cuda.bindings import runtime as rt

    cb = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda _data: None)
    _KEEP.append(cb)
    fn = rt.cudaHostFn_t(_ptr=ctypes.addressof(cb))
    g = torch.cuda.CUDAGraph(keep_graph=True)
    with torch.cuda.graph(g):
        y = x * 2
        err = rt.cudaLaunchHostFunc(rt.cudaStream_t(init_value=int(torch.cuda.current_stream().cuda_stream)), fn, 0)[0]
        y.sum()
    if int(err) != 0:
        raise RuntimeError(f"cudaLaunchHostFunc during capture: {err}")
    _KEEP.append(g)
    return g


def bad(torch, l2attr, out) -> None:
    from l2attr.errors import UserError

    x = torch.randn(1 << 20, device="cuda")

    def syncs():
        return (x * 2).sum().item()

    calls = {"n": 0}

    def changes():
        calls["n"] += 1
        return x * 2 if calls["n"] % 2 else (x * 2).sum()

    cases = [("sequence changes", changes, ()), ("host sync in capture", syncs, ()),
             ("cpu tensor", lambda t: t * 2, (torch.randn(4),))]
    try:
        cases.append(("host node in the user's graph", host_node_graph(torch, x), ()))
    except Exception as exc:                     # the bindings could not build the case: say so
        print(f"BAD host node in the user's graph: not built here ({type(exc).__name__}: {exc})")
    for label, fn, a in cases:
        try:
            ans = l2attr.step(fn, *a, name="bad", repeats=2, out=out, edges=0, log=lambda s: print("  ", s))
            print(f"BAD {label}: accepted: {ans.headline('bad').splitlines()[0]}")
        except UserError as exc:
            print(f"BAD {label}: refused: {exc}")
        except Exception as exc:
            print(f"BAD {label}: TRACEBACK-CLASS {type(exc).__name__}: {exc}")


if __name__ == "__main__":
    main()
