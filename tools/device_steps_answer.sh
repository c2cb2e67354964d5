#!/usr/bin/env bash
# Issue 36 item 6 on the H200 (one call, < 10 min): every shipped step re-measured with the current
# arms (matched where a write-back is given, clean/dirty/start always), the compiled prefill's program
# check among the GPU tests, and the attribution's scale record (chains of 250, 500, 1,000 kernels).
#   COMMIT=$(git rev-parse --short HEAD) bash tools/device_steps_answer.sh
source tools/device_env.sh
set -o pipefail
python3 benchmarks/bench_steps.py --out "$OUT/runs/surgery" --kernels 250 500 1000 \
  --record "$OUT/logs/bench_steps_scale.json" 2>&1 | tee "$OUT/logs/bench_steps_scale.log" | tail -4
python3 benchmarks/bench_steps.py --out "$OUT/runs/surgery" --edges 2 --bad 2>&1 | tee "$OUT/logs/bench_steps.log" | grep "wall"
tar czf "$OUT/runs.tar.gz" -C "$OUT" runs && rm -rf "$OUT/runs"
