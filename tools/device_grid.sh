#!/usr/bin/env bash
# Issue 36's grid on the device. Two ways:
#   FRESH=1 bash tools/device_grid.sh     the whole grid (both models) in one process into an empty
#                                         folder: its wall time is the grid's record (issue 39), and
#                                         its runs replace examples/steps/hf_grid/ (one GPU per page)
#   MODELS=llama bash tools/device_grid.sh  one model, resuming from the committed runs (--done) and
#                                         the unpacked ncu cache (a GPU like theirs only)
# Each call: the ncu write-back of every step of a model (NCU_CHUNK steps per ncu child), then every
# step with its matched arm; the grid's call record (grid_calls.jsonl: wall, ncu and steps seconds)
# is written when the process ends. It stops at LIMIT seconds (550) so what it finished (whole step
# runs, the ncu cache chunk by chunk) is packed before the call's 10 minutes end. Runs come back packed
# in $OUT/grid.tar.gz; unpack into examples/steps/hf_grid/, then
# `python examples/steps/hf_grid.py --page examples/steps/hf_grid` and `python tools/readme_experiments.py --write`.
source tools/device_env.sh
set -o pipefail
MODELS=${MODELS:-llama gpt2}
DONE=(--done examples/steps/hf_grid)
[ "${FRESH:-0}" = 1 ] && DONE=()
tag=$(echo "$MODELS" | tr ' ' '-')
# shellcheck disable=SC2086  # MODELS is a list of words
timeout "${LIMIT:-550}" python3 examples/steps/hf_grid.py --out "$OUT/grid" --models $MODELS "${DONE[@]}" \
  --repeats "${REPEATS:-10}" 2>&1 | tee "$OUT/logs/hf_grid_$tag.log" | tail -30
cp "$OUT/logs/hf_grid_$tag.log" "$OUT/grid/" 2>/dev/null
find "$OUT/grid" -name step_kernels.csv -exec gzip -9 {} \;    # committed gzipped (the device tree limit)
tar czf "$OUT/grid.tar.gz" -C "$OUT" grid && rm -rf "$OUT/grid"
