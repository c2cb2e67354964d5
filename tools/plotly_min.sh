#!/usr/bin/env bash
# Build .whl/plotly-min.tar.xz for a device call: plotly (from its wheel in .whl/) and narwhals (from
# this machine's environment), without plotly's Jupyter bundles and datasets, xz-compressed: about
# 2 MB, against the 10 MB wheel that does not fit beside the tree and nvtx's wheel in a call's limit.
# tools/device_closing.sh unpacks it on the device. Run as: bash tools/plotly_min.sh [python]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-python3}
WHEEL=$(ls .whl/plotly-*.whl | tail -1)
NARWHALS=$("$PY" -c "import narwhals, os; print(os.path.dirname(narwhals.__file__))")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
"$PY" -m zipfile -e "$WHEEL" "$W/wheel"
mkdir "$W/pack"
cp -r "$W/wheel/plotly" "$W/wheel/_plotly_utils" "$NARWHALS" "$W/pack/"
rm -rf "$W/pack/plotly/labextension" "$W/pack/plotly/package_data/widgetbundle.js" "$W/pack/plotly/package_data/datasets"
find "$W/pack" -name __pycache__ -prune -exec rm -rf {} +
tar cJf .whl/plotly-min.tar.xz -C "$W/pack" plotly _plotly_utils narwhals
ls -la .whl/plotly-min.tar.xz
