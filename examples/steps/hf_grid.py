"""The study's question for the LLMs people run: HuggingFace `transformers` models built from a config
(random weights, nothing downloaded), one decode or prefill step each, measured by `l2attr.step` with
the write-back-matched cold arm (its bytes read by Nsight Compute, one ncu run per model and cache
control for the whole grid), the eager step as the denominator, and the saving split by what was reused.

Models: a Llama-style decoder (GQA: 16 query heads, 4 KV heads) and a GPT-2-style one (MHA), 4 layers
each, bf16, SDPA attention. Steps: decode one token at batch {1, 8, 32} x KV {512, 4K, 16K} with a
StaticCache (the new token at the cache's last slot, attending over all of it), and prefill of 512 and
2K tokens at batch 1.

    python examples/steps/hf_grid.py --out runs/hf-grid              # the grid: ncu, then every step
    python examples/steps/hf_grid.py --out runs/hf-grid --only llama-decode-b8-kv4k
    python examples/steps/hf_grid.py --page examples/steps/hf_grid    # the grid's page from its runs
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

MODELS = ("llama", "gpt2")
BATCHES, KVS, PREFILLS = (1, 8, 32), (512, 4096, 16384), (512, 2048)
LAYERS, HIDDEN, HEADS, KV_HEADS, FFN = 4, 2048, 16, 4, 5632
GPT2_HIDDEN = 1024
DEVICE = "cuda"        # tools/check_grid_capture.py builds the same steps on the CPU
NCU_CHUNK = 6          # steps per ncu child (one model build and one process start per cache control each)


def configs(model: str) -> list[tuple[str, str, int, int]]:
    """(step name, phase, batch, tokens): decode attends over `tokens`, prefill runs `tokens`."""
    kv = lambda n: f"{n // 1024}k" if n >= 1024 else str(n)          # noqa: E731
    return ([(f"{model}-decode-b{b}-kv{kv(n)}", "decode", b, n) for b in BATCHES for n in KVS]
            + [(f"{model}-prefill-{kv(n)}", "prefill", 1, n) for n in PREFILLS])


def eager_masks_under_capture() -> None:
    """Let transformers build the eager program's attention inside a CUDA-graph capture.

    transformers asks `is_cuda_stream_capturing()` (through `is_tracing`) before it skips the causal
    mask: while a stream captures, a prefill builds an explicit mask, calls SDPA with
    `is_causal=False` and, for GQA, repeats K and V to every query head, where the eager call passes
    no mask, `is_causal=True` and `enable_gqa=True` (read in transformers 5.17 and 5.25; a decode
    step is the same either way). The captured graph would then be another program than the eager
    step it is divided by. These steps pass no padding mask, so the eager decision needs no host
    sync (a sync would make the capture fail loudly); the answer's program check (the call's kernels
    against the graph's) holds the two to each other."""
    import transformers.utils.import_utils as iu

    iu.is_cuda_stream_capturing = lambda: False


def build(model: str):
    import torch
    import transformers as tf

    eager_masks_under_capture()

    if model == "llama":
        cfg = tf.LlamaConfig(hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
                             num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, vocab_size=32000,
                             max_position_embeddings=max(KVS) + 1)
        cls = tf.LlamaForCausalLM
    else:
        cfg = tf.GPT2Config(n_embd=GPT2_HIDDEN, n_layer=LAYERS, n_head=HEADS, vocab_size=50257,
                            n_positions=max(KVS) + 1, bos_token_id=0, eos_token_id=0)
        cls = tf.GPT2LMHeadModel
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(0)
    with torch.device(DEVICE):
        m = cls(cfg).to(torch.bfloat16).eval()
    return m, cfg


