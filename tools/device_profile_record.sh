#!/usr/bin/env bash
# Issue 39's profile record alone (when device time is short), under ${OUT:-out}/, packed into
# $OUT/profile_record.tar.gz: the machine; one `import torch, cupy` first, untimed, so torch's
# bytecode is written as an installed torch's would be (device_env.sh: the image turns writing
# off); then benchmarks/bench_profile.py (`l2attr profile --metrics l2`, then `--timeline`, cold
# processes; target <= 60 s, the validity control clear) and the two run folders' manifests,
# tables and child manifests.
# Run as:  COMMIT=<short HEAD, typed: the device copy's .git is stale> bash tools/device_profile_record.sh
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
L="$OUT/logs/profile_record"; mkdir -p "$L"
{ nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | head -1
  echo "commit ${COMMIT:-?}, $(date -u +%FT%TZ)"
  echo "PYTHONDONTWRITEBYTECODE in the image: ${L2ATTR_DEVICE_DONTWRITEBYTECODE:-?} (device_env.sh unsets it)"; } | tee "$L/machine.log"
python3 -c "import torch, cupy" 2>&1 | tail -1
timeout 240 python3 benchmarks/bench_profile.py --out "$OUT/runs-profile" --json "$L/profile.json" > "$L/bench_profile.log" 2>&1
echo "bench_profile exit $?" | tee -a "$L/machine.log"
grep "^bench_profile" "$L/bench_profile.log"
mkdir -p "$OUT/pack"
for run in "$OUT"/runs-profile/*; do pack_profile_run "$run" "$OUT/pack/$(basename "$run")"; done
tar czf "$OUT/profile_record.tar.gz" -C "$OUT" logs/profile_record pack && ls -la "$OUT/profile_record.tar.gz"
# a call brings back a limited count of files: what the archive holds leaves $OUT (in one call after
# tools/device_speed.sh, the run folders left here cost that script's archive its place)
rm -rf "$OUT/runs-profile" "$OUT/pack" "$OUT/logs/profile_record"
