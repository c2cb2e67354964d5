"""The random-row gather ceiling beside the fast consumer, measured on this GPU.

    python benchmarks/gather_ceiling.py --out DIR [--profile random] [--no-ncu]

The fast family's target is a share of the *sequential* read bandwidth (`read_stream` over
4 GiB). What a kernel can draw from DRAM when it reads 512-byte rows at random is a property of
the memory system and of the call's size, not of any consumer, so this measures it directly:
`kernels/gather_ceiling.cu` reads the rows of the same index stream as the consumer (no bags, no
reduction, no output unless `epilogue`), at the artifact shape (one call: 2048 x 150 lookups into
one 256 MB table, `ceiling`) and at steady state (`steady`: the 12 tables' lookups of a batch in
one launch, 3.7 M rows over 3 GB, so the ramp at the start and the drain at the end of a 40 us
kernel weigh little). Beside it: the fast consumer at its defaults and at neighbouring points,
each checked against torch.nn.functional.embedding_bag; the tuned OptMT consumer as the
reference; and a sequential read with four loads in flight per thread (`read_wide`), to show
whether `read_stream`'s one load per thread under-measures the HBM.

Two measurements per candidate, as the ladder and the profile make them:
- CUDA-event medians (spin head start, repeats interleaved across candidates, the cold first
  call of each repeat dropped), over every table call of the measured batches;
- DRAM bytes / duration under ncu (application replay, caches and clocks untouched): this
  script runs itself under ncu (`--child`) and reads the report; `read_stream` over 4 GiB is
  profiled the same way, so the ceiling's share of HBM is ncu over ncu as well as ncu over the
  event-timed figure the manifests hold.

Writes DIR/gather_ceiling.csv (one row per candidate) atomically and prints it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from gather_bench import Bench, Candidate, candidates, lookups, read_launchers

NCU_METRICS = ("dram__bytes_read.sum", "gpu__time_duration.sum")
NCU_KERNELS = "regex:^(gather_rows|fast_v|tuned_|read_stream|read_wide)"


def time_events(bench: Bench, cands: list[Candidate], repeats: int) -> dict[Candidate, list[list[float]]]:
    samples: dict[Candidate, list[list[float]]] = {c: [] for c in cands}
    for _ in range(repeats):
        for c in cands:
            times = []
            for b, t in bench.calls():
                launch = bench.launcher(c, b, t)
                if launch is not None:
                    times.append(bench.gpu.timed(launch))
            samples[c].append(times[1:])     # the repeat's cold first call is dropped
    return samples


def child(out: Path, profile: str) -> int:
    """Under ncu: each candidate on a few table calls, in a fixed order written to labels.json."""
    bench = Bench(profile, batches=1)
    cands = candidates()
    labels: list[str] = []
    bench.gpu.warm_up(0.3)
    buf_words = (1 << 32) // 4
    buf = bench.gpu.torch.empty(buf_words, dtype=bench.gpu.torch.int32, device="cuda")
    for _ in range(3):
        for name, launch in read_launchers(bench, buf).items():
            launch()
            labels.append(name)
    del buf
    for c in cands:
        calls = [(b, t) for b, t in bench.calls() if bench.launcher(c, b, t) is not None][:4]
        for b, t in calls:
            bench.launcher(c, b, t)()
            labels.append(c.name)
    bench.gpu.torch.cuda.synchronize()
    (out / "labels.json").write_text(json.dumps(labels))
    return 0


def ncu_figures(out: Path, profile: str, ncu: str) -> dict[str, dict[str, float]]:
    """Median DRAM bytes and duration per candidate label under ncu (application replay)."""
    from l2attr.errors import UserError
    from l2attr.profile.ncu_import import label_medians, read_report

    report = out / "ceiling"
    cmd = [ncu, "--replay-mode", "application", "--cache-control", "none", "--clock-control", "none",
           "--metrics", ",".join(NCU_METRICS), "-k", NCU_KERNELS, "-f", "-o", str(report),
           sys.executable, str(Path(__file__).resolve()), "--child", "--out", str(out), "--profile", profile]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode:
        print(f"gather_ceiling: ncu failed ({res.returncode}): {(res.stdout + res.stderr).strip()[-600:]}")
        return {}
    labels = json.loads((out / "labels.json").read_text())
    try:
        med = label_medians(read_report(f"{report}.ncu-rep", keep=NCU_METRICS).table, labels, NCU_METRICS)
    except UserError as exc:
        print(f"gather_ceiling: {exc}")
        return {}
    return {lab: {"ncu_dram_bytes": float(r[NCU_METRICS[0]]), "ncu_duration_us": float(r[NCU_METRICS[1]]) / 1e3}
            for lab, r in med.iterrows()}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("ceiling"))
    ap.add_argument("--profile", default="random")
    ap.add_argument("--batches", type=int, default=4, help="measured batches per repeat (x 12 tables)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-ncu", action="store_true")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.child:
        return child(args.out, args.profile)
    import pandas as pd

    from l2attr import atomic

    t0 = time.perf_counter()
    bench = Bench(args.profile, args.batches)
    gpu = bench.gpu
    gpu.warm_up(0.5)
    hbm = gpu.read_GBps(1 << 32)
    buf = gpu.torch.empty((1 << 32) // 4, dtype=gpu.torch.int32, device="cuda")
    reads = {name: float(np.median([gpu.timed(launch) for _ in range(11)][1:]))
             for name, launch in read_launchers(bench, buf).items()}
    del buf
    cands = candidates()
    errors = {c: bench.check(c) for c in cands}
    samples = time_events(bench, cands, args.repeats)
    ncu = {} if args.no_ncu or not shutil.which(args.ncu) else ncu_figures(args.out, args.profile, args.ncu)
    tuned = float(np.median(np.concatenate(samples[cands[-1]])))
    row_bytes = bench.cfg.dim * gpu.weights.element_size()
    rows = []
    for c in cands:
        flat = np.concatenate(samples[c])
        per_repeat = [float(np.median(s)) for s in samples[c]]
        med = float(np.median(flat))
        r = {"candidate": c.name, "kind": c.kind, "unroll": c.unroll, "pipe": c.pipe, "per_warp": c.per_warp,
             "epilogue": c.epi, "warps_per_bag": c.warps_per_bag, "bags_per_block": c.bags_per_block,
             "maxrregcount": c.maxrregcount, "lookups": lookups(bench, c), "median_us": med,
             "spread_pct": 100 * (max(per_repeat) - min(per_repeat)) / med, "calls": int(flat.size),
             "vs_tuned": med / tuned if c.kind != "steady" else float("nan"),
             "logical_GBps": lookups(bench, c) * row_bytes / med / 1e3, "check_error": errors[c],
             "hbm_read_GBps": hbm}
        if c.kind == "consumer":
            res = bench.consumer(c).resources()["consumer"]
            r.update(registers=res["registers_per_thread"], theoretical_occupancy=res["theoretical_occupancy"])
        got = ncu.get(c.name)
        if got:
            r.update(got)
            r["ncu_dram_GBps"] = got["ncu_dram_bytes"] / got["ncu_duration_us"] / 1e3
            r["ncu_hbm_fraction"] = r["ncu_dram_GBps"] / hbm
        rows.append(r)
    for name, us in reads.items():
        r = {"candidate": name, "kind": "read", "median_us": us, "hbm_read_GBps": hbm,
             "logical_GBps": (1 << 32) / us / 1e3}
        got = ncu.get(name)
        if got:
            r.update(got)
            r["ncu_dram_GBps"] = got["ncu_dram_bytes"] / got["ncu_duration_us"] / 1e3
            r["ncu_hbm_fraction"] = r["ncu_dram_GBps"] / hbm
        rows.append(r)
    table = pd.DataFrame(rows)
    atomic.write_csv(args.out / "gather_ceiling.csv", table)
    cols = [c for c in ("candidate", "median_us", "spread_pct", "vs_tuned", "registers", "theoretical_occupancy",
                        "ncu_duration_us", "ncu_dram_bytes", "ncu_dram_GBps", "ncu_hbm_fraction", "check_error")
            if c in table]
    with pd.option_context("display.width", 250, "display.max_rows", 200, "display.max_columns", 30):
        print(table[cols].to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    print(f"gather_ceiling: HBM read (read_stream 4 GiB, events) {hbm:.0f} GB/s; {len(cands)} candidates, "
          f"{args.profile}, {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    from l2attr.errors import UserError

    try:
        raise SystemExit(main(sys.argv[1:]))
    except UserError as exc:        # no GPU, no torch, a bad option value: one line, not a traceback
        print(f"gather_ceiling: error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
