#!/usr/bin/env bash
# Issue 36 on the H200, first cycle, in one call under its 10 minutes: the step-answer GPU tests
# (matched arm against ncu, the split by construction, the growing step refused, a step's own keywords)
# and the surgery GPU tests (the compiled prefill's program check among them), the 1,000-kernel
# bench_steps record, then the grid (Llama, then GPT-2) for what time is left (resumable: tools/device_grid.sh).
#   COMMIT=<short HEAD, typed: the device copy's .git is stale> bash tools/device_answer.sh      (nvtx carried in .whl/; nothing it
#   runs imports plotly, so leaving plotly out keeps the tree under the device's 64 MiB)
source tools/device_env.sh
set -o pipefail
END=${END:-565}                               # seconds: everything ends before this, then it is packed
echo "tree of commit ${COMMIT:-unknown}" | tee "$OUT/logs/gpu_tests_answer.log"
# TESTS narrows the pytest part when device time is short (default: both files, every test)
timeout 300 python3 -m pytest -q -m gpu ${TESTS:-tests/test_gpu_step_answer.py tests/test_gpu_step_surgery.py} \
  -p no:cacheprovider -rfEP --durations=0 2>&1 | tee -a "$OUT/logs/gpu_tests_answer.log" | tail -40
[ "${BENCH:-1}" = 1 ] && timeout 150 python3 benchmarks/bench_steps.py --out "$OUT/runs/surgery" --kernels 1000 \
  --record "$OUT/logs/bench_steps_scale.json" 2>&1 | tee "$OUT/logs/bench_steps_scale.log" | tail -4
left=$((END - SECONDS))
echo "=== grid ${MODELS:-llama gpt2}: ${left} s left"
[ "$left" -gt 60 ] && timeout "$left" python3 examples/steps/hf_grid.py --out "$OUT/runs/grid" --models ${MODELS:-llama gpt2} \
  --done examples/steps/hf_grid 2>&1 | tee "$OUT/logs/hf_grid.log" | tail -14
tar czf "$OUT/runs.tar.gz" -C "$OUT" runs && rm -rf "$OUT/runs"
echo "done in ${SECONDS} s"
