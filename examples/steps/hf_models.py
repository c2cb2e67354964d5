"""The models of the study's grid: HuggingFace `transformers` decoders at the shapes people serve.

Random weights from a config (nothing downloaded), bf16, SDPA attention. Each model is measured at a
few depths (its layers cut) and its full-depth share is given by the per-layer model of the grid's
page; the shapes are the published configs' (hidden size, FFN, heads, KV heads, vocabulary, experts).
The toy control is the grid's former 4-layer, hidden-2048 Llama.

The MoE model runs its experts with transformers' `batched_mm` implementation: capture-safe (no host
sync, no data-dependent shape). transformers 5.17's default, `grouped_mm`, is not captured here:
its offsets go through torch._grouped_mm, which transformers itself says fails under CUDA graphs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEVICE = "cuda"        # tools/check_grid_capture.py builds the same steps on the CPU


@dataclass(frozen=True)
class Shape:
    """One model's published shape; `layers` is its full depth."""

    family: str                 # the transformers config class's stem: Llama, Qwen2, Olmoe
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    layers: int
    vocab: int
    experts: int = 0
    active: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def facts(self, layers: int) -> dict[str, Any]:
        """What a run's manifest records of the model (step.facts): the page reads the shape from the run."""
        return {"hidden_size": self.hidden, "intermediate_size": self.ffn, "heads": self.heads,
                "kv_heads": self.kv_heads, "layers": layers, "full_layers": self.layers, "vocab": self.vocab,
                "experts": self.experts, "active_experts": self.active, "family": self.family}


MODELS: dict[str, Shape] = {
    "llama3-8b": Shape("Llama", 4096, 14336, 32, 8, 32, 128256, extra={"rope_theta": 500000.0}),
    "qwen2.5-7b": Shape("Qwen2", 3584, 18944, 28, 4, 28, 152064, extra={"rope_theta": 1000000.0}),
    "llama2-7b": Shape("Llama", 4096, 11008, 32, 32, 32, 32000),
    "olmoe-1b-7b": Shape("Olmoe", 2048, 1024, 16, 16, 16, 50304, experts=64, active=8),
    "toy-llama": Shape("Llama", 2048, 5632, 16, 4, 4, 32000),
}


def eager_masks_under_capture() -> None:
    """Let transformers build the eager program's attention inside a CUDA-graph capture.

    transformers asks `is_cuda_stream_capturing()` (through `is_tracing`) before it skips the causal
    mask: while a stream captures, a prefill builds an explicit mask, calls SDPA with
    `is_causal=False` and, for GQA, repeats K and V to every query head, where the eager call passes
    no mask, `is_causal=True` and `enable_gqa=True` (read in transformers 5.17). The captured graph
    would then be another program than the eager step it is divided by. These steps pass no padding
    mask, so the eager decision needs no host sync; the answer's program check (the call's kernels
    against the graph's) holds the two to each other."""
    import transformers.utils.import_utils as iu

    iu.is_cuda_stream_capturing = lambda: False


def build(model: str, layers: int, max_tokens: int) -> tuple[Any, Any]:
    """(model, config) at `layers` layers, bf16, on DEVICE, seeded."""
    import torch
    import transformers as tf

    eager_masks_under_capture()
    s = MODELS[model]
    common = dict(hidden_size=s.hidden, intermediate_size=s.ffn, num_hidden_layers=layers,
                  num_attention_heads=s.heads, num_key_value_heads=s.kv_heads, vocab_size=s.vocab,
                  max_position_embeddings=max_tokens + 1, **s.extra)
    if s.family == "Olmoe":
        cfg = tf.OlmoeConfig(**common, num_experts=s.experts, num_experts_per_tok=s.active,
                             pad_token_id=0, bos_token_id=0, eos_token_id=0)
        cls = tf.OlmoeForCausalLM
    else:
        cfg = getattr(tf, f"{s.family}Config")(**common)
        cls = getattr(tf, f"{s.family}ForCausalLM")
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(0)
    with torch.device(DEVICE):
        m = cls(cfg).to(torch.bfloat16).eval()
    if s.experts:
        m.set_experts_implementation("batched_mm")
    return m, cfg


COMPILE = {"fullgraph": True, "dynamic": False}      # torch.compile's default mode (Inductor, no CUDA-graph trees)


def step_of(m: Any, cfg: Any, phase: str, batch: int, tokens: int, compiled: bool = False) -> tuple[Any, tuple]:
    """(fn, args): one step's call with its static inputs; the cache is made here, filled by the call.

    `compiled`: the model's forward under torch.compile(**COMPILE), compiled and autotuned by the two
    calls below (under inference_mode, never inside a capture). The default mode launches Inductor's
    Triton kernels and the library calls it leaves on torch's current stream, so a capture of a call
    records every one as a kernel node (examples/steps/compiled_decoder.py says why not
    "reduce-overhead")."""
    import torch
    import transformers as tf

    cache = tf.StaticCache(config=cfg, max_cache_len=tokens)
    t = 1 if phase == "decode" else tokens
    ids = torch.randint(0, 1000, (batch, t), device=DEVICE)
    pos = torch.arange(tokens - t, tokens, device=DEVICE)
    fwd = torch.compile(m, **COMPILE) if compiled else m

    def call(ids: Any, pos: Any) -> Any:
        with torch.inference_mode():
            return fwd(input_ids=ids, past_key_values=cache, cache_position=pos, use_cache=True,
                       logits_to_keep=1).logits

    call(ids, pos)                    # the cache's first use allocates it, outside any capture
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    # transformers' StaticCache layers write at a device counter of their own and advance it on every
    # call, whatever cache_position says: replayed as is, the step walks off the cache's end (a
    # device-side assert that ends the CUDA context). Each call sets it back, so every call is the same.
    counters = [c for c in (getattr(layer, "cumulative_length", None) for layer in getattr(cache, "layers", []))
                if isinstance(c, torch.Tensor)]

    def step(ids: Any, pos: Any) -> Any:
        with torch.inference_mode():      # the counters became inference tensors on their first use
            for c in counters:
                c.fill_(tokens - t)
        return call(ids, pos)

    if compiled:
        step(ids, pos)                    # the compiled program's second call: its guards settle, no recompile after
        if DEVICE == "cuda":
            torch.cuda.synchronize()
    return step, (ids, pos)
