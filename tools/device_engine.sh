#!/usr/bin/env bash
# The engine's GPU cycle: GPU tests of the engine, the README snippet as a fresh script, the two
# shipped experiments (time + profile), and the default ladder (blocking timer) beside a spin-300
# ladder of the fast family in the same call. Results under ${OUT:-out}/ (packed: 8 files max).
# On the H200 it ran as:  bash tools/device_engine.sh   (nvtx carried as a wheel in .whl/)
set -uo pipefail
. "$(dirname "$0")/device_env.sh"     # OUT, wheels, PYTHONPATH
step() { echo; echo "=== $* ($(date -u +%T))"; }
L="$OUT/logs"

if [ "${SKIP_TESTS:-0}" != 1 ]; then
step "gpu tests of the engine"
timeout 240 python3 -m pytest -q -m gpu ${GPU_TESTS:-tests/test_gpu_experiment.py} 2>&1 | tee "$L/gpu_tests.log" | tail -15
fi

if [ "${SKIP_SNIPPET:-0}" != 1 ]; then
step "README snippet, copied into a fresh script"
mkdir -p /tmp/fresh && python3 tools/readme_snippet.py /tmp/fresh/my_pair.py
(cd /tmp/fresh && timeout 240 python3 my_pair.py) 2>&1 | tee "$L/snippet.log" | tail -20
cp -r /tmp/fresh/runs/* "$OUT/runs/" 2>/dev/null
fi

if [ "${SKIP_EXPERIMENTS:-0}" != 1 ]; then
step "shipped experiment (a): activation handoff"
timeout 400 python3 examples/experiments/activation_handoff.py --out "$OUT/runs" 2>&1 | tee "$L/activation_handoff.log" | tail -30
step "shipped experiment (b): KV pin -> SDPA"
timeout 300 python3 examples/experiments/kv_pin_sdpa.py --out "$OUT/runs" 2>&1 | tee "$L/kv_pin_sdpa.log" | tail -20
fi

if [ "${SKIP_STEPS:-0}" != 1 ]; then
step "step attribution: the shipped steps (benchmark: wall time of each)"
timeout 540 python3 benchmarks/bench_steps.py --out "$OUT/runs" 2>&1 | tee "$L/bench_steps.log" | tail -12
step "l2attr step -- python examples/steps/marked_step.py"
timeout 120 python3 -m l2attr step --out "$OUT/runs" -- python3 examples/steps/marked_step.py 2>&1 | tee "$L/step_cli.log" | tail -16
fi

if [ "${SKIP_STEP_NCU:-0}" != 1 ]; then
step "l2attr step --ncu: DRAM bytes per kernel, cache control none vs all (self-check, Llama decode)"
(cd examples/steps && timeout 200 python3 -m l2attr step --ncu --out "$OUT/runs" -- python3 marked_selfcheck.py) 2>&1 | tee "$L/step_ncu_selfcheck.log" | tail -12
(cd examples/steps && timeout 300 python3 -m l2attr step --ncu --out "$OUT/runs" -- python3 marked_llama_decode.py) 2>&1 | tee "$L/step_ncu_llama.log" | tail -12
fi

if [ "${SKIP_LADDER:-0}" != 1 ]; then
step "default ladder (blocking timer), cold process"
/usr/bin/time -f "ladder wall %e s" timeout 120 python3 -m l2attr ladder --out "$OUT/runs" --name blocking 2>&1 | tee "$L/ladder_blocking.log" | tail -25
if [ "${LADDER_TWICE:-0}" = 1 ]; then
step "default ladder again, a second process on the same GPU"
/usr/bin/time -f "ladder wall %e s" timeout 120 python3 -m l2attr ladder --out "$OUT/runs" --name blocking-2 2>&1 | tee "$L/ladder_blocking_2.log" | tail -8
fi
if [ "${SKIP_SPIN300:-0}" != 1 ]; then
step "fast family, spin 300 us (the comparison for the blocking timer)"
timeout 90 python3 -m l2attr ladder --family fast --timer spin --spin-us 300 --out "$OUT/runs" --name fast-spin300 --quiet 2>&1 | tee "$L/ladder_spin300.log" | tail -12
fi
fi

if [ "${PROFILE:-0}" = 1 ]; then
step "layer B benchmark: default profile --metrics l2 + control + timeline"
timeout 420 python3 benchmarks/bench_profile.py --out "$OUT/runs" 2>&1 | tee "$L/profile.log" | tail -40
fi

step "pack"
rm -f "$OUT"/runs/*/ncu/*.ncu-rep.tmp 2>/dev/null
tar czf "$OUT/runs.tgz" --exclude='step-cache-*.ncu-rep' --exclude='.cache' --exclude='*.npy' --exclude='child' -C "$OUT" runs && rm -rf "$OUT/runs"
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
ls -la "$OUT"
