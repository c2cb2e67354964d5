"""Fidelity check: l2attr's `artifact` family against a standalone build of the artifact's own kernels.

    python tools/probes/artifact_fidelity.py --artifact-cu SCRATCH/artifact_kernels.cu \\
        --trace reuse_medium_table_500K.txt --hot hot60k_medium.txt --out fidelity.json

SCRATCH/artifact_kernels.cu is yours to make, outside this repository (it is the artifact's code,
so it is never committed): from rishucoding/reproduce_MICRO24_GPU_DLRM_inference copy the
`EmbeddingBag_updateOutputKernel_sum_mean` of opt_designs/baseline/EmbeddingBag_timed.cu, of
opt_designs/l2_pinning/EmbeddingBag_timed.cu and of opt_designs/prefetching/EmbeddingBag_regpref.txt,
and `prefetch_pin_L2`; fix the templates to float / int64_t, name them extern "C"
`art_baseline_sum_mean`, `art_l2p_sum_mean`, `art_rpf_sum_mean`, `art_prefetch_pin_L2`, and shim
`CUDA_KERNEL_ASSERT` (a branch to `__assert_fail`), `acc_type` (float) and `ceil_div`.

The tool builds that file with nvcc for this GPU twice (uncapped, and -maxrregcount 42 as the
artifact's OptMT build), then, on the artifact's workload shape and the given trace:
  * outputs: each rung's output, offset2bag and bag_size from both builds, compared bit for bit;
  * times: pin and consumer per call with CUDA events (spin head start), whole passes over
    12 batches x 12 tables per build, 4 passes each in alternating order, each from a flushed L2
    with evict-last reset, cold first call dropped; medians and the ratio ours / theirs;
  * with --sass: the opcode sequences of both builds' consumers (cuobjdump), compared.
It prints a table and writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from l2attr.dlrm.config import WorkloadConfig  # noqa: E402
from l2attr.dlrm.declare import RUNGS, variant  # noqa: E402

# rung -> (their consumer function, built with the cap?) ; the pin for pinning rungs
THEIRS = {"baseline": ("art_baseline_sum_mean", False), "optmt": ("art_baseline_sum_mean", True),
          "rpf_optmt": ("art_rpf_sum_mean", True), "l2p_optmt": ("art_l2p_sum_mean", True),
          "combined": ("art_rpf_sum_mean", True)}
THEIR_PIN = "art_prefetch_pin_L2"


def nvcc_cubin(src: Path, arch: str, out: Path, cap: bool, include: Path | None = None) -> Path:
    cmd = ["nvcc", f"-arch={arch}", "-cubin", "-o", str(out), str(src)]
    if include:
        cmd.insert(1, f"-I{include}")
    if cap:
        cmd.insert(1, "-maxrregcount=42")
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"nvcc failed: {res.stderr.strip()[:500]}")
    return out


def opcodes(cubin: Path) -> dict[str, list[str]]:
    """function -> list of SASS opcodes (predicates and operands dropped)."""
    text = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True).stdout
    out: dict[str, list[str]] = {}
    cur = None
    for line in text.splitlines():
        m = re.search(r"Function : (\w+)", line)
        if m:
            cur = out.setdefault(m.group(1), [])
            continue
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if m and cur is not None:
            cur.append(m.group(2))
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--artifact-cu", type=Path, required=True)
    ap.add_argument("--trace", type=Path, required=True)
    ap.add_argument("--hot", type=Path, required=True)
    ap.add_argument("--repeats", type=int, default=4, help="passes per build (default 4, alternating order)")
    ap.add_argument("--sass", action="store_true", help="also compare SASS opcode sequences (cuobjdump)")
    ap.add_argument("--out", type=Path, default=Path("fidelity.json"))
    args = ap.parse_args(argv)

    import cupy
    import torch

    from l2attr.dlrm.measure.gpu import Gpu
    from l2attr.dlrm.measure.kernels import LaunchShape, VariantKernels, _ptr
    from l2attr.dlrm.workload import build_workload

    arch = f"sm_{cupy.cuda.Device().compute_capability}"
    cfg = WorkloadConfig()
    t0 = time.perf_counter()
    gpu = Gpu(cfg, spin_us=50.0, log=print)
    w = build_workload(cfg, trace=args.trace, hot=args.hot, drop_out_of_range=True)
    indices = gpu.upload_indices(w.indices)
    hot = torch.from_numpy(np.ascontiguousarray(w.hot)).cuda()
    tmp = Path(tempfile.mkdtemp(prefix="l2attr-fidelity-"))
    mods = {cap: cupy.RawModule(path=str(nvcc_cubin(args.artifact_cu, arch, tmp / f"art{int(cap)}.cubin", cap)))
            for cap in (False, True)}
    report: dict = {"arch": arch, "trace": args.trace.name, "hot": args.hot.name, "workload": w.source,
                    "rungs": {}}
    if args.sass and shutil.which("cuobjdump"):
        ours_cubin = {cap: nvcc_cubin(ROOT / "kernels" / "artifact_consumer.cu", arch, tmp / f"ours{int(cap)}.cubin",
                                      cap, include=ROOT / "kernels") for cap in (False, True)}
        sass = {}
        for cap in (False, True):
            a, b = opcodes(ours_cubin[cap]), opcodes(tmp / f"art{int(cap)}.cubin")
            for ours, theirs in (("artifact_plain", "art_baseline_sum_mean"), ("artifact_rpf", "art_rpf_sum_mean")):
                key = f"{ours}{' -maxrregcount 42' if cap else ''}"
                mem = lambda ops: [o for o in ops if o.startswith(("LDG", "STG", "LDL", "STL", "CALL"))]  # noqa: E731
                sass[key] = {"ours_instructions": len(a[ours]), "theirs_instructions": len(b[theirs]),
                             "identical_opcodes": a[ours] == b[theirs],
                             "same_opcode_counts": Counter(a[ours]) == Counter(b[theirs]),
                             "positions_differing": sum(x != y for x, y in zip(a[ours], b[theirs])),
                             "identical_memory_ops": mem(a[ours]) == mem(b[theirs]),
                             "ours_memory_ops": len(mem(a[ours])), "theirs_memory_ops": len(mem(b[theirs]))}
        report["sass"] = sass

    shape = LaunchShape()
    out_t = torch.empty_like(gpu.out)
    o2b_t = torch.empty(indices.shape[-1], dtype=torch.int64, device="cuda")
    bs_t = torch.empty(cfg.batch_size, dtype=torch.int64, device="cuda")
    offsets = gpu.offsets

    for rung in RUNGS:
        v = variant("artifact", rung)
        ours = VariantKernels(v, "fp32", shape)
        fn_name, cap = THEIRS[rung.name]
        theirs = mods[cap].get_function(fn_name)
        their_pin = mods[False].get_function(THEIR_PIN)

        def their_consumer(t: int, b: int) -> None:
            idx = indices[b, t]
            weight = gpu.weights[t]
            theirs((shape.grid,), shape.block, (
                _ptr(idx), _ptr(offsets), _ptr(weight), _ptr(out_t), _ptr(o2b_t), np.int64(idx.numel()),
                np.int64(offsets.numel()), np.int64(weight.shape[1]), np.int64(weight.stride(0)),
                np.int64(weight.stride(1)), np.int32(0), _ptr(bs_t), np.uint64(0), np.int64(0),
                np.int64(-1), np.int64(weight.shape[0])))

        def their_pin_launch(t: int) -> None:
            weight = gpu.weights[t]
            their_pin((shape.pin_grid,), shape.pin_block_element, (
                _ptr(weight), np.int64(weight.shape[1]), np.int64(weight.stride(0)), _ptr(hot),
                np.uint64(hot.numel())))

        # outputs, bit for bit, on every call of one batch
        same = True
        for t in range(cfg.tables):
            if rung.pins:
                ours.launch_pin(gpu.weights[t], hot)
            ours.launch_consumer(gpu.weights[t], indices[0, t], offsets, gpu.out)
            if rung.pins:
                their_pin_launch(t)
            their_consumer(t, 0)
            torch.cuda.synchronize()
            o2b, bs = ours._aten_outputs(indices.shape[-1], cfg.batch_size, "cuda")
            same &= bool(torch.equal(gpu.out, out_t) and torch.equal(o2b, o2b_t) and torch.equal(bs, bs_t))

        # times: whole passes over every call (as the ladder measures), the two builds in
        # alternating order, each pass from a flushed L2 with evict-last reset. Timing the two
        # builds call by call would let the second read rows the first just brought into L2.
        times: dict[str, list[float]] = {k: [] for k in ("ours_consumer", "theirs_consumer", "ours_pin", "theirs_pin")}
        for r in range(args.repeats):
            for who in (("ours", "theirs") if r % 2 == 0 else ("theirs", "ours")):
                gpu.flush_l2()
                first = True
                for b in range(cfg.warmup_batches + cfg.batches):
                    for t in range(cfg.tables):
                        keep = b >= cfg.warmup_batches and not first
                        if b >= cfg.warmup_batches:
                            first = False
                        if rung.pins:
                            tp = gpu.timed((lambda: ours.launch_pin(gpu.weights[t], hot)) if who == "ours"
                                           else (lambda: their_pin_launch(t)))
                            if keep:
                                times[f"{who}_pin"].append(tp)
                        tc = gpu.timed((lambda: ours.launch_consumer(gpu.weights[t], indices[b, t], offsets, gpu.out))
                                       if who == "ours" else (lambda: their_consumer(t, b)))
                        if keep:
                            times[f"{who}_consumer"].append(tc)
        med = {k: float(np.median(v)) if v else None for k, v in times.items()}
        rec = {"outputs_identical": same, "n_calls": len(times["ours_consumer"]), **{f"{k}_us": v for k, v in med.items()},
               "consumer_ratio": med["ours_consumer"] / med["theirs_consumer"]}
        if rung.pins:
            rec["pin_ratio"] = med["ours_pin"] / med["theirs_pin"]
        report["rungs"][rung.name] = rec
        print(f"{rung.label:14s} outputs identical: {same}   consumer ours {med['ours_consumer']:7.2f} µs  "
              f"theirs {med['theirs_consumer']:7.2f} µs  ratio {rec['consumer_ratio']:.3f}"
              + (f"   pin ours {med['ours_pin']:6.2f} theirs {med['theirs_pin']:6.2f}" if rung.pins else ""),
              flush=True)
    report["wall_s"] = time.perf_counter() - t0
    for key, s in report.get("sass", {}).items():
        print(f"SASS {key:32s} ours {s['ours_instructions']} / theirs {s['theirs_instructions']} instructions, "
              f"identical opcodes: {s['identical_opcodes']} ({s['positions_differing']} positions differ, same "
              f"opcode counts: {s['same_opcode_counts']}), identical memory-op sequence: {s['identical_memory_ops']}")
    args.out.write_text(json.dumps(report, indent=1, default=str))
    worst = max(abs(r["consumer_ratio"] - 1) for r in report["rungs"].values())
    print(f"fidelity: all outputs identical: {all(r['outputs_identical'] for r in report['rungs'].values())}; "
          f"worst consumer time difference {worst * 100:.2f} % (target <= 3 %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
