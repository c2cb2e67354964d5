"""Compile every variant and check it against torch.nn.functional.embedding_bag before anything is
timed; then, per profile, check its first call on the profile's real workload.

Why one module: these are the run's checks before any cell is timed, each a comparison with the
same float64 reference; the ladder, the sweeps and the benchmarks run them alike.

Fresh random data each check (never zeros), bags of every awkward length (empty, shorter than
the RPF depth, odd), a poisoned (NaN) output so an unwritten element cannot pass, and a float64
reference. Index buffers carry one spare element after the last index, as every buffer l2attr
times does (the artifact's RPF may read it). A variant that misses the tolerance stops the run
with its name and its error.

The verdicts kept for replay passes (CheckMemo, `ladder --checks-memo FILE`): Nsight Compute's
application replay reruns the whole child once per pass (three for the `l2` set), and every rerun
checked every variant against torch again, a second or so of each pass under ncu
(docs/layer-b.md#checks-memo). The passes of one ncu job run the same command on the same GPU with
the same sources, so the first pass's verdicts are theirs: it writes them to the file as it makes
them, and a later process whose key matches takes them instead of checking again. The key is all
a verdict depends on, as the run's manifest records it: the source digest (l2attr, kernels/,
metrics/), the GPU's UUID, the workload and the ladder's options. A different key, a damaged
file, a verdict that is not there: the check runs as always. The manifest's `checks_memo` names
the file and the run each kind of verdict was taken from.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from l2attr.atomic import write_json

from l2attr.dlrm.config import WorkloadConfig
from l2attr.dlrm.declare import Variant
from l2attr.dlrm.measure.kernels import VariantKernels, with_index_slack
from l2attr.errors import UserError
from l2attr.safe_read import not_a_file, read_json_limited

TOLERANCE = {"fp32": 1e-5, "fp16": 2e-3, "bf16": 1e-2}


def relative_error(out: Any, ref: Any) -> float:
    import torch

    out64, ref64 = out.double(), ref.double()
    if not torch.isfinite(out64).all():
        return float("inf")
    return float(torch.linalg.vector_norm(out64 - ref64) / torch.linalg.vector_norm(ref64))


def _random_case(torch: Any, dtype: Any, rows: int, dim: int, bags: int, seed: int,
                 device: str = "cuda") -> tuple[Any, Any, Any]:
    g = torch.Generator(device=device).manual_seed(seed)
    weight = (torch.rand(rows, dim, generator=g, device=device) * 2 - 1).to(dtype)
    lengths = torch.randint(0, 12, (bags,), generator=g, device=device)
    lengths[:6] = torch.tensor([0, 1, 2, 3, 0, 5], device=device)  # empty, < depth, odd, trailing
    lengths[-1] = 3
    offsets = torch.zeros(bags, dtype=torch.int64, device=device)
    offsets[1:] = torch.cumsum(lengths, 0)[:-1]
    indices = with_index_slack(torch.randint(0, rows, (int(lengths.sum()),), generator=g, device=device))
    return weight, indices, offsets


CASES = (("sum", None, False), ("mean", None, False), ("sum", 7, False), ("sum", None, True))


def check_variant(kernels: VariantKernels, dtype_name: str, dim: int, seed: int) -> dict[str, float]:
    """Sum and mean, padding_idx, per-sample weights, on fresh data; returns the errors measured."""
    import torch
    import torch.nn.functional as F

    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype_name]
    errors: dict[str, float] = {}
    for case, (mode, padding, weighted) in enumerate(CASES):
        weight, indices, offsets = _random_case(torch, dtype, rows=5000, dim=dim, bags=3000,
                                                seed=seed * 101 + case)
        if padding is not None:
            indices[::5] = padding
        psw = None
        if weighted:
            g = torch.Generator(device="cuda").manual_seed(seed * 7 + case)
            psw = (torch.rand(indices.numel(), generator=g, device="cuda") + 0.5)
        hot = torch.unique(indices)[:1000].contiguous()
        out = torch.full((offsets.numel(), dim), float("nan"), dtype=dtype, device="cuda")
        if kernels.pin is not None:
            kernels.launch_pin(weight, hot)
        kernel_psw = None if psw is None else psw.to(kernels.per_sample_weights_dtype(dtype))
        kernels.launch_consumer(weight, indices, offsets, out, mean=(mode == "mean"),
                                per_sample_weights=kernel_psw,
                                padding_idx=-1 if padding is None else padding)
        torch.cuda.synchronize()
        ref_psw = None if kernel_psw is None else kernel_psw.double()
        ref = F.embedding_bag(indices, weight.double(), offsets, mode=mode,
                              padding_idx=padding, per_sample_weights=ref_psw)
        key = f"{mode}{'' if padding is None else '_padding'}{'_weighted' if weighted else ''}"
        errors[key] = relative_error(out, ref)
    worst = max(errors.values())
    if not worst <= TOLERANCE[dtype_name]:
        raise UserError(f"variant {kernels.variant.label} is wrong: relative error {worst:.3g} "
                        f"> {TOLERANCE[dtype_name]:g} vs torch.nn.functional.embedding_bag "
                        f"({', '.join(f'{k}={v:.3g}' for k, v in errors.items())})")
    return errors


# -- verdicts kept for replay passes ---------------------------------------------------------------
CHECKS = "checks"                  # compile_and_check's verdicts: variant id -> case -> error
REAL = "real_data_checks"          # "variant id:profile" -> error on the real workload


def memo_key(manifest: dict[str, Any]) -> str | None:
    """The hash of what a verdict depends on, or None when the manifest lacks the source digest or
    the GPU's UUID (then nothing is taken or kept)."""
    from l2attr.manifest_model import recorded, typed

    facts = typed(manifest)
    digest = (facts.versions or {}).get("source_digest")
    uuid = facts.gpu.uuid if facts.gpu is not None else None
    if not digest or not uuid:
        return None
    what = {"source_digest": digest, "gpu": uuid, "config": recorded(manifest, "config"),
            "measure": recorded(manifest, "measure")}    # hashed as recorded
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:16]


