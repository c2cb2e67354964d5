"""Probe for issue 25's open program check: the compiled prefill-512 step's natural arm reads its
kernels ~2.4 % faster than the compiled function called on its own, while a plain torch capture
replayed with a sync after each matches the call. This walks from one to the other, per kernel
position (CUPTI durations under torch.profiler, median of N traced calls):
  call+sync          the function called on its own, a sync after each (the program check's reference)
  exec b2b           surgery.Exec replays of its capture back to back (the program's steady state)
  clean+1            the eager un-pin/demote/read flush, one untraced replay, the traced one right behind
                     (the natural arm before 2026-12-03)
  clean+3            the same flush, three untraced replays
  dirty+3            a cold_dirty replay, three untraced replays (no flush)
  settle+1           Flushes.settle (evict-last reset, read flush), one untraced replay
  cold+settle+1      a cold replay, the settle, one untraced replay
  dirty+settle+3     a cold_dirty replay, the settle, three untraced replays
  arm (settle+5)     the natural kernels of replay.trace_arms with the cold copies (the surgery run today)
(earlier versions, run 2026-12-03 on the H200: the first also had torch's own replay and Exec with a sync after
each: both within 1 % of call+sync on every step; examples/logs/surgery/probe_arm.log)
Prints the kernel sum per context and every kernel position whose median moves > 3 % from call+sync.
    python3 tools/probes/arm.py [step ...]     (default: llama-compiled-prefill-512 selfcheck-quarter-l2 llama-prefill-512)
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "examples" / "steps")]
from profiled import call_of_launch, labelled_trace  # noqa: E402  (tools/probes/profiled.py)
N = 15
LABEL = "probe-call-"
OURS = ("flush_l2", "block_on_flag", "spin_ns", "warm_l2", "l2attr_")


def traced(torch, call, n: int, before=None, sync: bool = True) -> list[list[float]]:
    """Per traced call (the first dropped; `before` untraced ahead of each), its kernels' durations
    in start order."""
    events = labelled_trace(torch, call, n, LABEL, before, sync)
    corr = call_of_launch(events, LABEL)
    per: dict[int, list[tuple[float, str, float]]] = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            i = corr.get((e.get("args") or {}).get("correlation"))
            if i is None or any(k in e["name"] for k in OURS):
                continue
            per.setdefault(i, []).append((float(e["ts"]), e["name"], float(e["dur"])))
    return [[us for _, _, us in sorted(per[k])] for k in sorted(per) if k > 0], \
        [name for _, name, _ in sorted(per[min(per)])] if per else []


def main() -> None:
    import torch

    from l2attr.steps.measure import surgery
    from l2attr.steps.measure import trace as replay
    from l2attr.steps.measure.flushes import Flushes
    from l2attr.vocab import L2Condition

    wanted = sys.argv[1:] or ["llama-compiled-prefill-512", "selfcheck-quarter-l2", "llama-prefill-512"]
    steps = {}
    with torch.inference_mode():
        if "selfcheck-quarter-l2" in wanted:
            from selfcheck import make

            steps["selfcheck-quarter-l2"] = make(torch.cuda.get_device_properties(0).L2_cache_size // 4)
        eager = [w for w in wanted if w.startswith("llama-") and not w.startswith("llama-compiled")]
        if eager:
            from llama_layer import grid, layer

            g = grid(layer())
            steps.update({w: g[w][0] for w in eager})
        compiled = [w for w in wanted if w.startswith("llama-compiled")]
        if compiled:
            import compiled_decoder

            for n, (fn, args) in compiled_decoder.build(compiled).items():
                steps[n] = (lambda fn=fn, args=args: fn(*args))
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        import cupy

        flushes = Flushes(torch, cupy, l2)
        for name, fn in steps.items():
            g1 = surgery.capture(torch, fn, 3)
            raw = surgery.raw_graph(g1)
            s = surgery.shape(raw)
            ex = surgery.Exec(torch, raw)
            clean = (lambda: flushes.launch(0))
            arms = {c: ex if c is L2Condition.NATURAL else surgery.Exec(torch, surgery.with_flushes(raw, s, flushes.graph(c)))
                    for c in (L2Condition.NATURAL, L2Condition.COLD, L2Condition.COLD_DIRTY)}
            for a in arms.values():
                a()
            torch.cuda.synchronize()
            ctx = {
                "call+sync": traced(torch, fn, N),
                "exec b2b": traced(torch, ex, N, sync=False),
                "clean+1": traced(torch, ex, N, before=lambda: (clean(), ex()), sync=False),
                "clean+3": traced(torch, ex, N, before=lambda: (clean(), ex(), ex(), ex()), sync=False),
                "dirty+3": traced(torch, ex, N, before=lambda: (arms["cold_dirty"](), ex(), ex(), ex()), sync=False),
                "settle+1": traced(torch, ex, N, before=lambda: (flushes.settle(), ex()), sync=False),
                "cold+settle+1": traced(torch, ex, N, before=lambda: (arms["cold"](), flushes.settle(), ex()), sync=False),
                "dirty+settle+3": traced(torch, ex, N, before=lambda: (arms["cold_dirty"](), flushes.settle(), ex(), ex(), ex()),
                                         sync=False),
            }
            k = replay.node_kernels(*replay.trace_arms(torch, arms, N, settle=flushes.settle))
            nat = k[k["condition"] == "natural"]
            arm_calls = [list(g.sort_values("node")["duration_us"]) for _, g in nat.groupby("step")]
            node_names = replay.cold_names(k)
            ctx["arm (settle+5)"] = (arm_calls, node_names)
            ref_calls, ref_names = ctx["call+sync"]
            print(f"== {name}: {len(ref_names)} kernels per call; graph nodes {len(node_names)}; "
                  f"same names in order: {ref_names == node_names}", flush=True)
            med = {c: [statistics.median(c_[j] for c_ in calls) for j in range(len(calls[0]))]
                   for c, (calls, _) in ctx.items() if calls}
            ref_sum = statistics.median(sum(c_) for c_ in ref_calls)
            for c, (calls, _) in ctx.items():
                sm = [sum(c_) for c_ in calls]
                print(f"  {c:14s} kernel sum median {statistics.median(sm):9.2f} µs [{min(sm):.2f}, {max(sm):.2f}] "
                      f"({(statistics.median(sm) / ref_sum - 1) * 100:+6.2f} % against call+sync), n={len(sm)}", flush=True)
            ref = med["call+sync"]
            for j, nm in enumerate(ref_names):
                moves = {c: (m[j] / ref[j] - 1) * 100 for c, m in med.items() if c != "call+sync" and j < len(m)}
                if any(abs(v) > 3 for v in moves.values()):
                    print(f"  {j:3d} {nm[:60]:60s} call {ref[j]:8.2f} " + " ".join(f"{c} {v:+.1f}%" for c, v in moves.items()),
                          flush=True)
            for a in arms.values():
                a.close()


if __name__ == "__main__":
    main()