def step_of(m, cfg, phase: str, batch: int, tokens: int):
    """(fn, args): one step's call with its static inputs; the cache is made here, filled by the call."""
    import torch
    import transformers as tf

    cache = tf.StaticCache(config=cfg, max_cache_len=tokens)
    t = 1 if phase == "decode" else tokens
    ids = torch.randint(0, 1000, (batch, t), device=DEVICE)
    pos = torch.arange(tokens - t, tokens, device=DEVICE)

    def call(ids, pos):
        with torch.inference_mode():
            return m(input_ids=ids, past_key_values=cache, cache_position=pos, use_cache=True).logits

    call(ids, pos)                    # the cache's first use allocates it, outside any capture
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    # transformers' StaticCache layers write at a device counter of their own and advance it on every
    # call, whatever cache_position says: replayed as is, the step walks off the cache's end (a
    # device-side assert that ends the CUDA context). Each call sets it back, so every call is the same.
    counters = [c for c in (getattr(layer, "cumulative_length", None) for layer in getattr(cache, "layers", []))
                if isinstance(c, torch.Tensor)]

    def step(ids, pos):
        with torch.inference_mode():      # the counters became inference tensors on their first use
            for c in counters:
                c.fill_(tokens - t)
        return call(ids, pos)

    return step, (ids, pos)


def ncu_steps(model: str, only: list[str] | None = None):
    """The ncu child's factory: every step of one model, one build."""
    m, cfg = build(model)
    return [(name, *step_of(m, cfg, phase, b, n)) for name, phase, b, n in configs(model)
            if not only or name in only]


def ncu_steps_llama():
    return ncu_steps("llama", _only())


def ncu_steps_gpt2():
    return ncu_steps("gpt2", _only())


def _only() -> list[str] | None:
    import os

    got = os.environ.get("HF_GRID_ONLY", "")
    return got.split(",") if got else None


def finished(folders: list[Path]) -> dict[str, str]:
    """Step name -> GPU name of every finished run under any of `folders` (a grid resumes)."""
    import json

    names = {}
    for f in folders:
        for m in f.rglob("manifest.json") if f.is_dir() else []:
            got = json.loads(m.read_text())
            if got.get("status") == "complete" and got.get("kind") == "step":
                names[(got.get("step") or {}).get("name")] = (got.get("gpu") or {}).get("name") or "?"
    return names


def one_gpu(runs: dict[str, str], here: str) -> str:
    """'' when every finished run was measured on this GPU; else the one line that refuses to add
    rows from another (a grid's page is one comparison: one GPU identity)."""
    others = sorted({g for g in runs.values() if g != here})
    if not others:
        return ""
    return (f"the finished runs were measured on {', '.join(others)}, this GPU is {here}: a grid's rows come "
            "from one GPU; measure into an empty --out with no --done, or on that GPU")


def write_back_of(model: str, wanted: list[str], out: Path, skip: list[Path] = (), gpu: str = "") -> dict:
    """Per step, the ncu write-back table (steps/ncu.py deltas); read from <folder>/ncu/<model>-write-back.csv
    of `out` or a --done folder when an earlier run of the grid on this `gpu` left it (the second reader's
    cache: rows carry the GPU that read them, as a write-back depends on the L2's size), else profiled
    now and cached under `out`."""
    import os

    import pandas as pd

    import l2attr
    from l2attr import atomic

    cache = out / "ncu" / f"{model}-write-back.csv"
    found = [pd.read_csv(f) for f in (d / "ncu" / cache.name for d in (out, *skip)) if f.is_file()]
    found = [f[f["gpu"] == gpu] for f in found if "gpu" in f.columns]
    have = (pd.concat(found, ignore_index=True).drop_duplicates(["step", "node"]) if found
            else pd.DataFrame(columns=["step"]))
    need = [n for n in wanted if n not in set(have["step"])]
    for at in range(0, len(need), NCU_CHUNK):      # cached chunk by chunk: a cut-off call keeps what it read
        chunk = need[at:at + NCU_CHUNK]
        t0 = time.perf_counter()
        os.environ["HF_GRID_ONLY"] = ",".join(chunk)
        read = l2attr.write_back(f"{Path(__file__).resolve()}:ncu_steps_{model}", out=out / "ncu" / model,
                                 replays=1, log=lambda s: None)      # several steps: a table per step
        fresh = pd.concat([d.assign(step=name, gpu=gpu) for name, d in read.items()], ignore_index=True)
        have = pd.concat([have, fresh], ignore_index=True) if len(have) else fresh
        cache.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(cache, have.to_csv(index=False))
        print(f"{model}: ncu write-back of {len(chunk)} steps in {time.perf_counter() - t0:.1f} s", flush=True)
    return {name: g.drop(columns=["step", "gpu"]).reset_index(drop=True) for name, g in have.groupby("step")}


