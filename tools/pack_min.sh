#!/usr/bin/env bash
# Pack what a device call needs beside the tree into .whl/*.tar.xz, small enough to fit the call's
# size limit (tools/device_env.sh unpacks every .whl/*.tar.xz into the device's /tmp/site):
#   .whl/plotly-min.tar.xz  plotly (from its wheel) and narwhals (from this machine's environment),
#                           without plotly's Jupyter bundles and datasets: about 2 MB, against the
#                           10 MB wheel;
#   .whl/nvtx-min.tar.xz    nvtx (from its cp312 wheel) without its Cython sources, its extension
#                           modules stripped: about 0.4 MB against the 3 MB wheel.
# Each package's metadata (*.dist-info) travels with it: plotly reads its own version at import.
# The wheels are looked for in .whl/ and .whl/packed/, and moved to .whl/packed/ so that
# device_env.sh does not install them as well. Run as: bash tools/pack_min.sh [python]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-python3}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
mkdir -p .whl/packed
shopt -s nullglob
wheel() { local found=(.whl/"$1"-*.whl .whl/packed/"$1"-*.whl); [ ${#found[@]} -gt 0 ] && echo "${found[-1]}"; }
if P=$(wheel plotly); then
  NARWHALS=$("$PY" -c "import narwhals, os; print(os.path.dirname(narwhals.__file__))")
  "$PY" -m zipfile -e "$P" "$W/plotly"
  mkdir "$W/pack"
  cp -r "$W/plotly/plotly" "$W/plotly/_plotly_utils" "$W"/plotly/plotly-*.dist-info "$NARWHALS" \
    "$(dirname "$NARWHALS")"/narwhals-*.dist-info "$W/pack/"
  rm -rf "$W/pack/plotly/labextension" "$W/pack/plotly/package_data/widgetbundle.js" "$W/pack/plotly/package_data/datasets"
  find "$W/pack" -name __pycache__ -prune -exec rm -rf {} +
  (cd "$W/pack" && tar cf - -- *) | xz -9e > .whl/plotly-min.tar.xz
  [ "$P" = ".whl/packed/$(basename "$P")" ] || mv "$P" .whl/packed/
fi
if N=$(wheel nvtx); then
  "$PY" -m zipfile -e "$N" "$W/nvtx"
  find "$W/nvtx/nvtx" \( -name "*.pyx" -o -name "*.pxd" -o -name "*.c" -o -name "*.cpp" \) -delete
  # its extension modules' symbol tables and debug sections (10.7 MB of 12); the dynamic symbols that
  # Python loads them by stay
  find "$W/nvtx/nvtx" -name "*.so" -exec strip --strip-unneeded {} +
  (cd "$W/nvtx" && tar cf - nvtx nvtx-*.dist-info) | xz -9e > .whl/nvtx-min.tar.xz
  [ "$N" = ".whl/packed/$(basename "$N")" ] || mv "$N" .whl/packed/
fi
ls -la .whl/*.tar.xz
