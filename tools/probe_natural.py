"""Probe for issue 25's open item: what before a natural replay moves its kernels away from the
program's own steady state. For the self-check and the eager prefill-512 step, the natural graph's
kernel sum per replay (CUPTI) after each context:
  back-to-back      natural replays only (the program's steady state, as graph replays)
  clean+1           a clean flush, one untraced natural replay (the surgery run's natural arm today)
  clean+3           a clean flush, three untraced natural replays
  cold+clean+1      the cold copy, a clean flush, one untraced natural replay
  dirty+clean+1     the cold_dirty copy, a clean flush, one untraced natural replay
  idle+1            a 2 ms pause of the host (GPU idle), one untraced natural replay
Prints one line per (step, context): median and range of the traced natural replay's kernel sum, µs.
    python3 tools/probe_natural.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "examples" / "steps"), str(ROOT / "tools")]
N = 15


def traced_sums(torch, before, natural) -> list[float]:
    from probe_program import sums

    return sums(torch, natural, N + 1, True, before=before)


def main() -> None:
    import torch

    from l2attr.steps import surgery
    from l2attr.steps.flushes import Flushes
    from l2attr.vocab import L2Condition
    from llama_layer import grid, layer
    from selfcheck import make

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flushes = Flushes(torch, __import__("cupy"), l2)
    steps = {"selfcheck-quarter-l2": make(l2 // 4)}
    with torch.inference_mode():
        steps["llama-prefill-512"] = grid(layer())["llama-prefill-512"][0]
        for name, fn in steps.items():
            g = surgery.capture(torch, fn, 2)
            raw = surgery.raw_graph(g)
            s = surgery.shape(raw)
            natural = surgery.Exec(torch, raw)
            cold = surgery.Exec(torch, surgery.with_flushes(raw, s, flushes.graph(L2Condition.COLD.value)))
            dirty = surgery.Exec(torch, surgery.with_flushes(raw, s, flushes.graph(L2Condition.COLD_DIRTY.value)))
            clean = lambda: flushes.launch(dirty=False)        # noqa: E731

            def seq(*parts):
                return lambda: [p() for p in parts]

            contexts = {"back-to-back": seq(), "clean+1": seq(clean, natural), "clean+3": seq(clean, natural, natural, natural),
                        "cold+clean+1": seq(cold, clean, natural), "dirty+clean+1": seq(dirty, clean, natural),
                        "idle+1": seq(torch.cuda.synchronize, lambda: time.sleep(0.002), natural)}
            for way, before in contexts.items():
                x = traced_sums(torch, before, natural)
                print(f"{name:22s} {way:14s} median {statistics.median(x):8.2f} µs  [{min(x):.2f}, {max(x):.2f}]  n={len(x)}",
                      flush=True)
            for e in (natural, cold, dirty):
                e.close()


if __name__ == "__main__":
    main()
