#!/usr/bin/env bash
# Issue 36 item 6 on the H200 (one call, < 10 min): every shipped step re-measured with the current
# arms (matched where a write-back is given, clean/dirty/start always), the compiled prefill's program
# check among the GPU tests, the attribution's scale record (chains of 250, 500, 1,000 kernels), and
# the README's `l2attr.step` snippet run as written (l2attr.write_back, then the step).
#   COMMIT=<short HEAD, typed: the device copy's .git is stale> bash tools/device_steps_answer.sh
source tools/device_env.sh
set -o pipefail
python3 benchmarks/bench_steps.py --out "$OUT/runs/surgery" --kernels 250 500 1000 \
  --record "$OUT/logs/bench_steps_scale.json" 2>&1 | tee "$OUT/logs/bench_steps_scale.log" | tail -4
python3 benchmarks/bench_steps.py --out "$OUT/runs/surgery" --edges 2 --bad 2>&1 | tee "$OUT/logs/bench_steps.log" | grep "wall"
# the README's step snippet, written out as it stands, run as a user runs it (its runs under $OUT/runs/snippet)
python3 tools/readme_snippet.py /tmp/my_step.py own-step && mkdir -p "$OUT/runs/snippet" && \
  (cd "$OUT/runs/snippet" && python3 /tmp/my_step.py) 2>&1 | tee "$OUT/logs/readme_step_snippet.log" | tail -6
tar czf "$OUT/runs.tar.gz" -C "$OUT" runs && rm -rf "$OUT/runs"
