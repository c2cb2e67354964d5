"""Probe for issue 25's open program check: which kernels make a step's graph replay and the
function called on its own differ (eager prefill-512: replay ~2.5 % faster in kernel time; the
compiled prefill the same), and whether the two sides launch the same kernels with the same
launch shape. For each step, 15 direct calls and 15 replays of a plain capture (a sync after
each, both traced by torch.profiler): per kernel position, its name, grid and block on each side
and the median CUPTI duration on each side. Prints one line per kernel position and a summary
line per step.
    python3 tools/probes/graph_kernels.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "examples" / "steps")]
from profiled import call_of_launch, captured, labelled_trace  # noqa: E402  (tools/probes/profiled.py)
N = 15
LABEL = "probe-call-"


def traced(torch, call, n: int) -> list[list[dict]]:
    """Per traced call (the first dropped), its kernels in start order: name, grid, block, duration."""
    events = labelled_trace(torch, call, n, LABEL)
    corr_call = call_of_launch(events, LABEL)
    per: dict[int, list[dict]] = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            args = e.get("args") or {}
            i = corr_call.get(args.get("correlation"))
            if i is None or any(k in e["name"] for k in ("flush_l2", "block_on_flag", "spin_ns", "warm_l2")):
                continue
            per.setdefault(i, []).append({"ts": float(e["ts"]), "name": e["name"], "grid": tuple(args.get("grid", ())),
                                          "block": tuple(args.get("block", ())), "us": float(e["dur"])})
    return [sorted(per[k], key=lambda r: r["ts"]) for k in sorted(per) if k > 0]


def compare(name: str, direct: list[list[dict]], replay: list[list[dict]]) -> None:
    nd, nr = {len(c) for c in direct}, {len(c) for c in replay}
    print(f"== {name}: kernels per call: direct {sorted(nd)}, replay {sorted(nr)}", flush=True)
    k = min(min(nd), min(nr))
    tot_d = statistics.median(sum(r["us"] for r in c) for c in direct)
    tot_r = statistics.median(sum(r["us"] for r in c) for c in replay)
    same_shape = 0
    for j in range(k):
        d0, r0 = direct[0][j], replay[0][j]
        md = statistics.median(c[j]["us"] for c in direct)
        mr = statistics.median(c[j]["us"] for c in replay)
        shape = d0["name"] == r0["name"] and d0["grid"] == r0["grid"] and d0["block"] == r0["block"]
        same_shape += shape
        note = "" if shape else f"  DIFFERS: replay {r0['name'][:60]} grid {r0['grid']} block {r0['block']}"
        print(f"  {j:3d} {d0['name'][:70]:70s} grid {str(d0['grid']):16s} direct {md:8.2f} replay {mr:8.2f} "
              f"({(mr / md - 1) * 100:+6.2f} %){note}", flush=True)
    print(f"== {name}: kernel sum direct {tot_d:.2f} µs, replay {tot_r:.2f} µs ({(tot_r / tot_d - 1) * 100:+.2f} %); "
          f"{same_shape} of {k} positions the same name, grid and block", flush=True)


def main() -> None:
    import torch

    from llama_layer import grid, layer
    from selfcheck import make

    steps = {"selfcheck-quarter-l2": make(torch.cuda.get_device_properties(0).L2_cache_size // 4)}
    with torch.inference_mode():
        steps["llama-prefill-512"] = grid(layer())["llama-prefill-512"][0]
        import compiled_decoder

        for n, (fn, args) in compiled_decoder.build(["llama-compiled-prefill-512"]).items():
            steps[n] = (lambda fn=fn, args=args: fn(*args))
        for name, fn in steps.items():
            g = captured(torch, fn)
            compare(name, traced(torch, fn, N), traced(torch, g.replay, N))


if __name__ == "__main__":
    main()
