#!/usr/bin/env bash
# Step attribution's GPU cycle (issue 18), in <= 8 minutes on one H200:
#   1. GPU tests of steps (tests/test_gpu_step.py: self-check, clean flush, re-warm, edge apart, graph step)
#   2. the shipped steps with their top edges measured by selective eviction, the Llama grid
#      (decode b{1,16} x KV{2K,8K} + b8 x 4K, prefill 512 / 2K), the CUDA-graph steps, the DLRM
#      steps: benchmarks/bench_steps.py, which prints each attribution's wall time
#   3. `l2attr step --graph` through the CLI on a marked script
#   4. the DLRM step under `l2attr step --ncu --ncu-metrics dram` (DRAM bytes, cache control none
#      vs all): no pin, then the inline pin while time is left
# Everything lands in $OUT/steps.tgz (runs/ and logs/) beside $OUT/summary.log: two files.
# Each stage has its own timeout and the whole a budget (BUDGET_S, default 450 s); a failing stage
# is logged and the next one runs. Stages can be skipped: SKIP_TESTS=1, SKIP_BENCH=1, SKIP_CLI=1,
# SKIP_NCU=1. Run on the H200 as:  bash tools/device_steps.sh   (nvtx carried as a wheel in .whl/)
set -uo pipefail
OUT=${OUT:-out}
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
RUNS="$OUT/runs"
L="$OUT/logs"
mkdir -p "$RUNS" "$L"
SUMMARY="$OUT/summary.log"
exec > >(tee -a "$SUMMARY") 2>&1
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
BUDGET=${BUDGET_S:-450}
START=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - START) )); }

# stage NAME LIMIT_S CMD...: run CMD with the smaller of LIMIT_S and what is left of the budget,
# its output in logs/NAME.log; print its status, wall time and the log's tail; never stop the script.
stage() {
  local name=$1 limit=$2; shift 2
  local l; l=$(left)
  local t=$(( limit < l ? limit : l ))
  if [ "$t" -lt 30 ]; then echo "=== SKIP $name: $l s of the budget left"; return 0; fi
  echo; echo "=== $name (limit $t s, $(date -u +%T))"
  set -x
  local s; s=$(date +%s)
  timeout -k 10 "$t" "$@" > "$L/$name.log" 2>&1
  local rc=$?
  { set +x; } 2>/dev/null
  echo "=== $name: rc=$rc wall $(( $(date +%s) - s )) s"
  tail -n 30 "$L/$name.log"
  return 0
}

nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader || true
python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)" || true

[ "${SKIP_TESTS:-0}" = 1 ] || stage gpu_tests 150 python3 -m pytest -q -m gpu tests/test_gpu_step.py

[ "${SKIP_BENCH:-0}" = 1 ] || stage bench_steps 230 python3 benchmarks/bench_steps.py --out "$RUNS"

[ "${SKIP_CLI:-0}" = 1 ] || stage step_cli_graph 60 python3 -m l2attr step --graph --edges 1 \
  --name selfcheck-quarter-l2-graph-marked --out "$RUNS" -- python3 examples/steps/marked_selfcheck.py

if [ "${SKIP_NCU:-0}" != 1 ]; then
  cd examples/steps
  stage step_ncu_dlrm_no_pin 170 python3 -m l2attr step --ncu --ncu-metrics dram --edges 0 --out "$RUNS" \
    -- python3 marked_dlrm.py no-pin
  stage step_ncu_dlrm_inline 150 python3 -m l2attr step --ncu --ncu-metrics dram --edges 0 --out "$RUNS" \
    -- python3 marked_dlrm.py inline
  cd - >/dev/null
fi

echo; echo "=== pack ($(( $(date +%s) - START )) s since start)"
rm -f "$RUNS"/*/ncu/*.ncu-rep.tmp 2>/dev/null
tar czf "$OUT/steps.tgz" --exclude='*.ncu-rep' --exclude='.cache' -C "$OUT" runs logs && rm -rf "$RUNS" "$L"
ls -la "$OUT"
echo "=== done in $(( $(date +%s) - START )) s"
