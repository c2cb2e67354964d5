#!/usr/bin/env bash
# The closing GPU cycle of a change to the ladder's code (issues 17 and 19), in one call on one H200:
# the default ladder from a cold process (benchmarks/bench_ladder.py: wall time and phases), the
# default ladder again in a second process on the same GPU, the fast family with the spin-300 µs
# timer beside them, layer B end to end (benchmarks/bench_profile.py: profile + control + timeline),
# and the ladder report's compare section for the two default processes.
# Results under ${OUT:-out}/: runs.tgz, logs.tgz, compare.md.
#   bash tools/device_final.sh        (wheels carried in .whl/: nvtx; plotly for the report)
set -uo pipefail
. "$(dirname "$0")/device_env.sh"     # OUT, wheels, PYTHONPATH
step() { echo; echo "=== $* ($(date -u +%T))"; }
L="$OUT/logs"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$L/machine.log"

step "default ladder, cold process (benchmarks/bench_ladder.py)"
timeout 110 python3 benchmarks/bench_ladder.py --no-startup-probe --out "$OUT/runs" --name blocking 2>&1 | tee "$L/bench_ladder.log" | tail -30
step "default ladder again, a second process on the same GPU"
/usr/bin/time -f "ladder wall %e s" timeout 100 python3 -m l2attr ladder --out "$OUT/runs" --name blocking-2 2>&1 | tee "$L/ladder_blocking_2.log" | tail -8
step "fast family, spin 300 us (the comparison for the blocking timer)"
timeout 60 python3 -m l2attr ladder --family fast --timer spin --spin-us 300 --out "$OUT/runs" --name fast-spin300 --quiet 2>&1 | tee "$L/ladder_spin300.log" | tail -6
step "compare section of the two default processes"
timeout 60 python3 -m l2attr report "$OUT"/runs/*-blocking "$OUT"/runs/*-blocking-2 --format md -o "$OUT/compare.md" 2>&1 | tail -2
grep -n "one GPU\|two GPUs\|GPU identity" "$OUT/compare.md" | head -3
step "layer B benchmark: profile --metrics l2 + control + timeline"
timeout 300 python3 benchmarks/bench_profile.py --out "$OUT/runs" 2>&1 | tee "$L/bench_profile.log" | grep -v "^\s*$" | tail -25

step "pack"
rm -f "$OUT"/runs/*/ncu/*.ncu-rep.tmp 2>/dev/null
tar czf "$OUT/runs.tgz" --exclude='.cache' --exclude='*.npy' --exclude='child' --exclude='*.ncu-rep' -C "$OUT" runs && rm -rf "$OUT/runs"
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
ls -la "$OUT"
