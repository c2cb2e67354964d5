#!/usr/bin/env bash
# Every GPU test on the current tree, then the Experiment example (its result object printed), on the H200.
#   COMMIT=<short HEAD, typed: the device copy's .git is stale> bash tools/device_gpu_tests.sh   (COMMIT: the commit the log names)
source tools/device_env.sh
echo "tree of commit ${COMMIT:-unknown}" | tee "$OUT/logs/gpu_tests_all.log"
python3 -m pytest -q -m gpu tests/test_gpu_*.py -p no:cacheprovider 2>&1 | tee -a "$OUT/logs/gpu_tests_all.log" | tail -15
timeout 200 python3 examples/experiments/kv_pin_sdpa.py --out "$OUT/runs" 2>&1 | tee "$OUT/logs/kv_pin_sdpa.log" | tail -25
rm -rf "$OUT/runs"