def measure(out: Path, models: list[str], only: list[str] | None, repeats: int, ncu: bool,
            skip: list[Path] = ()) -> dict[str, Any]:
    """Measure every wanted step not finished yet; returns where the time went (for CALLS)."""
    import torch

    import l2attr

    have, here = finished([out, *skip]), torch.cuda.get_device_name()
    refused = one_gpu(have, here)
    if refused:
        raise SystemExit(f"hf_grid: error: {refused}")
    spent: dict[str, Any] = {"gpu": here, "models": {}}
    for model in models:
        wanted = [c for c in configs(model) if (not only or c[0] in only) and c[0] not in have]
        if not wanted:
            continue
        t_ncu = time.perf_counter()
        write_back = write_back_of(model, [c[0] for c in wanted], out, list(skip), here) if ncu else {}
        t_steps = time.perf_counter()
        m, cfg = build(model)
        spent["models"][model] = {"ncu_s": round(t_steps - t_ncu, 1), "steps": [c[0] for c in wanted]}
        for name, phase, b, n in wanted:
            t0 = time.perf_counter()
            fn, args = step_of(m, cfg, phase, b, n)
            ans = l2attr.step(fn, *args, name=name, repeats=repeats, out=out, edges=0,
                              write_back=write_back.get(name), log=lambda s: None,
                              facts={"series": "hf-grid", "model": model, "phase": phase, "batch": b, "tokens": n})
            print(f"{name}: wall {time.perf_counter() - t0:.1f} s | {ans.headline()}", flush=True)
        spent["models"][model]["steps_s"] = round(time.perf_counter() - t_steps, 1)
        del m
    return spent


CALLS = "grid_calls.jsonl"    # one line per call of the grid that measured something: its wall time


def record_call(out: Path, spent: dict[str, Any], wall_s: float, argv: list[str]) -> None:
    """Add this call's line to <out>/CALLS (rewritten whole, atomically): the grid's wall time is
    a record beside its runs, not a number copied from a log."""
    import datetime as dt
    import json

    from l2attr import atomic

    if not spent["models"]:
        return
    line = {"finished_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join(["hf_grid.py", *argv]), "wall_s": round(wall_s, 1), **spent}
    path = out / CALLS
    before = path.read_text() if path.is_file() else ""
    out.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, before + json.dumps(line) + "\n")


def wall_sentence(folder: Path, rows: int) -> str:
    """What the grid's calls under `folder` took, from their CALLS lines; the `rows` no line covers
    (a call cut off before its end writes none) are counted, not hidden."""
    import json

    lines = [json.loads(x) for f in sorted(folder.rglob(CALLS)) for x in f.read_text().splitlines() if x.strip()]
    if not lines:
        return f"No wall-time record under this folder ({CALLS}): these runs were measured before the grid kept one."
    parts = []
    for c in lines:
        ms = c["models"].values()
        n = sum(len(m["steps"]) for m in ms)
        parts.append(f"{c['wall_s']:.1f} s on {c['gpu']} for {n} step(s) (ncu reading "
                     f"{sum(m['ncu_s'] for m in ms):.1f} s, steps {sum(m.get('steps_s', 0.0) for m in ms):.1f} s)")
    n_all = sum(len(m["steps"]) for c in lines for m in c["models"].values())
    head = (f"Wall time ({CALLS}): one call of the grid measured these {n_all} steps: " if len(lines) == 1
            else f"Wall time ({CALLS}): {len(lines)} calls of the grid measured these {n_all} steps, "
                 f"{sum(c['wall_s'] for c in lines):.1f} s in all: ")
    left = f" {rows - n_all} of the page's {rows} rows were measured by calls with no record." if rows > n_all else ""
    return head + "; ".join(parts) + "." + left


PAGE = "README.md"
# kernel names of scaled-dot-product attention (cuDNN, flash, memory-efficient)
ATTENTION = r"sdpa|attention|fmha|flash"


