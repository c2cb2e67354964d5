#!/usr/bin/env bash
# The whole GPU cycle that produces examples/: GPU tests, the fidelity check of the artifact family
# against a standalone build of the artifact's kernels, the default ladder (the three families) from
# a cold process (benchmark figures), the tuned family with the artifact's per-element pin, the
# ladder with L2 flushed before every call, layer B: the three families under Nsight Compute with
# the validity control, and the range-replay timeline; then bench_fast judges the fast family from
# the ladder and profile runs. The sweeps have their own cycle: tools/device_sweeps.sh.
# Run from the repository root on a GPU machine; results go under ${OUT:-out}/.
#
# On the H200 lent to this project it ran as (nvtx and plotly carried as wheels in .whl/; the
# scratch build of the artifact's kernels and the artifact's trace files in .carry/, both ignored
# by git and never committed):
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
#   PYTHONPATH=/tmp/site:$PWD CARRY=.carry bash tools/device_cycle.sh
set -uo pipefail
OUT=${OUT:-out}
CARRY=${CARRY:-.carry}
mkdir -p "$OUT/runs"
export PYTHONUNBUFFERED=1
step() { echo; echo "=== $* ($(date -u +%T))"; }

step "gpu tests"
timeout ${GPU_TESTS_TIMEOUT:-150} python3 -m pytest -q -m gpu tests 2>&1 | tee "$OUT/gpu_tests.log" | tail -8

if [ -f "$CARRY/artifact_kernels.cu" ] && [ "${SKIP_FIDELITY:-0}" != 1 ]; then
  step "fidelity: artifact family vs a standalone build of the artifact's kernels (real reuse_medium trace)"
  timeout 180 python3 tools/artifact_fidelity.py --artifact-cu "$CARRY/artifact_kernels.cu" \
    --trace "$CARRY/reuse_medium_table_500K.txt" --hot "$CARRY/hot60k_medium.txt" --sass \
    --out "$OUT/fidelity.json" 2>&1 | tee "$OUT/fidelity.log"
fi

step "ladder benchmark (defaults: both families, artifact shape, cold process)"
timeout 150 python3 benchmarks/bench_ladder.py --out "$OUT/runs" 2>&1 | tee "$OUT/bench_ladder.log" | tail -30

if [ "${SKIP_LADDER_EXTRAS:-0}" != 1 ]; then
step "ladder, tuned family with the artifact's per-element pin"
timeout 60 python3 -m l2attr ladder --family tuned --rungs l2p_optmt,combined --pin-granularity element \
  --name tuned-pin-element --out "$OUT/runs" --quiet 2>&1 | tee "$OUT/tuned_pin_element.log" | tail -25

step "ladder, both families, L2 flushed before every table call"
timeout 90 python3 -m l2attr ladder --l2 flush --rungs baseline,optmt,l2p_optmt --name flush \
  --out "$OUT/runs" --quiet 2>&1 | tee "$OUT/flush.log" | tail -40
fi

if [ "${SKIP_PROFILE:-0}" != 1 ]; then
  step "doctor"
  python3 -m l2attr doctor 2>&1 | tee "$OUT/doctor.log"
  step "layer B benchmark: profile --metrics l2 (both families, 3-arm control) + --timeline"
  timeout 330 python3 benchmarks/bench_profile.py --out "$OUT/runs" 2>&1 | tee "$OUT/profile.log" | tail -60
fi

if [ "${SKIP_CEILING:-0}" != 1 ]; then
  step "random-row gather ceiling beside the fast consumer (events and ncu)"
  timeout 200 python3 benchmarks/gather_ceiling.py --out "$OUT/runs/ceiling" 2>&1 | tee "$OUT/gather_ceiling.log" | tail -32
  rm -f "$OUT"/runs/ceiling/*.ncu-rep
fi

if [ "${SKIP_PROFILE:-0}" != 1 ]; then
  step "fast family against its targets (bench_fast judging the two runs above)"
  LADDER_RUN=$(ls -d "$OUT"/runs/*-bench | tail -1); PROFILE_RUN=$(ls -d "$OUT"/runs/*-profile | tail -1)
  python3 benchmarks/bench_fast.py --runs "$LADDER_RUN" "$PROFILE_RUN" 2>&1 | tee "$OUT/bench_fast.log"
fi

if [ -n "${PROBE_WITHOUT:-}" ]; then
  step "ncu passes of metric subsets"
  timeout 120 python3 tools/probe_passes.py --no-singles --without "$PROBE_WITHOUT" 2>&1 | tee "$OUT/probe_passes.log"
fi

step "pack results"
tar czf "$OUT/runs.tgz" --exclude='.cache' --exclude='*.npy' --exclude='child' -C "$OUT" runs && rm -rf "$OUT/runs"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.json 2>/dev/null) && rm -f "$OUT"/*.log
ls -la "$OUT"
