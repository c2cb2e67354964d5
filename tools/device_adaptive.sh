#!/usr/bin/env bash
# Issue 27 on the H200, self-contained, everything under ${OUT:-out}/ (about 4-5 minutes):
#  0. where a cold process's start goes: python -X importtime of the ladder's imports, CUDA init;
#  1. the default ladder with fixed repeats (--repeats 3, the reproduction's call), cold process:
#     it also fills the workload cache ($L2ATTR_CACHE_DIR, /tmp/l2attr-cache: outside every runs folder);
#     then the same call again (a second fixed process: what two processes differ by, stopping aside);
#  2. the default ladder with adaptive repeats (no --repeats) into a NEW --out, cold process:
#     its wall time (target <= 15 s), its phase line (workload build ~0: the cache is reused);
#  3. `l2attr report` of fixed + adaptive (its compare section) and tools/compare_runs.py for
#     fixed/adaptive and fixed/fixed-again: every consumer median within the two runs' spread; no
#     cache files under either runs folder;
#  4. the GPU timer test's blocking / spin-300 ratio in 20 fresh processes (one JSON line each,
#     tests/test_gpu_experiment.py's $L2ATTR_TIMER_RATIO_LOG), summarised, to set its bound.
# Run as:  bash tools/device_adaptive.sh        (RATIO_RUNS=N for another count of step 4; 0 skips it)
set -uo pipefail
. "$(dirname "$0")/device_env.sh"     # OUT, wheels, PYTHONPATH
step() { echo; echo "=== $* ($(date -u +%T))"; }
L="$OUT/logs"
case "$L2ATTR_CACHE_DIR" in /tmp/*) rm -rf "$L2ATTR_CACHE_DIR";; esac   # device_env.sh: outside $OUT; cold for step 1
rm -rf "$OUT/runs-fixed" "$OUT/runs-fixed2" "$OUT/runs-adaptive"

step "0. a cold process's start: imports (python -X importtime, the 15 slowest) and CUDA init"
python3 -X importtime -c "import l2attr.commands.ladder, torch, cupy" 2> "$L/importtime.log" >/dev/null
sort -t'|' -k2 -n -r "$L/importtime.log" | head -15
python3 - <<'EOF' 2>&1 | tee "$L/startup.log"
import time
t = time.perf_counter(); import torch; a = time.perf_counter()
import cupy; b = time.perf_counter()
torch.cuda.init(); torch.empty(1, device="cuda"); c = time.perf_counter()
cupy.cuda.Device().attributes; d = time.perf_counter()
import l2attr.commands.ladder, l2attr.dlrm.measure.run; e = time.perf_counter()
print(f"import torch {a - t:.2f} s, import cupy {b - a:.2f} s, CUDA context {c - b:.2f} s, cupy device {d - c:.2f} s, "
      f"l2attr ladder modules {e - d:.2f} s")
EOF

step "1. default ladder, fixed repeats (--repeats 3), cold process, cache cold"
/usr/bin/time -f "ladder wall %e s" timeout 150 python3 -m l2attr ladder --repeats 3 --out "$OUT/runs-fixed" \
  --name fixed --quiet 2>&1 | tee "$L/ladder_fixed.log" | tail -12

step "1b. the same fixed call again, a second cold process (fixed against fixed)"
/usr/bin/time -f "ladder wall %e s" timeout 150 python3 -m l2attr ladder --repeats 3 --out "$OUT/runs-fixed2" \
  --name fixed2 --quiet 2>&1 | tee "$L/ladder_fixed2.log" | tail -3

step "2. default ladder, adaptive repeats, new --out, cold process, cache warm"
/usr/bin/time -f "ladder wall %e s" timeout 150 python3 -m l2attr ladder --out "$OUT/runs-adaptive" \
  --name adaptive --quiet 2>&1 | tee "$L/ladder_adaptive.log" | tail -12
FIXED=$(ls -d "$OUT"/runs-fixed/*-fixed | tail -1)
FIXED2=$(ls -d "$OUT"/runs-fixed2/*-fixed2 | tail -1)
ADAPTIVE=$(ls -d "$OUT"/runs-adaptive/*-adaptive | tail -1)
python3 - "$FIXED" "$FIXED2" "$ADAPTIVE" <<'EOF' 2>&1 | tee "$L/adaptive_cells.log"
import json, sys
from pathlib import Path
import pandas as pd
for run in map(Path, sys.argv[1:]):
    m = json.loads((run / "manifest.json").read_text())
    t = m.get("timings", {})
    hits = {p: (w.get("cache") or {}).get("hit") for p, w in m.get("workloads", {}).items()}
    print(f"{run.name}: total {t.get('total_s', float('nan')):.1f} s in process, repeats "
          f"{t.get('repeats_s', float('nan')):.1f} s, workload build {t.get('workload_s', float('nan')):.2f} s, "
          f"cache hits {hits}")
    cells = pd.read_csv(run / "cells.csv")
    if "stopped" in cells:
        s = pd.read_csv(run / "samples.csv")
        reps = s[s["consumer_time_us"].notna()].groupby(["family", "rung", "pin", "profile", "l2_state"])["repeat"].nunique()
        print(f"  adaptive: device repeats per cell {reps.min()}..{reps.max()} (median {reps.median():g}); "
              f"stopped: {cells.drop_duplicates(['family', 'rung', 'pin', 'profile', 'l2_state'])['stopped'].value_counts().to_dict()}")
EOF

step "3. report of the two runs (compare section) and the cell-by-cell comparison"
timeout 120 python3 -m l2attr report "$FIXED" "$ADAPTIVE" --format md -o "$OUT/adaptive_vs_fixed.md" 2>&1 | tail -3
timeout 120 python3 -m l2attr report "$FIXED" "$ADAPTIVE" -o "$OUT/adaptive_vs_fixed.html" 2>&1 | tail -3
grep -n -A14 "Compare runs" "$OUT/adaptive_vs_fixed.md" | head -40 | tee "$L/compare_section.log"
timeout 120 python3 tools/compare_runs.py "$FIXED" "$ADAPTIVE" 2>&1 | tee "$L/compare_runs.log"
echo "fixed against fixed (two processes, the same call):" | tee "$L/compare_fixed_fixed.log"
timeout 120 python3 tools/compare_runs.py "$FIXED" "$FIXED2" 2>&1 | tee -a "$L/compare_fixed_fixed.log"
echo "cache files under the runs folders (must be none):"
find "$OUT/runs-fixed" "$OUT/runs-fixed2" "$OUT/runs-adaptive" \( -name '*.npy' -o -name '.cache' \) | tee "$L/cache_in_runs.log" | head
timeout 30 python3 -m l2attr cache info | head -8 | tee "$L/cache_info.log"

step "4. GPU timer test: blocking / spin-300 ratio, ${RATIO_RUNS:-20} fresh processes"
export L2ATTR_TIMER_RATIO_LOG="$L/timer_ratio.jsonl"
rm -f "$L2ATTR_TIMER_RATIO_LOG"
for i in $(seq 1 "${RATIO_RUNS:-20}"); do
  timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu \
    "tests/test_gpu_experiment.py::test_blocking_timer_matches_a_300us_spin_and_never_times_out" 2>&1 | tail -1
done | tee "$L/timer_ratio_runs.log" | sort | uniq -c
[ -s "$L2ATTR_TIMER_RATIO_LOG" ] && python3 - "$L2ATTR_TIMER_RATIO_LOG" <<'EOF' 2>&1 | tee "$L/timer_ratio_summary.log"
import json, sys
import numpy as np
r = np.array([json.loads(line)["ratio"] for line in open(sys.argv[1])])
dev = np.abs(r - 1) * 100
print(f"{r.size} runs: ratio min {r.min():.4f} median {np.median(r):.4f} max {r.max():.4f}; "
      f"|ratio - 1| median {np.median(dev):.2f} %, p90 {np.quantile(dev, 0.9):.2f} %, max {dev.max():.2f} %; "
      f"over the 1 % bound: {(dev >= 1).sum()}")
EOF

step "pack"
tar czf "$OUT/runs.tgz" --exclude='*.npy' -C "$OUT" runs-fixed runs-fixed2 runs-adaptive && rm -rf "$OUT/runs-fixed" "$OUT/runs-fixed2" "$OUT/runs-adaptive"
rm -rf "$OUT/runs"
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
ls -la "$OUT"
