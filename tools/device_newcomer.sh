#!/usr/bin/env bash
# Issue 26's newcomer's five minutes on the H200, each step timed into $OUT/newcomer.md: a fresh
# copy of the tree (the device has no network, so no `git clone`: the copied tree stands in for one),
# the README's install (no downloads: torch and cupy as the device has them, the carried wheels),
# the README's "your own pair" snippet written out exactly as it stands (tools/readme_snippet.py)
# and run, its report page made, then opened in headless chromium (tools/report_screens.py) where
# the device has one.
#   COMMIT=<short HEAD, typed: the device copy's .git is stale> bash tools/device_newcomer.sh
source tools/device_env.sh
set -o pipefail
LOG="$OUT/newcomer.md"; NEW=/tmp/newcomer
step() { local t0=$SECONDS; echo "## $1" >> "$LOG"; echo '```' >> "$LOG"; shift
         echo "\$ $*" >> "$LOG"; ( eval "$@" ) >> "$LOG" 2>&1; local rc=$?
         echo '```' >> "$LOG"; echo "exit $rc, $((SECONDS - t0)) s" >> "$LOG"; echo >> "$LOG"; return 0; }
echo "# A newcomer's five minutes (H200, tree ${COMMIT:-unknown}, $(date -u +%FT%TZ))" > "$LOG"; echo >> "$LOG"
rm -rf "$NEW"
step "1. the repository" "mkdir -p $NEW && tar --exclude=.whl --exclude=.venv --exclude=out -cf - . | tar -xf - -C $NEW && ls $NEW | head -20"
step "2. install (README: pip install -e '.[gpu]'; no network on the device: its own torch and cupy, the carried wheels in /tmp/site, the tree on PYTHONPATH in place of the editable install)" \
  "cd $NEW && PYTHONPATH=/tmp/site:$NEW python3 -m l2attr --version && python3 -c 'import torch, cupy; print(\"torch\", torch.__version__, \"cupy\", cupy.__version__)'"
step "3. the README snippet, written out as it stands" "cd $NEW && python3 tools/readme_snippet.py my_pair.py && cat my_pair.py"
step "4. run it" "cd $NEW && PYTHONPATH=/tmp/site:$NEW timeout 240 python3 my_pair.py"
step "5. its report page" "cd $NEW && PYTHONPATH=/tmp/site:$NEW python3 -m l2attr report runs/*-my-pair -o my-pair.html && ls -la my-pair.html"
step "6. the page opened (headless chromium, 1280x800)" "cd $NEW && (command -v chromium || command -v chromium-browser || command -v google-chrome) && PYTHONPATH=/tmp/site:$NEW python3 tools/report_screens.py my-pair.html || echo 'no chromium on this machine: the page is under \$OUT'"
cp "$NEW/my-pair.html" "$OUT/" 2>/dev/null || true
cat "$LOG" | tail -40
