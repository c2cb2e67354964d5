#!/usr/bin/env bash
# The named host charges on the H200 (issue 19, item 4): one default-shaped ladder of every family
# with the access-policy window rung, so samples.csv records the pin step on the host clock
# (pin_wall_time_us), the window's host call (prepare_wall_time_us) and its persisting set-aside
# and reset per repeat (window_setaside_us, window_reset_us); then the Markdown report of that run,
# whose ladder and verdict tables print them as measured (no longer derived, no longer "not
# measured"). About 60 s of device time. Results under ${OUT:-out}/.
#   bash tools/device_charges.sh
# Then commit $OUT/runs/*-charges as examples/charges/<name> (samples.csv gzipped, as
# examples/reproduction/ does) and its log as examples/logs/charges.log.
set -uo pipefail
. "$(dirname "$0")/device_env.sh"     # OUT, wheels, PYTHONPATH
echo "=== ladder with the window rung ($(date -u +%T))"
timeout 240 python3 -m l2attr ladder --rungs baseline,optmt,rpf_optmt,l2p_optmt,combined,apw_optmt \
  --out "$OUT/runs" --name charges 2>&1 | tee "$OUT/logs/charges.log" | tail -30
run=$(ls -d "$OUT"/runs/*-charges | tail -1)
echo "=== report of $run"
timeout 120 python3 -m l2attr report "$run" -o "$OUT/charges.md" 2>&1 | tail -3
python3 - "$run" <<'PY' | tee -a "$OUT/logs/charges.log"
import sys, pandas as pd
s = pd.read_csv(f"{sys.argv[1]}/samples.csv")
for col in ("pin_wall_time_us", "prepare_wall_time_us", "window_setaside_us", "window_reset_us"):
    v = s[col].dropna() if col in s else pd.Series(dtype=float)
    print(f"{col}: {len(v)} values, median {v.median():.2f} us" if len(v) else f"{col}: NOT RECORDED")
PY
