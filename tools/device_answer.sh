#!/usr/bin/env bash
# Issue 36 on the H200, first cycle: the step-answer GPU tests (matched arm against ncu, the split by
# construction, the growing step refused, a step's own keywords), the surgery GPU tests, then two
# configurations of the HF grid with their ncu write-back (the grid's cost per step, measured).
#   COMMIT=$(git rev-parse --short HEAD) bash tools/device_answer.sh
source tools/device_env.sh
set -o pipefail
echo "tree of commit ${COMMIT:-unknown}" | tee "$OUT/logs/gpu_tests_answer.log"
python3 -m pytest -q -m gpu tests/test_gpu_step_answer.py tests/test_gpu_step_surgery.py -p no:cacheprovider -x 2>&1 \
  | tee -a "$OUT/logs/gpu_tests_answer.log" | tail -30
python3 examples/steps/hf_grid.py --out "$OUT/runs/grid" --only ${GRID_ONLY:-llama-decode-b8-kv4k gpt2-decode-b8-kv4k} 2>&1 \
  | tee "$OUT/logs/hf_grid.log" | tail -8
tar czf "$OUT/runs.tar.gz" -C "$OUT" runs && rm -rf "$OUT/runs"