MEMO_LIMIT = 64 << 20     # bytes: a memo holds one verdict per variant, far below this
MEMO_DEPTH = 16           # levels: a memo nests key -> kind -> variant -> verdict


@dataclass
class CheckMemo:
    """One run's view of a memo file: what it held under this run's key, and what was taken."""

    path: Path
    key: str | None
    run: str                                          # this run's folder name
    held: dict[str, Any] = field(default_factory=dict)
    taken: dict[str, str] = field(default_factory=dict)   # CHECKS / REAL -> the run it came from

    @classmethod
    def open(cls, path: Path, manifest: dict[str, Any], run: str) -> "CheckMemo":
        key = memo_key(manifest)
        held: dict[str, Any] = {}
        if key is not None and not_a_file(path) != "missing":
            try:     # bounded, never blocking, depth-guarded: a damaged memo is nothing kept
                data = read_json_limited(path, MEMO_LIMIT, MEMO_DEPTH)
                held = data if isinstance(data, dict) and data.get("key") == key else {}
            except UserError:
                held = {}
                if not_a_file(path) is not None:   # a FIFO, a device, a folder: never written over
                    key = None
        return cls(path, key, run, held)

    def checks(self, variant_ids: list[str]) -> dict[str, Any] | None:
        """The kept verdicts of exactly these variants, or None (check them)."""
        kept = self.held.get(CHECKS)
        if not isinstance(kept, dict) or sorted(kept) != sorted(variant_ids):
            return None
        self.taken[CHECKS] = str(self.held.get("run", ""))
        return kept

    def real(self, names: list[str]) -> dict[str, float] | None:
        """The kept real-workload errors of all these names, or None (check them)."""
        kept = self.held.get(REAL)
        if not isinstance(kept, dict) or not all(isinstance(kept.get(n), (int, float)) for n in names):
            return None
        self.taken[REAL] = str(self.held.get("run", ""))
        return {n: float(kept[n]) for n in names}

    def keep(self, what: str, verdicts: dict[str, Any]) -> None:
        """Add this run's verdicts to the file (atomically); nothing without a key."""
        if self.key is None:
            return
        if self.held.get("key") != self.key:
            self.held = {"key": self.key, "run": self.run}
        self.held[what] = {**(self.held.get(what) or {}), **verdicts}
        write_json(self.path, self.held)

    def record(self) -> dict[str, Any]:
        """The manifest's `checks_memo`: the file, its key, and the run each kind of verdict came
        from (absent: this run checked)."""
        return {"file": str(self.path), "key": self.key, "taken_from": dict(self.taken)}


