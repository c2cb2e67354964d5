#!/usr/bin/env bash
# A session's last device call, under ${OUT:-out}/: on an H200 first the ladder's three cold processes
# and their compare (tools/device_speed.sh with a budget that stops there, plus its exit probe); then,
# on any GPU, the profile record (tools/device_profile_record.sh) and the whole GPU suite
# (`pytest -m gpu`, its log in $OUT/gpu_tests.log). The report tests need plotly, and the runs nvtx, whose
# wheels do not fit beside the tree in a call: carry `.whl/plotly-min.tar.xz` and
# `.whl/nvtx-min.tar.xz` (`bash tools/pack_min.sh` makes them; device_env.sh unpacks them).
# Run as:  COMMIT=<short HEAD, typed: the device copy's .git is stale> bash tools/device_closing.sh
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU; commit ${COMMIT:-?}"
if [[ "$GPU" == *H200* ]]; then
  BUDGET=130 bash tools/device_speed.sh 2>&1 | grep -v "Profiling" | tail -30
fi
# the profile record before the suite: a call cut short by its time limit keeps the records
bash tools/device_profile_record.sh 2>&1 | grep "^bench_profile\|exit\|H100\|H200" | tail -12
# the suite's whole output straight to the file (-rfE lists what failed), so a cut call keeps what ran
{ echo "$GPU, commit ${COMMIT:-?}, $(date -u +%FT%TZ)"
  python3 -m pytest -q -rfE -m gpu tests/test_gpu_*.py -p no:cacheprovider -W ignore::DeprecationWarning 2>&1; } > "$OUT/gpu_tests.log"
tail -8 "$OUT/gpu_tests.log"
