"""The study's question for the LLMs people run: full-width HuggingFace decoders (examples/steps/hf_models.py),
one decode or prefill step each, measured by `l2attr.step` with the write-back-matched cold arm and the
rewarmed arms (the flush's non-data cost per kernel node), repeats added until the study's bound is
decided (or the budget spent), the eager step and the graph replay as denominators.

Each model is measured at `--depths` (its layers cut; the page's per-layer model gives full depth). The
write-back is read by Nsight Compute at one and two layers only, one ncu child per model and cache
control, and mapped to deeper steps layer by layer (l2attr/steps/measure/ncu.py). `--full` adds full-depth
rows (MODEL:decode:BATCH:KV or MODEL:prefill:1:TOKENS) that hold the per-layer model.

    python examples/steps/hf_grid.py --out runs/hf-grid --models llama3-8b olmoe-1b-7b
    python examples/steps/hf_grid.py --out runs/hf-grid --full llama3-8b:decode:1:4096
    python examples/steps/hf_grid.py --page examples/steps/hf_grid    # the grid's page from its runs
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hf_models import MODELS, build, step_of  # noqa: E402
from hf_page import CALLS, call_lines, checks, finished, one_gpu, record_call, wall_sentence, write_page  # noqa: E402,F401

BATCHES, KVS, PREFILLS = (1, 32), (4096,), (2048,)
WANT_ENV = "HF_GRID_WANT"      # the ncu child's list of steps: a path to a JSON file (no data in the variable)


def kv(n: int) -> str:
    return f"{n // 1024}k" if n >= 1024 else str(n)


def name_of(model: str, layers: int, phase: str, b: int, n: int, compiled: bool = False) -> str:
    return (f"{model}-L{layers}-" + ("compiled-" if compiled else "")
            + (f"decode-b{b}-kv{kv(n)}" if phase == "decode" else f"prefill-{kv(n)}"))


def configs(batches: tuple[int, ...] = BATCHES, kvs: tuple[int, ...] = KVS,
            prefills: tuple[int, ...] = PREFILLS) -> list[tuple[str, int, int]]:
    """(phase, batch, tokens): decode attends over `tokens`, prefill runs `tokens`."""
    return [("decode", b, n) for b in batches for n in kvs] + [("prefill", 1, n) for n in prefills]


def ncu_steps() -> list[tuple[str, Any, tuple]]:
    """The ncu child's factory: the steps WANT_ENV's file lists, one model build per (model, depth)."""
    want = json.loads(Path(os.environ[WANT_ENV]).read_text())
    out, built = [], {}
    for model, layers, phase, b, n, *compiled in want:
        if (model, layers) not in built:
            built.clear()                 # one build in memory at a time
            built[(model, layers)] = build(model, layers, max(x[4] for x in want) + 1)
        m, cfg = built[(model, layers)]
        c = bool(compiled and compiled[0])
        try:
            out.append((name_of(model, layers, phase, b, n, c), *step_of(m, cfg, phase, b, n, compiled=c)))
        except Exception as e:        # a program torch.compile refuses: its row says so, the grid goes on
            if not c:
                raise
            print(f"hf_grid: {name_of(model, layers, phase, b, n, c)}: not compiled: {type(e).__name__}: "
                  f"{str(e).splitlines()[0][:200] if str(e) else ''}", file=sys.stderr, flush=True)
    return out


CACHE_COLUMNS = ["step", "node", "nodes", "kernel", "write_none_b", "write_all_b", "gpu"]


def read_all(path: Path) -> dict[tuple[str, str], Any]:
    """(gpu, step) -> its write-back table, only steps whose rows are whole (a cut cache's last step
    is dropped and read again, never used short); {} for a missing, oversized or unreadable cache."""
    import pandas as pd

    import io

    from l2attr.errors import UserError
    from l2attr.safe_read import read_text_limited

    if not (path.exists() or path.is_symlink()):
        return {}
    try:
        t = pd.read_csv(io.StringIO(read_text_limited(path, 256 << 20)))
    except UserError as e:                     # a FIFO, a folder, a cache over its limit: read again, and said
        print(f"hf_grid: {e}; the write-back is read again", file=sys.stderr, flush=True)
        return {}
    except (ValueError, pd.errors.ParserError):
        return {}
    if not set(CACHE_COLUMNS) <= set(t.columns):
        return {}
    out = {}
    for (gpu, step), g in t.groupby(["gpu", "step"]):
        g = g.sort_values("node")
        whole = g[["node", "nodes", "write_none_b", "write_all_b"]].notna().all().all()
        if whole and list(g["node"]) == list(range(int(g["nodes"].iloc[0]))):
            out[(str(gpu), str(step))] = g.reset_index(drop=True)
    return out


def read_cache(path: Path, gpu: str) -> dict[str, Any]:
    """step -> its whole write-back table read on `gpu` (a write-back depends on the L2's size)."""
    return {step: g for (at, step), g in read_all(path).items() if at == gpu}


def write_back_of(wanted: dict[str, list[tuple]], out: Path, gpu: str) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """model -> its steps' whole write-back tables at one and two layers, for every wanted
    configuration of every model, read by ONE ncu child per cache control for the whole grid (one
    process start and CUDA context per control, not one per model), or from the caches an earlier call
    left; and what the reading cost (seconds, steps and kernel nodes read). A configuration is
    (phase, batch, tokens) or (phase, batch, tokens, compiled); a compiled one is read at two layers
    only, the depth its row is measured at (its kernels are Inductor's, not the eager layer block's)."""
    import pandas as pd

    import l2attr
    from l2attr import atomic

    caches = {m: out / "ncu" / f"{m}-write-back.csv" for m in wanted}
    have = {m: read_cache(caches[m], gpu) for m in wanted}
    need = [(m, d, *c) for m, cfgs in wanted.items() for c in cfgs for d in ((2,) if c[3:4] == (True,) else (1, 2))
            if name_of(m, d, *c) not in have[m]]
    cost: dict[str, Any] = {"ncu_s": 0.0, "ncu_steps": 0, "ncu_nodes": 0}
    if not need:
        return have, cost
    t0 = time.perf_counter()
    (out / "ncu").mkdir(parents=True, exist_ok=True)
    want = out / "ncu" / "want.json"
    atomic.write_text(want, json.dumps(need))
    os.environ[WANT_ENV] = str(want.resolve())
    read = l2attr.write_back(f"{Path(__file__).resolve()}:ncu_steps", out=out / "ncu" / "grid", replays=1,
                             log=lambda s: None)
    read = read if isinstance(read, dict) else {name_of(*need[0]): read}
    cost = {"ncu_s": round(time.perf_counter() - t0, 1), "ncu_steps": len(read),
            "ncu_nodes": int(sum(len(d) for d in read.values()))}
    for m in wanted:
        names = {name_of(*x) for x in need if x[0] == m}
        rows = [d.assign(step=name, nodes=len(d), gpu=gpu) for name, d in read.items() if name in names]
        if not rows:
            continue
        old = [g for (at, step), g in read_all(caches[m]).items() if at != gpu or step in have[m]]
        atomic.write_text(caches[m], pd.concat(old + rows, ignore_index=True)[CACHE_COLUMNS].to_csv(index=False))
        have[m] = read_cache(caches[m], gpu)
    print(f"ncu write-back of {cost['ncu_steps']} steps ({cost['ncu_nodes']} kernel nodes) in {cost['ncu_s']:.1f} s",
          flush=True)
    return have, cost


def write_back_at(have: dict[str, Any], model: str, layers: int, phase: str, b: int, n: int,
                  compiled: bool = False) -> tuple[Any, str]:
    """(node -> bytes, how) at `layers`: read at two layers, mapped from them deeper (periodic.at_depth)."""
    from l2attr.steps.measure.ncu import at_depth, layer_shape

    one, two = (have.get(name_of(model, d, phase, b, n, compiled)) for d in (1, 2))
    if two is None:
        return None, "no write-back reading"
    d2 = {int(r.node): max(0.0, float(r.write_none_b) - float(r.write_all_b)) for r in two.itertuples()}
    if layers == 2:
        return d2, "read by Nsight Compute at this depth"
    if one is None:
        return None, "no one-layer reading to find the layer block"
    shape = layer_shape(list(one["kernel"].astype(str)), list(two["kernel"].astype(str)))
    return at_depth(d2, shape, layers), (f"read at two layers, mapped layer by layer (head {shape.head}, "
                                         f"{shape.per_layer} nodes a layer, tail {shape.tail})")


def host_facts() -> dict[str, str]:
    """What each row names besides the GPU: the host's CPU and transformers' version."""
    import platform

    import transformers

    cpu = platform.processor() or "?"
    try:
        cpu = next((x.split(":", 1)[1].strip() for x in Path("/proc/cpuinfo").read_text().splitlines()
                    if x.startswith("model name")), cpu)
    except OSError:
        pass
    return {"host_cpu": cpu, "transformers": transformers.__version__}


def measure(out: Path, models: list[str], depths: list[int], wanted: list[tuple[str, int, int]], full: list[str],
            repeats: int, max_repeats: int, compiled: list[str] = ()) -> dict[str, Any]:
    """Measure every wanted step not finished yet; returns where the time went (the call record)."""
    import l2attr
    from l2attr.errors import UserError

    try:                                # before ncu or any model is built: no GPU is one line, not torch's traceback
        import torch
    except ImportError:
        raise UserError("hf_grid: torch is not installed; the grid measures on a CUDA GPU (torch, transformers)") from None
    if not torch.cuda.is_available():
        raise UserError("hf_grid: no CUDA GPU found (torch.cuda.is_available() is False); the grid measures on a "
                        "GPU, and `--page FOLDER` makes its page on any machine")

    have, here = finished([out]), torch.cuda.get_device_name()
    refused = one_gpu(have, here)
    if refused:
        raise SystemExit(f"hf_grid: error: {refused}")
    plan: dict[str, list[tuple[int, str, int, int, bool]]] = {}
    for m in models:
        plan.setdefault(m, []).extend((d, p, b, n, False) for d in depths for p, b, n in wanted)
    for f in full:
        m, p, b, n = f.split(":")
        plan.setdefault(m, []).append((MODELS[m].layers, p, int(b), int(n), False))
    for f in compiled:
        m, p, b, n = f.split(":")
        plan.setdefault(m, []).append((2, p, int(b), int(n), True))
    spent: dict[str, Any] = {"gpu": here, "models": {}, "skipped": []}
    host = host_facts()
    for m in plan:
        if MODELS[m].experts and any(s[1] == "prefill" for s in plan[m]):
            why = (f"{m} prefill: not measured: batched_mm (the capture-safe experts) copies every selected "
                   "expert's weights per token, tens of GB at these lengths")
            print(why, flush=True)
            spent["skipped"].append(why)
            plan[m] = [s for s in plan[m] if s[1] != "prefill"]
    plan = {m: [s for s in steps if name_of(m, *s) not in have] for m, steps in plan.items()}
    plan = {m: steps for m, steps in plan.items() if steps}
    wb, cost = write_back_of({m: sorted({s[1:] for s in steps}) for m, steps in plan.items()}, out, here)
    spent.update(cost)
    for model, steps in plan.items():
        t_steps, kernels = time.perf_counter(), 0
        for layers in sorted({s[0] for s in steps}):
            m, cfg = build(model, layers, max(s[3] for s in steps) + 1)
            for _, phase, b, n, c in [s for s in steps if s[0] == layers]:
                name, t0 = name_of(model, layers, phase, b, n, c), time.perf_counter()
                d, how = write_back_at(wb[model], model, layers, phase, b, n, c)
                if c and d is None:
                    why = f"{name}: not measured: the ncu child could not compile it (its line is in the log)"
                    print(why, flush=True)
                    spent["skipped"].append(why)
                    continue
                fn, args = step_of(m, cfg, phase, b, n, compiled=c)
                facts = {"series": "hf-grid", "model": model, "phase": phase, "batch": b, "tokens": n,
                         "write_back_how": how, **MODELS[model].facts(layers), **host,
                         **({"compile": "torch.compile default mode, fullgraph, static shapes"} if c else {})}
                ans = l2attr.step(fn, *args, name=name, repeats=repeats, out=out, edges=0, write_back=d,
                                  log=lambda s: None, facts=facts, until_decided=True, max_repeats=max_repeats)
                kernels += len(ans.kernels)
                print(f"{name}: wall {time.perf_counter() - t0:.1f} s | {ans.headline()}", flush=True)
            del m
            torch.cuda.empty_cache()
        spent["models"][model] = {"steps": [name_of(model, *s) for s in steps],
                                  "steps_s": round(time.perf_counter() - t_steps, 1), "kernels": kernels}
    return spent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("runs/hf-grid"))
    ap.add_argument("--models", nargs="*", default=["llama3-8b"], choices=list(MODELS))
    ap.add_argument("--depths", nargs="+", type=int, default=[2, 4])
    ap.add_argument("--batches", nargs="+", type=int, default=list(BATCHES))
    ap.add_argument("--kvs", nargs="+", type=int, default=list(KVS))
    ap.add_argument("--prefills", nargs="*", type=int, default=list(PREFILLS))
    ap.add_argument("--full", nargs="*", default=[], help="full-depth rows, MODEL:PHASE:BATCH:TOKENS")
    ap.add_argument("--compiled", nargs="*", default=[],
                    help="torch.compile'd rows at two layers, MODEL:PHASE:BATCH:TOKENS")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--max-repeats", type=int, default=40)
    ap.add_argument("--page", type=Path, help="write the grid's page from the runs under this folder, and stop")
    a = ap.parse_args(argv)
    from l2attr.errors import install_script_hook
    from l2attr.outputs import guard_closed_streams

    install_script_hook()               # a UserError ends the script in one `l2attr: error:` line, as in the CLI
    guard_closed_streams()              # a closed stdout is not an AttributeError
    if a.page:
        if not a.page.is_dir():
            ap.error(f"--page {a.page}: no such folder")
        text = write_page(a.page)
        try:
            print(text, flush=True)
        except OSError as e:            # a full or broken stdout: the page is written, say so in one line
            print(f"hf_grid: error: the page is written ({a.page / 'README.md'}), but stdout refused it: "
                  f"{e.strerror or e}", file=sys.stderr)
            return 1
        return 0
    if a.out.exists() and not a.out.is_dir():
        ap.error(f"--out {a.out}: not a folder")
    if a.repeats < 2 or a.max_repeats < a.repeats:
        ap.error(f"--repeats {a.repeats} --max-repeats {a.max_repeats}: at least 2 repeats, and a budget no smaller")
    for flag, rows in (("--full", a.full), ("--compiled", a.compiled)):
        for f in rows:
            parts = f.split(":")
            if len(parts) != 4 or parts[0] not in MODELS or parts[1] not in ("decode", "prefill") or not all(
                    x.isdigit() for x in parts[2:]):
                ap.error(f"{flag} {f!r}: give MODEL:decode:BATCH:KV or MODEL:prefill:1:TOKENS")
    if any(d < 2 for d in a.depths):
        ap.error("--depths: two layers or more (the write-back is mapped from a two-layer reading)")
    t0 = time.perf_counter()
    spent = measure(a.out, a.models, a.depths, configs(tuple(a.batches), tuple(a.kvs), tuple(a.prefills)), a.full,
                    a.repeats, a.max_repeats, a.compiled)
    wall = time.perf_counter() - t0
    record_call(a.out, spent, wall, list(sys.argv[1:] if argv is None else argv))
    print(f"grid wall {wall:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
