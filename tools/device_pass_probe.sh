#!/usr/bin/env bash
# Which metrics of the l2 set cost Nsight Compute a replay pass, and what one profiled launch costs
# in each pass (issue 39: the profile job's floor is its profiled launches times its passes).
# tools/ncu_cost_probe.py (no torch; 50 launches each in its own l2attr@probe range, 50 outside any)
# under application replay with l2attr's options, once per metric list: the whole l2 set, the set
# less one group at a time, and single groups. Each run's PROBE lines count its passes and give the
# milliseconds per profiled launch of each pass. Everything under ${OUT:-out}/, packed into
# $OUT/pass_probe.tar.gz (logs/pass_probe: summary.log, probes.jsonl, one log per run, ncu --help).
# Run as:  COMMIT=<short HEAD, typed: the device copy's .git is stale> bash tools/device_pass_probe.sh
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
L="$OUT/logs/pass_probe"; R="$OUT/pass_probe_reports"; mkdir -p "$L" "$R"
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
P=tools/ncu_cost_probe.py
APP=("$NCU" --config-file off --replay-mode application --app-replay-match grid --app-replay-mode strict
     --cache-control none --clock-control none --nvtx --nvtx-include 'regex:l2attr@probe:.*/')
{ nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | head -1
  echo "commit ${COMMIT:-?}, $(date -u +%FT%TZ), ncu $NCU"; "$NCU" --version | tail -1; } | tee "$L/machine.log"
python3 $P --n 1 --m 1 > /dev/null 2>&1 || true   # NVRTC once, outside every run
# name<TAB>metrics, from the l2 set as l2attr resolves it for gh100
python3 - > "$L/variants.tsv" <<'EOF'
from l2attr.profile.metricsets import resolve_metrics
full = resolve_metrics("l2", "gh100").metrics
groups = {"duration": [m for m in full if m.startswith("gpu__time_duration")],
          "evict_last": [m for m in full if "evict_last" in m],
          "dram": [m for m in full if m.startswith("dram__")],
          "fill": [m for m in full if "fill" in m]}
groups["lookup"] = [m for m in full if not any(m in g for g in groups.values())]
print("l2\t" + ",".join(full))
for name, ms in groups.items():
    print(f"no_{name}\t" + ",".join(m for m in full if m not in ms))
for name, ms in groups.items():
    print(f"only_{name}\t" + ",".join(ms))
EOF
while IFS=$'\t' read -r name metrics; do
  s0=$(date +%s.%N)
  timeout 100 "${APP[@]}" --metrics "$metrics" -o "$R/$name" -f python3 $P --n 50 --m 50 --tag "$name" \
    > "$L/$name.log" 2>&1
  rc=$?
  wall=$(python3 -c "import time; print(round(time.time() - $s0, 2))")
  echo "$name: exit $rc, wall $wall s, passes $(grep -c '^PROBE' "$L/$name.log"), metrics $metrics" | tee -a "$L/summary.log"
done < "$L/variants.tsv"
"$NCU" --help > "$L/ncu_help.txt" 2>&1
grep -h '^PROBE' "$L"/*.log > "$L/probes.jsonl"
python3 - "$L/probes.jsonl" <<'EOF' | tee -a "$L/summary.log"
import json, sys
rows = [json.loads(line.split("PROBE ", 1)[1]) for line in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["tag"], []).append(r["per_profiled_ms"])
for tag, ms in by.items():
    print(f"{tag}: ms per profiled launch, pass by pass: {', '.join(f'{x:.1f}' for x in ms)}; sum {sum(ms):.1f}")
EOF
tar czf "$OUT/pass_probe.tar.gz" -C "$OUT" logs/pass_probe && ls -la "$OUT/pass_probe.tar.gz"
rm -rf "$R" "$OUT/logs"
