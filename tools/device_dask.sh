#!/usr/bin/env bash
# Issue 21 on one H200 (the only kind lent): the default ladder in one process, then the same
# ladder with --workers 1 (Dask: one worker process pinned to the GPU, dask-cuda's LocalCUDACluster
# when it imports), and their cells compared by tools/compare_runs.py (consumer medians against the
# larger run-to-run spread). Under 4 minutes. Results under ${OUT:-out}/ (4 files).
#
# Wheels, fetched here once (README of the device tool, "Notes"), carried as .whl/ (3.2 MB):
#   for w in dask==2026.8.0 distributed==2026.8.0 dask-cuda==26.10.0 tornado==6.6.1 zict==3.0.0 \
#            tblib==3.2.2 partd==1.4.2 locket==1.0.0; do
#     python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
#       --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl "$w"; done
# (the device has cloudpickle, psutil, msgpack, toolz, fsspec, click, sortedcontainers, pyyaml, jinja2,
# packaging, urllib3, nvidia-ml-py and cuda-core; dask-cuda's rapids-dask-dependency is a pin only.)
# Run as:  bash tools/device_dask.sh      (carry: .whl, with nvtx's wheel beside these)
set -uo pipefail
. "$(dirname "$0")/device_env.sh"     # OUT, wheels, PYTHONPATH
L="$OUT/logs"
step() { echo; echo "=== $* ($(date -u +%T))"; }

step "software"
python3 -c "import dask, distributed; print('dask', dask.__version__, 'distributed', distributed.__version__)" 2>&1 | tee "$L/software.log"
python3 -c "import dask_cuda; print('dask-cuda', dask_cuda.__version__)" 2>&1 | tail -1 | tee -a "$L/software.log"
nvidia-smi -L 2>&1 | tee -a "$L/software.log"

step "default ladder, one process (today's path)"
/usr/bin/time -f "wall %e s" timeout 110 python3 -m l2attr ladder --out "$OUT/runs" --name one --quiet 2>&1 \
  | tee "$L/ladder_one.log" | tail -6

step "default ladder, --workers 1 (Dask, one worker pinned to the GPU, 12 family x profile units)"
/usr/bin/time -f "wall %e s" timeout 150 python3 -m l2attr ladder --workers 1 --out "$OUT/runs" --name workers1 \
  --quiet 2>&1 | tee "$L/ladder_workers1.log" | grep -v "^\s*$" | grep -E "cluster:|run dir|\[[0-9]+/|spread|finished|error|wall" | tail -20

step "cells: one process vs --workers 1"
ONE=$(ls -d "$OUT"/runs/*-one | head -1); W1=$(ls -d "$OUT"/runs/*-workers1 | head -1)
python3 tools/compare_runs.py "$ONE" "$W1" --csv "$OUT/compare_cells.csv" 2>&1 | tee "$OUT/compare.txt"

step "pack"
tar czf "$OUT/runs.tgz" --exclude='.cache' -C "$OUT" runs && rm -rf "$OUT/runs"
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
ls -la "$OUT"
