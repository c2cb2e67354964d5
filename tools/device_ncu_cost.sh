#!/usr/bin/env bash
# Issue 39, the profile job's seconds: what a child pays under ncu, measured on one small program
# (tools/ncu_cost_probe.py), everything under ${OUT:-out}/, packed into $OUT/ncu_cost.tar.gz:
#  1. the program plain, twice (with torch): the process's steps without a profiler;
#  2. under application replay with the `l2` metric set, 100 profiled + 300 unprofiled launches,
#     with torch: passes (PROBE lines), each pass's start-up steps, ms per launch of each kind;
#  3. the same with an NVTX filter that matches nothing: the cost of ncu with no kernel profiled;
#  4. the same as 2 ending in os._exit: does the report keep all 100 kernels? (ncu -i ... | count);
#  5. app-range replay of 3 ranges (no torch): --section PmSampling; the same with
#     --pm-sampling-max-passes 1; only gpu__time_duration.sum: passes of each;
#  6. ncu's section files for PM sampling, its --help and --list-sections: what a section asks for.
# Run as:  COMMIT=<short HEAD, typed: the device copy's .git is stale> bash tools/device_ncu_cost.sh
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
L="$OUT/logs/ncu_cost"; R="$OUT/ncu_cost_reports"
mkdir -p "$L" "$R"
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
P=tools/ncu_cost_probe.py
L2=$(python3 -c "from l2attr.profile.metricsets import resolve_metrics; print(','.join(resolve_metrics('l2','gh100').metrics))")
APP=("$NCU" --config-file off --replay-mode application --app-replay-match grid --app-replay-mode strict
     --cache-control none --clock-control none --nvtx)
RANGE=("$NCU" --config-file off --replay-mode app-range --cache-control none --clock-control none --nvtx
       --nvtx-include 'regex:l2attr@probe:.*/')
timed() {   # name, command...: wall seconds and the output into $L/<name>.log
  local name=$1; shift
  local t0=$SECONDS s0; s0=$(date +%s.%N)
  timeout 150 "$@" > "$L/$name.log" 2>&1; local rc=$?
  local wall; wall=$(python3 -c "import time; print(round(time.time() - $s0, 2))")
  echo "$name: exit $rc, wall $wall s, PROBE lines $(grep -c '^PROBE' "$L/$name.log")" | tee -a "$L/summary.log"
}
{ nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | head -1
  echo "commit ${COMMIT:-?}, $(date -u +%FT%TZ), ncu $NCU"; "$NCU" --version | tail -1; } | tee "$L/machine.log"
python3 $P --n 1 --m 1 > /dev/null 2>&1 || true   # NVRTC once, outside every timed run

timed plain1 python3 $P --torch --tag plain1
timed plain2 python3 $P --torch --tag plain2
timed app_l2 "${APP[@]}" --nvtx-include 'regex:l2attr@probe:.*/' --metrics "$L2" -o "$R/app_l2" -f python3 $P --torch --tag app_l2
timed app_none "${APP[@]}" --nvtx-include 'regex:l2attr@nothing:.*/' --metrics "$L2" -o "$R/app_none" -f python3 $P --torch --tag app_none
timed app_fast "${APP[@]}" --nvtx-include 'regex:l2attr@probe:.*/' --metrics "$L2" -o "$R/app_fast" -f python3 $P --torch --fast-exit --tag app_fast
for r in app_l2 app_fast; do
  echo "$r kernels in report: $("$NCU" -i "$R/$r.ncu-rep" --page raw --csv --metrics gpu__time_duration.sum 2>&1 | grep -c '"rd"')" | tee -a "$L/summary.log"
done
timed range_pm "${RANGE[@]}" --section PmSampling --pm-sampling-interval 1000 -o "$R/range_pm" -f python3 $P --n 3 --m 0 --tag range_pm
timed range_pm_1pass "${RANGE[@]}" --section PmSampling --pm-sampling-interval 1000 --pm-sampling-max-passes 1 -o "$R/range_pm_1pass" -f python3 $P --n 3 --m 0 --tag range_pm_1pass
timed range_dur "${RANGE[@]}" --metrics gpu__time_duration.sum -o "$R/range_dur" -f python3 $P --n 3 --m 0 --tag range_dur
"$NCU" --help > "$L/ncu_help.txt" 2>&1
"$NCU" --list-sections > "$L/ncu_list_sections.txt" 2>&1
SEC=$(dirname "$(readlink -f "$NCU")")
find "$SEC" /opt/nvidia /usr/local/cuda*/ -name "PmSampling*.section" 2>/dev/null | head -5 | while read -r f; do
  cp "$f" "$L/$(basename "$f")"; echo "section file: $f" | tee -a "$L/summary.log"; done
grep -h '^PROBE' "$L"/*.log > "$L/probes.jsonl"
tar czf "$OUT/ncu_cost.tar.gz" -C "$OUT" logs/ncu_cost
ls -la "$OUT/ncu_cost.tar.gz"
