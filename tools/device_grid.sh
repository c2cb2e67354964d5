#!/usr/bin/env bash
# Issue 36's grid on the H200, one model per call (each under the 10-minute call limit): the ncu
# write-back of every step of the model (one process per cache control), then every step with its
# matched arm, skipping the steps whose runs are already committed under examples/steps/hf_grid.
# Runs and the ncu cache come back packed in $OUT/grid.tar.gz; unpack into examples/steps/hf_grid/,
# then `python examples/steps/hf_grid.py --page examples/steps/hf_grid` and
# `python tools/readme_experiments.py --write`. The grid stops at LIMIT seconds (530) so that what it
# finished (whole step runs, the ncu cache chunk by chunk) is packed before the call's 10 minutes end;
# the next call resumes from the committed runs (--done) and the unpacked ncu cache.
#   MODEL=llama bash tools/device_grid.sh ; MODEL=gpt2 bash tools/device_grid.sh
source tools/device_env.sh
set -o pipefail
timeout "${LIMIT:-530}" python3 examples/steps/hf_grid.py --out "$OUT/grid" --models "${MODEL:-llama}" --done examples/steps/hf_grid \
  --repeats "${REPEATS:-10}" 2>&1 | tee "$OUT/logs/hf_grid_${MODEL:-llama}.log" | tail -14
cp "$OUT/logs/hf_grid_${MODEL:-llama}.log" "$OUT/grid/" 2>/dev/null
tar czf "$OUT/grid.tar.gz" -C "$OUT" grid && rm -rf "$OUT/grid"
