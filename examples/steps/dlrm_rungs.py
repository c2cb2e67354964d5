"""The DLRM inference step with each ladder rung's artifact consumer in place of torch's EmbeddingBag.

The paper's pipeline claim (up to 1.77x for the whole DLRM inference step on A100) is a claim
about this step: bottom MLP, 12 sum-pooled EmbeddingBags at the artifact's shape (12 tables x 500K
rows x 128 fp32, batch 2048, pooling 150, the reuse_medium indices of l2attr's workload builder),
pairwise interaction, top MLP (dlrm_step.py's model). One step per rung the ladder declares
(l2attr/dlrm/declare.py RUNGS: baseline, OptMT, RPF+OptMT, L2P+OptMT, RPF+L2P+OptMT) with that
rung's consumer of the `artifact` family, compiled and launched as the ladder does
(dlrm/measure/kernels.py VariantKernels: same options, grid, block and arguments); and the torch
reference row (`dlrm-rung-torch`, F.embedding_bag) on the very same tables, indices and MLPs.

Layout as the ladder's own GPU side (dlrm/measure/gpu.py): the tables in one (12, 500K, 128)
tensor drawn uniform in [-1, 1) from a generator seeded with the config's seed; the index stream
followed by one spare element (the RPF consumer may read one index past a call's last bag);
offsets at multiples of the pooling; the hot set (the 60K hottest rows) for the pins.

The pin rungs run each table's pin kernel right before its consumer on the same stream, inside
the step: the pin is charged to the step. (The ladder syncs the stream between them to time each
apart; stream order alone keeps the pin before its consumer, and a step has no host syncs.) The
CuPy launches go to torch's current stream (cupy.cuda.ExternalStream), so a CUDA-graph capture of
the step records them. Pins leave evict-last lines behind that outlive the step and a plain L2
flush; `reset_pins()` (cudaCtxResetPersistingL2Cache) puts them back to normal priority, and a
measurement should call it between rungs, as the ladder does before every repeat.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

from dlrm_step import BATCH, DIM, HOT, POOLING, ROWS, TABLES
from l2attr.dlrm.declare import RUNGS, TORCH
from l2attr.vocab import Family

FAMILY = Family.ARTIFACT
DTYPE = "fp32"
SERIES = "dlrm-rungs"


def step_name(rung: str) -> str:
    return "dlrm-rung-" + rung.replace("_", "-")


STEPS = {step_name(r.name): {"series": SERIES, "rung": r.name, "label": r.label} for r in (*RUNGS, TORCH)}
RUNG_OF = {name: facts["rung"] for name, facts in STEPS.items()}
TOLERANCE_STEP = 1e-4   # relative error of a rung's step output against the torch step's (fp32 MLPs)


@lru_cache(maxsize=None)
def _state() -> dict[str, Any]:
    """Made once, as plain tensors even when the caller is in inference mode (inference tensors
    could not be changed in place, copied or cast outside it later)."""
    import torch

    with torch.inference_mode(False):
        return _make()


def _make() -> dict[str, Any]:
    import numpy as np
    import torch

    from l2attr.dlrm.config import WorkloadConfig
    from l2attr.dlrm.workload import build_workload

    cfg = WorkloadConfig(tables=TABLES, rows=ROWS, dim=DIM, dtype=DTYPE, batch_size=BATCH, pooling=POOLING,
                         batches=1, warmup_batches=0, hot_rows=HOT)
    w = build_workload(cfg, profile="reuse_medium")
    g = torch.Generator(device="cuda").manual_seed(cfg.seed)
    weights = torch.empty((TABLES, ROWS, DIM), dtype=torch.float32, device="cuda")
    for t in range(TABLES):
        weights[t].uniform_(-1.0, 1.0, generator=g)
    flat = np.ascontiguousarray(w.indices[0]).reshape(-1)             # (tables x batch x pooling,)
    buf = torch.from_numpy(np.concatenate([flat, flat[-1:]])).cuda()   # one spare id after the last
    n = cfg.lookups_per_batch
    torch.manual_seed(0)

    def mlp(sizes: list[int]) -> Any:
        layers: list[Any] = []
        for a, b in zip(sizes, sizes[1:]):
            layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
        return torch.nn.Sequential(*layers[:-1]).cuda().eval().requires_grad_(False)

    pairs = (TABLES + 1) * TABLES // 2
    return {"weights": weights, "idx": [buf[t * n:(t + 1) * n] for t in range(TABLES)],
            "hot": torch.from_numpy(np.ascontiguousarray(w.hot)).cuda(),
            "offsets": torch.arange(BATCH, dtype=torch.int64, device="cuda") * POOLING,
            "dense": torch.randn(BATCH, 13, device="cuda"), "bottom": mlp([13, 512, 256, DIM]),
            "top": mlp([DIM + pairs, 1024, 1024, 512, 256, 1]),
            "tri": torch.triu_indices(TABLES + 1, TABLES + 1, offset=1, device="cuda")}


@lru_cache(maxsize=None)
def _kernels(rung: str) -> Any:
    """The rung's compiled artifact kernels (consumer, and pin where the rung pins), as the ladder builds them."""
    from l2attr.dlrm.declare import variant
    from l2attr.dlrm.measure.kernels import LaunchShape, VariantKernels

    return VariantKernels(variant(FAMILY, rung), DTYPE, LaunchShape())


