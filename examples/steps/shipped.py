"""The shipped step functions `l2attr step` is measured on (issue 25), built lazily by name.

    from shipped import steps
    for name, (fn, args, facts) in steps(["bert-layer-fastpath"]).items():
        l2attr.step(fn, *args, name=name, facts=facts)

Each model file under examples/steps declares its steps as data (`STEPS`: name -> facts) with no
torch at import, and builds them in `build(names)`; so this module, the names and the facts can be
read on a CPU (tests/test_shipped_steps.py), and asking for one step builds that model only.
Every step function is capturable into a CUDA graph: fixed shapes, inputs made once at build
time, no host sync, warmed up (compiled, autotuned, lazily allocated buffers made) before it is
returned, deterministic, and meant to be called under `torch.inference_mode()`.

    bert_layer        BERT-base encoder layer, fp16, batch 8 x 512 tokens: MHA fast path on / off
    compiled_decoder  the Llama-shaped layer of llama_layer.py under torch.compile (default mode)
    decode_32         32 such layers (independent weights), eager decode at batch 8, KV 4K
    dlrm_rungs        the DLRM step with each ladder rung's artifact consumer as its EmbeddingBag
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
MODULES = ("bert_layer", "compiled_decoder", "decode_32", "dlrm_rungs")   # files under examples/steps


def _module(name: str) -> Any:
    """A model file of this folder, imported by its own name (the files import each other so)."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    return importlib.import_module(name)


def declared() -> dict[str, tuple[str, dict[str, Any]]]:
    """name -> (model file, facts) of every shipped step, in MODULES order; imports no torch."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in MODULES:
        for name, facts in _module(m).STEPS.items():
            if name in out:
                raise ValueError(f"step {name!r} is declared by both {out[name][0]} and {m}")
            out[name] = (m, dict(facts))
    return out


def select(only: list[str] | None) -> dict[str, tuple[str, dict[str, Any]]]:
    table = declared()
    if only is None:
        return table
    unknown = [n for n in only if n not in table]
    if unknown:
        from l2attr.errors import UserError

        raise UserError(f"unknown shipped step {', '.join(map(repr, unknown))}; valid: {', '.join(table)}")
    return {n: table[n] for n in table if n in only}


def steps(only: list[str] | None = None) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]:
    """name -> (fn, args, facts): call `fn(*args)` under torch.inference_mode(). Builds only the
    model files of the steps asked for (each file caches its model, so asking twice is cheap)."""
    chosen = select(only)
    by_module: dict[str, list[str]] = {}
    for name, (m, _) in chosen.items():
        by_module.setdefault(m, []).append(name)
    built: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {}
    for m, names in by_module.items():
        made = _module(m).build(names)
        missing = [n for n in names if n not in made]
        if missing:
            raise RuntimeError(f"{m}.build did not build {', '.join(missing)}")
        built.update({n: made[n] for n in names})
    return {n: (*built[n], facts) for n, (_, facts) in chosen.items()}


def checks(only: list[str] | None = None) -> dict[str, Callable[[], list[tuple[bool, str]]]]:
    """model file -> its reference check (on the GPU) for the steps asked for; a check returns
    (passed, line) pairs: what it compared and by how much."""
    mods = dict.fromkeys(m for m, _ in select(only).values())
    return {m: _module(m).check for m in mods}
