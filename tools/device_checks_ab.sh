#!/usr/bin/env bash
# Issue 39: what the check verdicts kept across replay passes (`ladder --checks-memo`, which
# `l2attr profile` gives its children) save the profile job, on one machine. benchmarks/bench_profile.py
# runs alternately on the tree before the change (a copy whose l2attr/ has PATCH reversed: the
# change's `git diff BASE -- l2attr`) and on this tree, ROUNDS times each (default 2), each a cold
# `l2attr profile --metrics l2` then `--timeline`; then tools/compare_profile.py holds every sweep to
# the committed fixed runs. Under ${OUT:-out}/, packed into $OUT/checks_ab.tar.gz.
# Run as:  COMMIT=<short HEAD, typed: the device copy's .git is stale> PATCH=<file> bash tools/device_checks_ab.sh
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
L="$OUT/logs/checks_ab"; mkdir -p "$L"
ROUNDS=${ROUNDS:-2}
{ nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | head -1
  echo "commit ${COMMIT:-?}, $(date -u +%FT%TZ), patch ${PATCH:-?} ($(sha256sum "${PATCH:-/dev/null}" | cut -c1-16))"; } | tee "$L/machine.log"
OLD=/tmp/l2attr-old; rm -rf "$OLD"; mkdir -p "$OLD"
cp -r l2attr kernels metrics benchmarks tools examples pyproject.toml "$OLD/"
( cd "$OLD" && { git apply -R "$OLDPWD/$PATCH" 2>/dev/null || patch -s -R -p1 < "$OLDPWD/$PATCH"; } ) \
  || { echo "the patch does not reverse on this tree" | tee -a "$L/machine.log"; exit 2; }
grep -c "checks_memo" "$OLD/l2attr/dlrm/measure/run.py" | sed 's/^/checks_memo lines left in the old copy: /' | tee -a "$L/machine.log"
python3 -c "import torch, cupy" 2>&1 | tail -1
site=${L2ATTR_DEVICE_SITE:-none}; [ "$site" = none ] && site="" || site="$site:"
for r in $(seq "$ROUNDS"); do
  for arm in old new; do
    root=$PWD; [ "$arm" = old ] && root=$OLD
    ( cd "$root" && PYTHONPATH="$site$root" timeout 240 python3 benchmarks/bench_profile.py \
        --out "$OUT/runs-ab/${arm}_$r" --json "$L/${arm}_$r.json" ) > "$L/${arm}_$r.log" 2>&1
    echo "$arm $r: exit $? $(grep -o 'total [0-9.]* s' "$L/${arm}_$r.log" | tail -1)" | tee -a "$L/machine.log"
  done
done
for run in "$OUT"/runs-ab/*/*-profile; do
  echo "== $run" >> "$L/compare.log"
  python3 tools/compare_profile.py "$run" >> "$L/compare.log" 2>&1
  echo "compare $(basename "$(dirname "$run")"): exit $?" | tee -a "$L/machine.log"
done
mkdir -p "$OUT/pack"
for run in "$OUT"/runs-ab/*/*; do pack_profile_run "$run" "$OUT/pack/$(basename "$(dirname "$run")")/$(basename "$run")"; done
for f in "$L"/*.log; do [ "$(basename "$f")" = machine.log ] || gzip -9 "$f"; done
tar czf "$OUT/checks_ab.tar.gz" -C "$OUT" logs/checks_ab pack && ls -la "$OUT/checks_ab.tar.gz"
rm -rf "$OUT/runs-ab" "$OUT/pack" "$OUT/logs/checks_ab"