def _embed(rung: str, outs: Any) -> list[Any]:
    """The 12 pooled bags [batch, dim] of one step: torch's EmbeddingBag, or the rung's kernels
    writing into `outs` (12, batch, dim), pin first where the rung pins."""
    import torch

    s = _state()
    w, idx, offsets = s["weights"], s["idx"], s["offsets"]
    if rung == TORCH.name:
        import torch.nn.functional as F

        return [F.embedding_bag(idx[t], w[t], offsets, mode="sum") for t in range(TABLES)]
    import cupy

    k = _kernels(rung)
    stream = torch.cuda.current_stream()        # the capture's stream while a capture runs
    with cupy.cuda.ExternalStream(stream.cuda_stream, stream.device_index):
        for t in range(TABLES):
            if k.pin is not None:
                k.launch_pin(w[t], s["hot"])
            k.launch_consumer(w[t], idx[t], offsets, outs[t])
    return list(outs.unbind(0))


def _step(rung: str) -> Callable[[], Any]:
    import torch

    s = _state()
    outs = None if rung == TORCH.name else torch.empty((TABLES, BATCH, DIM), dtype=torch.float32, device="cuda")
    bottom, top, tri, dense = s["bottom"], s["top"], s["tri"], s["dense"]

    def step() -> Any:
        z = bottom(dense)
        feats = torch.stack([z, *_embed(rung, outs)], dim=1)                  # [B, 13, 128]
        inter = torch.bmm(feats, feats.transpose(1, 2))[:, tri[0], tri[1]]
        return top(torch.cat([z, inter], dim=1))

    return step


@lru_cache(maxsize=None)
def _built(name: str) -> Callable[[], Any]:
    import torch

    fn = _step(RUNG_OF[name])
    with torch.inference_mode():   # compiles the kernels and makes the consumer's buffers outside any capture
        fn()
    torch.cuda.synchronize()
    return fn


def build(names: list[str]) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    return {n: (_built(n), ()) for n in names}


def reset_pins() -> bool:
    """Evict-last lines back to normal priority (what the pins left); False where it cannot run."""
    from l2attr.gpu.runtime import reset_persisting_l2

    return reset_persisting_l2()


def check() -> list[tuple[bool, str]]:
    """Every rung's 12 bags against F.embedding_bag(mode='sum') in float64 on the same tables,
    indices and offsets (outputs poisoned with NaN first, so an unwritten element fails), and every
    rung's whole step against the torch step's."""
    import torch
    import torch.nn.functional as F

    from l2attr.dlrm.measure.check import TOLERANCE, relative_error

    s = _state()
    out: list[tuple[bool, str]] = []
    rungs = [r.name for r in RUNGS]
    with torch.inference_mode():
        bags = {}
        for r in rungs:
            bags[r] = torch.full((TABLES, BATCH, DIM), float("nan"), device="cuda")
            _embed(r, bags[r])
        worst = dict.fromkeys(rungs, 0.0)
        for t in range(TABLES):
            ref = F.embedding_bag(s["idx"][t], s["weights"][t].double(), s["offsets"], mode="sum")
            for r in rungs:
                worst[r] = max(worst[r], relative_error(bags[r][t], ref))
            del ref
        for r in rungs:
            out.append((worst[r] <= TOLERANCE[DTYPE], f"{step_name(r)}: worst table's relative error vs "
                        f"F.embedding_bag (float64) {worst[r]:.2e} (tolerance {TOLERANCE[DTYPE]:g})"))
        want = _built(step_name(TORCH.name))()
        for r in rungs:
            e = relative_error(_built(step_name(r))(), want)
            out.append((e <= TOLERANCE_STEP, f"{step_name(r)}: step output vs the torch step's: relative "
                        f"error {e:.2e} (tolerance {TOLERANCE_STEP:g})"))
    torch.cuda.synchronize()
    reset = reset_pins()
    out.append((True, f"dlrm-rungs: evict-last lines reset after the check: {reset}"))
    return out
