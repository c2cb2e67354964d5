#!/usr/bin/env bash
# The sweeps of examples/logs/speed/trials/ and pm1/ (one H100), by tools/compare_profile.py's rule:
# each sweep whose children ended without the teardown under ncu (trials' profile-fastexit, pm1's
# profile) against the two that ended with it (trials' default profile and profile-memory), and
# the other way round. Prints each command and its verdict line.  Run as: bash tools/compare_exit.sh
set -euo pipefail
cd "$(dirname "$0")/.."
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
tar xzf examples/logs/speed/trials/runs.tar.gz -C "$W"
tar xzf examples/logs/speed/pm1/runs.tar.gz -C "$W"
for f in "$W"/*/*/metrics.csv.gz; do gunzip -k "$f"; done
A=$(ls -d "$W"/examples/*Z-profile); M=$(ls -d "$W"/examples/*-profile-memory)
F=$(ls -d "$W"/examples/*-profile-fastexit); R=$(ls -d "$W"/pack/*-profile)
for set_ in "F A M" "R A M" "A F R" "M F R"; do
  read -r n o1 o2 <<< "$set_"
  echo "\$ python tools/compare_profile.py $(basename "${!n}") $(basename "${!o1}") $(basename "${!o2}")   # $n against $o1 + $o2"
  python3 tools/compare_profile.py "${!n}" "${!o1}" "${!o2}" | grep "^compare_profile:"
done
