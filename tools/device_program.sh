#!/usr/bin/env bash
# Issue 25 on the H200: every GPU test on the current tree (the compiled decoder's graph held to the
# compiled function called on its own among them), then every shipped step re-measured by graph
# surgery with the call's own kernels traced: bench_steps (self-checks, BERT, compiled decoder,
# DLRM rungs, 32-layer decode, bad inputs), the Llama eager grid, the DLRM step's three pin
# placements. Runs come back packed in $OUT/runs.tar.gz.
#   COMMIT=<short HEAD, typed: the device copy's .git is stale> bash tools/device_program.sh
source tools/device_env.sh
set -o pipefail
echo "tree of commit ${COMMIT:-unknown}: python3 -m pytest -q -m gpu tests/test_gpu_*.py" | tee "$OUT/logs/gpu_tests_all.log"
python3 -m pytest -q -m gpu tests/test_gpu_*.py -p no:cacheprovider 2>&1 | tee -a "$OUT/logs/gpu_tests_all.log" | tail -15
python3 benchmarks/bench_steps.py --out "$OUT/runs/surgery" --edges 2 --bad 2>&1 | tee "$OUT/logs/bench_steps.log" | grep "wall"
python3 examples/steps/llama_layer.py --out "$OUT/runs/grid" --edges 2 --only llama-decode-b1-kv2k \
  llama-decode-b1-kv8k llama-decode-b8-kv4k llama-decode-b16-kv2k llama-decode-b16-kv8k llama-prefill-512 \
  llama-prefill-2k 2>&1 | tee "$OUT/logs/llama_grid.log" | tail -3
python3 examples/steps/dlrm_step.py --out "$OUT/runs/dlrm" --edges 2 2>&1 | tee "$OUT/logs/dlrm_step.log" | tail -3
tar czf "$OUT/runs.tar.gz" -C "$OUT" runs && rm -rf "$OUT/runs"
