#!/usr/bin/env bash
# Issue 25 on the H200: kernel-level edges from pointer arguments and a real host-node graph (GPU
# tests), then every shipped step re-measured by graph surgery with its top edges: bench_steps
# (self-checks, BERT, compiled decoder, DLRM rungs, 32-layer decode, bad inputs), the Llama eager
# grid and the DLRM step's three pin placements. Runs come back packed in $OUT/runs.tar.gz.
#   bash tools/device_edges.sh
source tools/device_env.sh
set -o pipefail
python3 -m pytest -q -x -m gpu tests/test_gpu_step_surgery.py -p no:cacheprovider \
  -k "kernel_level_edges or host_node or bad_steps or selfcheck_signs" 2>&1 | tee "$OUT/logs/gpu_tests_edges.log"
E=2; [ "${PIPESTATUS[0]}" -ne 0 ] && E=0 && echo "kernel-edge test failed: steps measured with --edges 0"
python3 benchmarks/bench_steps.py --out "$OUT/runs/surgery" --edges $E --bad 2>&1 | tee "$OUT/logs/bench_steps.log"
python3 examples/steps/llama_layer.py --out "$OUT/runs/grid" --edges $E --only llama-decode-b1-kv2k \
  llama-decode-b1-kv8k llama-decode-b8-kv4k llama-decode-b16-kv2k llama-decode-b16-kv8k llama-prefill-512 \
  llama-prefill-2k 2>&1 | tee "$OUT/logs/llama_grid.log"
python3 examples/steps/dlrm_step.py --out "$OUT/runs/dlrm" --edges $E 2>&1 | tee "$OUT/logs/dlrm_step.log"
tar czf "$OUT/runs.tar.gz" -C "$OUT" runs && rm -rf "$OUT/runs"
