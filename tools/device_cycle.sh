#!/usr/bin/env bash
# The whole GPU cycle that produced examples/: GPU tests, the artifact-shape ladder from a cold
# process (benchmark figures), doctor, and the full layer-B profile sweep with its control.
# Run from the repository root on a GPU machine; results go under ${OUT:-out}/.
# On the H200 lent to this project it ran as:
#   python3 -m pip install --no-index --no-deps --target /tmp/site .whl/*.whl   # nvtx, ncu-report, plotly
#   PYTHONPATH=/tmp/site:$PWD bash tools/device_cycle.sh
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/runs"
export PYTHONUNBUFFERED=1
step() { echo; echo "=== $* ($(date -u +%T))"; }

step "gpu tests"
timeout 120 python3 -m pytest -q -m gpu tests 2>&1 | tee "$OUT/gpu_tests.log" | tail -5

step "ladder benchmark (artifact shape, cold process)"
python3 benchmarks/bench_ladder.py --out "$OUT/runs" 2>&1 | tee "$OUT/bench_ladder.log"

step "ladder, per-element pin (the artifact's granularity)"
python3 -m l2attr ladder --rungs optmt,l2p_optmt --pin-granularity element --name pin-element --out "$OUT/runs" --quiet 2>&1 | tee "$OUT/pin_element.log" | tail -20

step "ladder, L2 flushed before every table call"
python3 -m l2attr ladder --l2 flush --rungs baseline,optmt,l2p_optmt --name flush --out "$OUT/runs" --quiet 2>&1 | tee "$OUT/flush.log" | tail -20

if [ "${SKIP_PROFILE:-0}" = 1 ]; then
  step "pack results"; tar czf "$OUT/runs.tgz" --exclude='.cache' -C "$OUT" runs && rm -rf "$OUT/runs"; exit 0
fi

step "doctor"
python3 -m l2attr doctor 2>&1 | tee "$OUT/doctor.log"

step "profile --metrics l2 (full sweep + validity control)"
start=$(date +%s)
timeout 330 python3 -m l2attr profile --metrics l2 --out "$OUT/runs" --name profile 2>&1 | tee "$OUT/profile.log" | tail -60
echo "profile wall: $(( $(date +%s) - start )) s" | tee -a "$OUT/profile.log"

step "pack results"
tar czf "$OUT/runs.tgz" --exclude='.cache' -C "$OUT" runs && rm -rf "$OUT/runs"
ls -la "$OUT"
