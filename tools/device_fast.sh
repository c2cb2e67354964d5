#!/usr/bin/env bash
# The fast family's GPU cycle (issue 12): GPU tests of the fast consumer, the launch-parameter
# tuning table, a short ladder of tuned vs fast, the fast consumer under ncu (DRAM bytes), and
# the ncu pass count of the l2 metric set (issue 9). Run from the repository root on the GPU:
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
#   PYTHONPATH=/tmp/site:$PWD bash tools/device_fast.sh
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/runs" "$OUT/tuning"
export PYTHONUNBUFFERED=1
step() { echo; echo "=== $* ($(date -u +%T))"; }

step "gpu tests: fast family"
timeout 240 python3 -m pytest -q -m gpu tests/test_gpu_fast.py tests/test_gpu_ladder.py -k "fast" 2>&1 | tee "$OUT/gpu_tests_fast.log" | tail -15

step "tuning table"
timeout 200 python3 benchmarks/tune_fast.py --out "$OUT/tuning" 2>&1 | tee "$OUT/tune_fast.log" | tail -50

if [ "${SKIP_PROBE:-0}" != 1 ]; then
step "ncu passes of the l2 set"
timeout 150 python3 tools/probe_passes.py --drop "${PROBE_DROP:-}" 2>&1 | tee "$OUT/probe_passes.log"
fi

step "ladder: tuned vs fast, random and reuse_medium"
timeout 120 python3 -m l2attr ladder --family ${FAMILIES:-tuned,fast} --rungs optmt,l2p_optmt,torch \
  --profiles random,reuse_medium --name fast-ladder --out "$OUT/runs" --quiet 2>&1 | tee "$OUT/fast_ladder.log" | tail -30

step "profile: fast and tuned OptMT under ncu (DRAM bytes / duration)"
timeout 200 python3 -m l2attr profile --family tuned,fast --rungs optmt,l2p_optmt --profiles random,reuse_medium \
  --metrics l2 --no-control --name fast-profile --out "$OUT/runs" 2>&1 | tee "$OUT/fast_profile.log" | tail -40

step "pack"
tar czf "$OUT/runs.tgz" --exclude='.cache' --exclude='*.npy' --exclude='child' -C "$OUT" runs tuning && rm -rf "$OUT/runs" "$OUT/tuning"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log 2>/dev/null)
ls -la "$OUT"
