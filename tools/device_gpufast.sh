#!/usr/bin/env bash
# Issue 19 items 5 and 6 on the H200: the residency GPU tests, the default ladder from a cold
# process (its wall time and where it goes), and layer B end to end (profile + folded control +
# timeline). On a fresh machine the ladder runs first, so its compile and workload caches are cold
# (what a first run pays), then once more with them warm; the tests and the profile come after.
# About 6 minutes; the step timeouts add up to under 10.
# Results under ${OUT:-out}/: logs.tgz (one log per step) and runs.tgz (the run dirs, big files left out).
#   bash tools/device_gpufast.sh          (nvtx carried as a wheel in .whl/, as for device_engine.sh)
set -uo pipefail
. "$(dirname "$0")/device_env.sh"     # OUT, wheels, PYTHONPATH
step() { echo; echo "=== $* ($(date -u +%T))"; }
L="$OUT/logs"

step "machine"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,persistence_mode --format=csv,noheader 2>&1 | tee "$L/machine.log"
echo "cupy kernel cache files before the ladder: $(ls ~/.cupy/kernel_cache 2>/dev/null | wc -l)" | tee -a "$L/machine.log"
command -v ncu | tee -a "$L/machine.log"

if [ "${SKIP_LADDER:-0}" != 1 ]; then
step "default ladder, cold process (benchmarks/bench_ladder.py: wall time, phases, startup probe)"
timeout 90 python3 benchmarks/bench_ladder.py --out "$OUT/runs" 2>&1 | tee "$L/bench_ladder.log" | grep -i '^bench_ladder\|ladder phases\|ladder finished\|blocking kernel timer\|error' | tail -20
step "default ladder again: a second cold process, its compile and workload caches warm"
timeout 75 python3 benchmarks/bench_ladder.py --no-startup-probe --out "$OUT/runs" 2>&1 | tee "$L/bench_ladder_2.log" | grep -i '^bench_ladder\|error' | head -6
fi

if [ "${SKIP_TESTS:-0}" != 1 ]; then
step "GPU residency tests (pin DRAM, reset vs pollution, blocking vs spin-300)"
timeout 150 python3 -m pytest -q -m gpu -rA --durations=0 tests/test_gpu_residency.py 2>&1 | tee "$L/gpu_tests_residency.log" | tail -25
fi

if [ "${SKIP_PROFILE:-0}" != 1 ]; then
step "layer B benchmark: profile --metrics l2 (control folded into the sweep) + timeline"
timeout 260 python3 benchmarks/bench_profile.py --out "$OUT/runs" 2>&1 | tee "$L/bench_profile.log" | grep '^bench_profile\|error\|Error' | tail -30
fi

step "pack"
rm -f "$OUT"/runs/*/ncu/*.ncu-rep.tmp 2>/dev/null
tar czf "$OUT/runs.tgz" --exclude='.cache' --exclude='*.npy' --exclude='*.ncu-rep' -C "$OUT" runs && rm -rf "$OUT/runs"
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
ls -la "$OUT"
