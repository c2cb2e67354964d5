#!/usr/bin/env bash
# The sweep axes' GPU check after they became declarations (dlrm/sweep/axes/): the sweep GPU tests
# (a tiny sweep of every axis, occupy included, through the CLI, and the window ABI), a fresh
# default occupy sweep (the renamed capacity sweep) with its Nsight Compute retention check written
# into its run dir, and the report of it. About 3 minutes on an H200. Run from the repository root:
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
#   PYTHONPATH=/tmp/site:$PWD bash tools/device_axes.sh
# Output under ${OUT:-out}/: gpu_tests.log, occupy.log, occupy_ncu.log, the run dir (runs/*-bench-occupy,
# occupy_ncu.json inside; sweep_samples.csv left out for size), occupy.md.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/runs"
export PYTHONUNBUFFERED=1
step() { echo; echo "=== $* ($(date -u +%T))"; }

step "gpu tests: sweeps"
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_sweeps.py tests/test_sweep_window_abi.py \
  2>&1 | tee "$OUT/gpu_tests.log" | tail -15

step "occupy sweep (defaults, cold process)"
timeout 180 python3 benchmarks/bench_sweeps.py --out "$OUT/runs" occupy 2>&1 | tee "$OUT/occupy.log" | tail -20
run=$(ls -d "$OUT"/runs/*-bench-occupy 2>/dev/null | tail -1)

if [ -n "$run" ]; then
  step "ncu retention check of the held lines, into $run"
  timeout 150 python3 tools/capacity_ncu_check.py --occupy-mib 20,40 --traffic-mib 120 --run "$run" \
    2>&1 | tee "$OUT/occupy_ncu.log"
  step "report"
  timeout 60 python3 -m l2attr report "$run" -o "$OUT/occupy.md" 2>&1 | tail -3
  rm -f "$run/sweep_samples.csv"; rm -rf "$run/.cache"
fi
rm -rf "$OUT/runs/.cache"
ls -la "$OUT" "$OUT/runs"
