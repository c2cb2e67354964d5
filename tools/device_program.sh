#!/usr/bin/env bash
# Issue 25 on the H200: every GPU test on the current tree (the compiled decoder's graph held to the
# compiled function called on its own among them), then every shipped step of bench_steps re-measured
# by graph surgery with the call's own kernels traced. Runs come back packed in $OUT/runs.tar.gz.
#   COMMIT=$(git rev-parse --short HEAD) bash tools/device_program.sh
source tools/device_env.sh
set -o pipefail
echo "tree of commit ${COMMIT:-unknown}: python3 -m pytest -q -m gpu tests/test_gpu_*.py" | tee "$OUT/logs/gpu_tests_all.log"
python3 -m pytest -q -m gpu tests/test_gpu_*.py -p no:cacheprovider 2>&1 | tee -a "$OUT/logs/gpu_tests_all.log" | tail -15
python3 benchmarks/bench_steps.py --out "$OUT/runs/surgery" --edges 2 --bad 2>&1 | tee "$OUT/logs/bench_steps.log"
tar czf "$OUT/runs.tar.gz" -C "$OUT" runs && rm -rf "$OUT/runs"