# -- the real workload's check -------------------------------------------------------------------
# Every variant's first call (table 0, first batch) on a profile's real workload against
# torch.nn.functional.embedding_bag in float64, poisoned output. The reference is the same for
# every variant of a profile, so the run makes it once (`reference`).

def real_data_reference(gpu: Any, indices: Any) -> Any:
    """torch.nn.functional.embedding_bag in float64 on the real workload's first call (table 0,
    first batch): what check_real_data compares every variant of a profile with (made once)."""
    import torch.nn.functional as F

    return F.embedding_bag(indices[0, 0], gpu.weights[0].double(), gpu.offsets, mode="sum")


def check_real_data(gpu: Any, kernels: Any, indices: Any, hot: Any,
                    reference: Callable[[], Any] | None = None) -> float:
    """One call on the real workload (table 0, first batch) against torch, poisoned output
    (`reference`: returns real_data_reference of the same indices, made once for all variants)."""
    if kernels is None:
        return 0.0
    g = gpu
    g.out.fill_(float("nan"))
    if kernels.pin is not None:
        kernels.launch_pin(g.weights[0], hot)
    kernels.launch_consumer(g.weights[0], indices[0, 0], g.offsets, g.out)
    g.torch.cuda.synchronize()
    return relative_error(g.out, real_data_reference(g, indices) if reference is None else reference())


def window_for(gpu: Any, variants: list[Variant], indices: Any, hot: Any) -> Any:
    """The APW+OptMT rung's remapped tables and stream window for this workload (None without it)."""
    if not any(v.rung.window for v in variants):
        return None
    from l2attr.gpu.persisting import device_limits
    from l2attr.dlrm.measure.residency import StreamWindow, build_remap

    remap = build_remap(gpu.torch, gpu.weights, hot, indices)
    return StreamWindow(gpu.torch, gpu.cupy, remap, int(hot.numel()), 1.0,
                        device_limits().persisting_max_bytes)


def check_window_data(gpu: Any, kernels: Any, indices: Any, window: Any,
                      reference: Callable[[], Any] | None = None) -> float:
    """One call through the remapped table and indices, window set, against torch on the originals."""
    if kernels is None:
        return 0.0
    g = gpu
    with window.active():
        g.out.fill_(float("nan"))
        window.set(0)
        kernels.launch_consumer(window.remap.weights[0], window.remap.indices[0, 0], g.offsets, g.out)
        g.stream_sync()
    return relative_error(g.out, real_data_reference(g, indices) if reference is None else reference())


# -- compile and check every variant -------------------------------------------------------------

def variant_id(v: Variant) -> str:
    """The manifest's key for a variant: family/rung/pin."""
    return "/".join(v.key)


def run_specs(cfg: WorkloadConfig, opts: Any) -> list[Any]:
    """Every kernel the variants of `opts` compile (their KernelSpecs)."""
    from l2attr.dlrm import compile as kc

    fast = kc.FastOptions(opts.shape.fast_unroll, opts.shape.fast_load, opts.shape.fast_maxrregcount)
    return [spec for v in opts.all_variants if not v.is_reference
            for spec in kc.specs_of(v, cfg.dtype, opts.maxrregcount, opts.rpf_depth, fast)]


