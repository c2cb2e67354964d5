#!/usr/bin/env bash
# Issue 39, the profile job's seconds, second probe (after tools/device_ncu_cost.sh), under ${OUT:-out}/,
# packed into $OUT/profile_cost.tar.gz:
#  1. app-range passes of l2attr's own timeline section (l2attr/catalog/sampled.py write_section) on the small
#     program (tools/ncu_cost_probe.py, 3 ranges): as written; without its duration metric; without
#     its header metrics;
#  2. benchmarks/bench_profile.py: the default profile (each child pass prints its start-up steps)
#     and the timeline with l2attr's section (its passes, the quantities it read);
#  3. (MEMORY=1) `l2attr profile --metrics l2 --app-replay-buffer memory`, timed, and its cells
#     against step 2's (tools/compare_profile.py NEW OLD).
# SKIP_SECTIONS=1 skips step 1.
# Run as:  COMMIT=<short HEAD, typed: the device copy's .git is stale> bash tools/device_profile_cost.sh
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
L="$OUT/logs/profile_cost"; R="$OUT/profile_cost_reports"; S="$OUT/sections"
mkdir -p "$L" "$R" "$S/full" "$S/nodur" "$S/nohead"
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
P=tools/ncu_cost_probe.py
{ nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | head -1
  echo "commit ${COMMIT:-?}, $(date -u +%FT%TZ)"; } | tee "$L/machine.log"
python3 - "$S" <<'PY'
import sys
from pathlib import Path
from l2attr.catalog.sampled import section_text, sampled_names
root = Path(sys.argv[1]); text = section_text("gh100", sampled_names("gh100"))
(root / "full/L2attrTimeline.section").write_text(text)
nodur = text.replace('  Metrics { Label: "gpu__time_duration.sum" Name: "gpu__time_duration.sum" }\n', "")
(root / "nodur/L2attrTimeline.section").write_text(nodur.replace("Metrics {\n}\n", ""))
head = text[text.index("Header {"):text.index("Body {")]
(root / "nohead/L2attrTimeline.section").write_text(text.replace(head, ""))
PY
python3 $P --n 1 --m 1 > /dev/null 2>&1 || true
for v in $([ "${SKIP_SECTIONS:-0}" = 1 ] || echo full nodur nohead); do
  timeout 60 "$NCU" --config-file off --replay-mode app-range --cache-control none --clock-control none --nvtx \
    --nvtx-include 'regex:l2attr@probe:.*/' --section-folder "$S/$v" --section L2attrTimeline --pm-sampling-interval 1000 \
    -o "$R/section_$v" -f python3 $P --n 3 --m 0 --tag "section_$v" > "$L/section_$v.log" 2>&1
  echo "section $v: exit $?, passes $(grep -c '^PROBE' "$L/section_$v.log")" | tee -a "$L/summary.log"
done
[ "${SKIP_SECTIONS:-0}" = 1 ] || timeout 200 python3 -m l2attr.profile.pm_child timeline "$R/section_full.ncu-rep" 2>&1 | python3 -c "
import json, sys; text = sys.stdin.read(); d = json.loads(text) if text.strip().startswith('{') else {'error': text[-300:]}
print('section_full report:', d.get('error') or [(a['range'], sorted(a['series']), sorted(a['missing']), a['duration_ns'],
      a['interval_ns'], a['pass_groups'], len(a['kernels'] or [])) for a in d['actions']][:1])
" 2>&1 | tee -a "$L/summary.log"
timeout 300 python3 benchmarks/bench_profile.py --out "$OUT/runs-profile" --json "$OUT/profile.json" > "$L/bench_profile.log" 2>&1
echo "bench_profile exit $?" | tee -a "$L/summary.log"
grep "^bench_profile" "$L/bench_profile.log" | tee -a "$L/summary.log"
T=$(ls -d "$OUT"/runs-profile/*-timeline 2>/dev/null | tail -1)
[ -n "$T" ] && python3 -c "
import json, sys, pandas as pd; m = json.load(open('$T/manifest.json'))
print('timeline ranges', m.get('ranges'), 'warnings', m.get('warnings'))
t = pd.read_csv('$T/timeline.csv'); print('timeline quantities', sorted(t['quantity'].unique()), len(t), 'rows')
" 2>&1 | tee -a "$L/summary.log"
grep -c "Application replay pass" "$L/bench_profile.log" | sed 's/^/replay pass lines in bench_profile.log: /' | tee -a "$L/summary.log"
if [ "${MEMORY:-0}" = 1 ]; then
  s0=$(date +%s.%N)
  timeout 200 python3 -m l2attr profile --metrics l2 --app-replay-buffer memory --name profile-memory \
    --out "$OUT/runs-profile" > "$L/profile_memory.log" 2>&1
  echo "profile --app-replay-buffer memory: exit $?, wall $(python3 -c "import time; print(round(time.time() - $s0, 1))") s" | tee -a "$L/summary.log"
  NEW=$(ls -d "$OUT"/runs-profile/*-profile-memory | tail -1); OLD=$(ls -d "$OUT"/runs-profile/*-profile | tail -1)
  python3 -c "import json; m = json.load(open('$NEW/manifest.json')); print('memory run: ncu', m.get('wall_s'), 'parent', m.get('parent_s'), 'passes', m.get('replayer_passes'))" 2>&1 | tee -a "$L/summary.log"
  timeout 60 python3 tools/compare_profile.py "$NEW" "$OLD" 2>&1 | tail -8 | tee -a "$L/summary.log"
fi
cp "$OUT/profile.json" "$L/" 2>/dev/null
tar czf "$OUT/profile_cost.tar.gz" --exclude='*.ncu-rep' -C "$OUT" logs/profile_cost runs-profile
ls -la "$OUT/profile_cost.tar.gz"
