#!/usr/bin/env bash
# Pack what a device call needs beside the tree into .whl/*.tar.xz, small enough to fit the call's
# size limit (tools/device_env.sh unpacks every .whl/*.tar.xz into the device's /tmp/site):
#   .whl/plotly-min.tar.xz  plotly (from its wheel in .whl/) and narwhals (from this machine's
#                           environment), without plotly's Jupyter bundles and datasets: about 2 MB,
#                           against the 10 MB wheel;
#   .whl/nvtx-min.tar.xz    nvtx (from its cp312 wheel in .whl/) without its Cython sources: about
#                           2 MB against the 3 MB wheel, which is then moved out of .whl/ so it is not
#                           installed twice.
# Run as: bash tools/pack_min.sh [python]; carry the two archives.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-python3}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
if ls .whl/plotly-*.whl >/dev/null 2>&1; then
  NARWHALS=$("$PY" -c "import narwhals, os; print(os.path.dirname(narwhals.__file__))")
  "$PY" -m zipfile -e "$(ls .whl/plotly-*.whl | tail -1)" "$W/plotly"
  mkdir "$W/pack"
  cp -r "$W/plotly/plotly" "$W/plotly/_plotly_utils" "$NARWHALS" "$W/pack/"
  rm -rf "$W/pack/plotly/labextension" "$W/pack/plotly/package_data/widgetbundle.js" "$W/pack/plotly/package_data/datasets"
  find "$W/pack" -name __pycache__ -prune -exec rm -rf {} +
  tar cf - -C "$W/pack" plotly _plotly_utils narwhals | xz -9e > .whl/plotly-min.tar.xz
  mkdir -p .whl/packed && mv .whl/plotly-*.whl .whl/packed/
fi
if ls .whl/nvtx-*.whl >/dev/null 2>&1; then
  "$PY" -m zipfile -e "$(ls .whl/nvtx-*.whl | tail -1)" "$W/nvtx"
  find "$W/nvtx/nvtx" \( -name "*.pyx" -o -name "*.pxd" -o -name "*.c" -o -name "*.cpp" \) -delete
  tar cf - -C "$W/nvtx" nvtx | xz -9e > .whl/nvtx-min.tar.xz
  mkdir -p .whl/packed && mv .whl/nvtx-*.whl .whl/packed/
fi
ls -la .whl/*.tar.xz
