#!/usr/bin/env bash
# Issue 26's newcomer on a CPU machine (the half the H200 log, device_newcomer.sh, cannot show: the
# device has no network): `git clone` of the committed tree, the README's test set-up command in a
# fresh virtualenv, as written, then `l2attr doctor` (which says what this machine lacks for the
# main job) and the README snippet on a machine with torch but no GPU (one line, a non-zero exit;
# torch's CPU wheel is added to the venv for it, $TORCH_CPU, as this machine's package index names
# it). Each step timed into examples/logs/newcomer_cpu.md.
#   bash tools/newcomer_cpu.sh
set -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LOG="$ROOT/examples/logs/newcomer_cpu.md"; NEW=/tmp/newcomer-cpu; VENV=/tmp/newcomer-cpu-venv
TEST_CMD=$(grep -m1 "pip install -e '.\[dev\]'" "$ROOT/README.md")     # the README's own line
TMP=$(mktemp)
step() { local t0=$SECONDS; echo "## $1" >> "$TMP"; echo '```' >> "$TMP"; shift
         echo "\$ $*" >> "$TMP"; ( eval "$@" ) 2>&1 | tail -${TAIL:-12} >> "$TMP"; local rc=$?
         echo '```' >> "$TMP"; echo "exit $rc, $((SECONDS - t0)) s" >> "$TMP"; echo >> "$TMP"; return 0; }
echo "# A newcomer on a CPU machine (tree $(git -C "$ROOT" rev-parse --short HEAD), $(date -u +%FT%TZ), $(nproc) cores)" > "$TMP"
echo >> "$TMP"
rm -rf "$NEW" "$VENV"
step "1. clone" "git clone -q $ROOT $NEW && cd $NEW && git log --oneline -1 && wc -l README.md"
step "2. a fresh virtualenv" "python3 -m venv $VENV && . $VENV/bin/activate && python --version"
TAIL=6 step "3. the README's test command, as written" ". $VENV/bin/activate && cd $NEW && $TEST_CMD"
step "4. l2attr doctor (what this machine lacks for the main job)" ". $VENV/bin/activate && cd $NEW && l2attr doctor; echo \"exit status \$?\""
step "5. torch without a GPU (its CPU wheel)" ". $VENV/bin/activate && pip install -q '${TORCH_CPU:-torch==2.13.0+cpu}' 2>&1 | grep -v '^WARNING: Location'; python -c 'import torch; print(torch.__version__, \"CUDA available:\", torch.cuda.is_available())'"
step "6. the README snippet on that machine" ". $VENV/bin/activate && cd $NEW && python tools/readme_snippet.py my_pair.py && python my_pair.py; echo \"exit status \$?\""
mv "$TMP" "$LOG"
cat "$LOG"