def checks(a: Any) -> dict[str, str]:
    """Two cells per step for issue 36's must-show, from the run: whether the matched reading (share
    of kernel time) lies inside its clean/dirty bracket within intervals (the kernels' own rule,
    analysis/step_reading.py out_of_bracket, on the step's shares), and the attention kernels the
    clean arm calls slower by reuse, then how many of those the matched arm still calls slower, and
    any other attention kernel only the matched arm calls slower."""
    import pandas as pd

    from l2attr.analysis.step_reading import MATCHED, out_of_bracket

    k = a.kernels
    m = a.matched.share if a.matched is not None else None
    (clo, _), (_, dhi) = a.share_ci, a.share_dirty_ci
    step = pd.DataFrame({f"{MATCHED}_lo": [m.lo if m else 0.0], f"{MATCHED}_hi": [m.hi if m else 0.0],
                         "cold_lo": [clo], "dirty_hi": [dhi]})
    inside = "n/a" if m is None else ("no" if bool(out_of_bracket(step).iloc[0]) else "yes")
    if "judgement" not in k or "clean_judgement" not in k or m is None:
        return {"inside": inside, "attention": "n/a"}
    att = k[k["kernel"].astype(str).str.contains(ATTENTION, case=False, regex=True)]
    clean_slow = att[att["clean_judgement"] == "slower"]
    still = int((clean_slow["judgement"] == "slower").sum())
    other = int(((att["judgement"] == "slower") & (att["clean_judgement"] != "slower")).sum())
    return {"inside": inside, "attention": f"{len(clean_slow)} of {len(att)} clean -> {still} matched"
                                            + (f" (+{other} slower only when matched)" if other else "")}


def write_page(folder: Path) -> str:
    """The grid's page (Markdown) from every grid run below `folder`: one row per configuration."""
    from l2attr.analysis.step import StepAnswer
    from l2attr.analysis.step_reading import STUDY, grid_rows, grid_sentence

    runs = sorted(p.parent for p in folder.rglob("manifest.json") if "hf-grid" in p.read_text())
    answers = [StepAnswer.from_run(r) for r in runs]
    rows = grid_rows(answers)
    extra = [checks(a) for a in answers]
    rows["inside"], rows["attention"] = [e["inside"] for e in extra], [e["attention"] for e in extra]
    cols = ["step", "eager_us", "eager_share", "activations_share", "versus_study", "replay_share",
            "kernel_share", "clean_share", "dirty_share", "inside", "out_of_bracket", "attention"]
    head = ["step", "eager step (µs)", "matched share of the eager step", "activations' share of the eager step",
            "activations against the study", "matched share of the replay", "matched share of kernel time",
            "clean (kernel time)", "dirty (kernel time)", "matched inside its bracket (intervals)",
            "kernels outside their bracket", "attention kernels slower by reuse"]
    gpus = sorted({(a.manifest.get("gpu") or {}).get("name") or "an unnamed GPU" for a in answers})
    lines = [f"# The study's question on HuggingFace LLM steps ({', '.join(gpus) or 'no runs yet'})", "",
             f"The study: {STUDY}. Each row is one step measured by `l2attr.step` with the write-back-matched "
             "cold arm (docs/step-method.md); shares are medians with 95 % bootstrap intervals; the judgement "
             "against 0.65 % uses the activations' interval of the eager step's share. The last column counts the "
             "attention kernels (names matching `" + ATTENTION + "`) the clean cold arm calls slower by reuse, "
             "then how many of those the write-back-matched arm still calls slower.", "",
             grid_sentence(answers), "", wall_sentence(folder, len(runs)), "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows.to_dict("records")]
    lines += ["", f"Made by `python examples/steps/hf_grid.py --page {folder}` from the runs below this folder "
              f"({len(runs)} runs; the command that measured them is in each manifest).", ""]
    text = "\n".join(lines)
    (folder / PAGE).write_text(text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("runs/hf-grid"))
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--only", nargs="+", default=None)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--no-ncu", action="store_true", help="no write-back reading: the answer is the bracket")
    ap.add_argument("--done", nargs="*", type=Path, default=[], help="folders of finished runs: their steps are skipped")
    ap.add_argument("--page", type=Path, help="write the grid's page from the runs under this folder, and stop")
    a = ap.parse_args(argv)
    if a.page:
        print(write_page(a.page))
        return 0
    t0 = time.perf_counter()
    spent = measure(a.out, a.models, a.only, a.repeats, not a.no_ncu, a.done)
    wall = time.perf_counter() - t0
    record_call(a.out, spent, wall, list(sys.argv[1:] if argv is None else argv))
    print(f"grid wall {wall:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