def start_compile(cfg: WorkloadConfig, opts: Any) -> Any:
    """kc.precompile of the run's kernels on a background thread (a Future): NVRTC releases the
    GIL, so it runs while the caller imports torch. cupy's compiler module is imported here, on
    the caller's thread, so the background one imports nothing beside torch's import."""
    from concurrent.futures import ThreadPoolExecutor

    from l2attr.dlrm import compile as kc

    try:
        import cupy.cuda.compiler  # noqa: F401
    except ImportError:         # no GPU stack: precompile builds nothing, the serial calls say so
        pass
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="l2attr-compile")
    future = pool.submit(kc.precompile, run_specs(cfg, opts))
    pool.shutdown(wait=False)
    return future


def compile_and_check(cfg: WorkloadConfig, opts: Any, timings: dict[str, float], compiling: Any = None,
                      memo: Any = None) -> tuple[dict[str, VariantKernels | None], dict[str, Any], dict[str, Any]]:
    """Every variant of `opts` (the run's LadderOptions, ladders/measure/run.py, which imports this module)
    compiled, its resources read and checked against torch: (kernels by variant_id, resources,
    errors); the time each step took goes into `timings`. `compiling`: start_compile's Future when
    the modules were started ahead (its failures are left to the serial calls, which raise them).
    `memo`: a CheckMemo (above) whose verdicts of these variants are taken, or kept."""
    from l2attr.dlrm import compile as kc

    t0 = time.perf_counter()
    variants = opts.all_variants
    if compiling is None:
        kc.precompile(run_specs(cfg, opts))
    else:
        try:
            compiling.result()
        except Exception:
            pass
    compiled: dict[str, VariantKernels | None] = {}
    for v in variants:
        compiled[variant_id(v)] = None if v.is_reference else VariantKernels(
            v, cfg.dtype, opts.shape, opts.maxrregcount, opts.rpf_depth)
    timings["compile_s"] = time.perf_counter() - t0
    resources = {vid: k.resources() for vid, k in compiled.items() if k is not None}
    t0 = time.perf_counter()
    checks = memo.checks(list(resources)) if memo is not None else None
    if checks is None:
        checks = {vid: check_variant(k, cfg.dtype, cfg.dim, cfg.seed + i)
                  for i, (vid, k) in enumerate(compiled.items()) if k is not None}
        if memo is not None:
            memo.keep(CHECKS, checks)
    timings["check_s"] = time.perf_counter() - t0
    return compiled, resources, checks


def check_profile(gpu: Any, cfg: WorkloadConfig, compiled: dict[str, VariantKernels | None], variants: list[Variant],
                  profile: str, indices: Any, hot: Any, window: Any, memo: Any = None) -> dict[str, float]:
    """Each variant's first call on a profile's real workload against one float64 reference
    ("variant id:profile" -> relative error; a window rung also through its window). A variant
    out of tolerance stops the run; `memo`'s verdicts of the same names are taken, or kept."""
    names = {f"{variant_id(v)}:{profile}": v for v in variants}
    held = memo.real(list(names)) if memo is not None else None
    if held is not None:
        return held
    refs: dict[str, Any] = {}

    def ref() -> Any:
        if "ref" not in refs:
            refs["ref"] = real_data_reference(gpu, indices)
        return refs["ref"]

    errors: dict[str, float] = {}
    for name, v in names.items():
        err = check_real_data(gpu, compiled[variant_id(v)], indices, hot, ref)
        if v.rung.window and window is not None:
            err = max(err, check_window_data(gpu, compiled[variant_id(v)], indices, window, ref))
        errors[name] = err
        if err > 1e-5 and cfg.dtype == "fp32":
            raise UserError(f"variant {v.label} is wrong on the {profile} workload: relative "
                            f"error {err:.3g} vs torch.nn.functional.embedding_bag")
    if memo is not None:
        memo.keep(REAL, errors)
    return errors
