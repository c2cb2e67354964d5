#!/usr/bin/env bash
# The GPU cycle of issue #10 (`l2attr sweep`): the sweep GPU tests, doctor (persisting-L2 limits),
# the five sweeps at their defaults from cold processes (benchmarks/bench_sweeps.py: wall time of
# each against the 3-minute target), the ncu check of the occupy sweep's held L2 share, a
# ladder with the APW+OptMT rung, DRAM bytes per point (ncu) for the hotset and pollution sweeps,
# and the report of everything. Every step runs under `timeout`, a failed step does not stop the next,
# and each step's log and exit status are kept. Results are packed into at most 6 files under
# ${OUT:-out}/: runs.tgz (run dirs), logs.tgz (logs, step status, ncu JSON), sweeps.html, sweeps.md.
# Run from the repository root on the GPU machine, e.g. (nvtx and plotly carried as wheels in .whl/):
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
#   PYTHONPATH=/tmp/site:$PWD bash tools/device_sweeps.sh
# Expected total: about 10 minutes on an H200. Each step's limit is its own or what is left of a
# 15.5-minute budget (BUDGET_S), whichever is smaller, so the whole script ends in time; the
# sweeps run in priority order (amortisation, hotset, pollution, occupy, window).
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/runs" "$OUT/logs"
export PYTHONUNBUFFERED=1
STATUS="$OUT/logs/steps.txt"
: > "$STATUS"
T0=$(date +%s)
BUDGET_S=${BUDGET_S:-930}

# step NAME LIMIT_S COMMAND...: run under timeout, log to $OUT/logs/NAME.log, record the status
step() {
  local name=$1 limit=$2; shift 2
  local left=$(( BUDGET_S - ($(date +%s) - T0) - 20 ))
  if [ "$left" -lt "$limit" ]; then limit=$left; fi
  if [ "$limit" -le 5 ]; then echo "$name skipped (budget spent)" | tee -a "$STATUS"; return; fi
  echo; echo "=== $name (limit ${limit} s, $(date -u +%T), $(( $(date +%s) - T0 )) s in)"
  local t=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" > "$OUT/logs/$name.log" 2>&1
  local rc=$?
  tail -25 "$OUT/logs/$name.log"
  echo "$name rc=$rc wall=$(( $(date +%s) - t ))s" | tee -a "$STATUS"
}

# PART=1: tests, doctor, amortisation, hotset, pollution; PART=2: occupy, window, the APW ladder,
# the ncu check of the occupy sweep (into its run dir), DRAM bytes per point; PART=all (default): both.
PART=${PART:-all}
if [ "$PART" != 2 ]; then
  step gpu_tests 180 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_sweeps.py \
    tests/test_sweep_window_abi.py tests/test_gpu_ladder.py::test_small_ladder_run
  step doctor 75 python3 -m l2attr doctor
  step sweep_amortisation 240 python3 benchmarks/bench_sweeps.py --out "$OUT/runs" amortisation   # the largest
  for axis in hotset pollution; do
    step "sweep_$axis" 180 python3 benchmarks/bench_sweeps.py --out "$OUT/runs" "$axis"
  done
fi
if [ "$PART" != 1 ]; then
  for axis in occupy window; do
    step "sweep_$axis" 180 python3 benchmarks/bench_sweeps.py --out "$OUT/runs" "$axis"
  done
  step ladder_apw 120 python3 -m l2attr ladder --rungs optmt,l2p_optmt,apw_optmt --name apw --out "$OUT/runs" --quiet
  occ=$(ls -d "$OUT"/runs/*-bench-occupy 2>/dev/null | tail -1)
  if [ -n "$occ" ]; then
    step capacity_ncu 150 python3 tools/capacity_ncu_check.py --occupy-mib 20,40 --traffic-mib 120 --run "$occ"
  fi
  # DRAM bytes per point (ncu) for the finished hotset and pollution sweeps, into their run dirs
  for axis in hotset pollution; do
    run=$(ls -d "$OUT"/runs/*-bench-"$axis" 2>/dev/null | tail -1)
    if [ -n "$run" ]; then step "dram_$axis" 170 python3 -m l2attr sweep --resume "$run" --profile --quiet; fi
  done
fi
if [ "${REPORT:-0}" = 1 ]; then
  step report_html 60 python3 -m l2attr report "$OUT/runs" --allow-partial -o "$OUT/sweeps.html"
  step report_md 60 python3 -m l2attr report "$OUT/runs" --allow-partial -o "$OUT/sweeps.md"
fi

echo; echo "=== steps"; cat "$STATUS"
echo; echo "=== pack ($(( $(date +%s) - T0 )) s in)"
tar czf "$OUT/runs.tgz" --exclude='.cache' --exclude='*.npy' --exclude='*.ncu-rep' -C "$OUT" runs && rm -rf "$OUT/runs"
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
ls -la "$OUT"
echo "device_sweeps: done in $(( $(date +%s) - T0 )) s"
