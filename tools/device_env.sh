# Sourced by the tools/device_*.sh scripts: the setting every device call needs, in one place.
# OUT (default out/) with runs/ and logs/ under it; unbuffered Python (a killed call keeps its
# log); what was carried in .whl/ (wheels, and packed folders .whl/*.tar.xz that tools/pack_min.sh
# makes to fit a call's size limit) installed into /tmp/site (nothing downloads on the device) and put
# on PYTHONPATH before the repository, or the repository alone when nothing was carried.
OUT=${OUT:-out}
mkdir -p "$OUT/runs" "$OUT/logs"
export PYTHONUNBUFFERED=1
# once per call: a script sourced by another (device_closing.sh runs device_speed.sh) finds it done
if [ -z "${L2ATTR_DEVICE_SITE:-}" ]; then
  wheels=$(compgen -G ".whl/*.whl" || true); packed=$(compgen -G ".whl/*.tar.xz" || true)
  if [ -n "$wheels$packed" ]; then
    mkdir -p /tmp/site
    [ -n "$wheels" ] && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site $wheels
    for f in $packed; do tar xJf "$f" -C /tmp/site; done
    export L2ATTR_DEVICE_SITE=/tmp/site
  else
    export L2ATTR_DEVICE_SITE=none
  fi
fi
if [ "$L2ATTR_DEVICE_SITE" = none ]; then export PYTHONPATH=$PWD; else export PYTHONPATH=$L2ATTR_DEVICE_SITE:$PWD; fi
# Generated workloads: one cache for every run of the call, outside $OUT (nothing of it comes back)
# and set here, so a device without platformdirs installed needs none (l2attr/dlrm/workload/cache.py).
export L2ATTR_CACHE_DIR=${L2ATTR_CACHE_DIR:-/tmp/l2attr-cache}
# Bytecode written as on an ordinary machine (docs/facts.md#process-exit): the device image turns
# writing off, and its torch's bytecode was not usable as it stood, so every process compiled torch's
# modules again; the first process of a call now writes them. What the image had is kept for the record.
export L2ATTR_DEVICE_DONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE-unset}
unset PYTHONDONTWRITEBYTECODE
# What a device call brings back of a profile or timeline run folder: the manifest, the tables
# (metrics.csv gzipped), each child pass's manifest, the children's check memo (ladder --checks-memo)
# and the ncu section files the run wrote.
#   pack_profile_run RUN DEST
pack_profile_run() {
  local run=$1 d=$2 c f
  mkdir -p "$d"
  cp "$run/manifest.json" "$d/"
  for f in timeline.csv phases.csv; do [ -f "$run/$f" ] && cp "$run/$f" "$d/"; done
  [ -f "$run/metrics.csv" ] && gzip -9 -c "$run/metrics.csv" > "$d/metrics.csv.gz"
  for c in "$run"/child/*/manifest.json; do
    [ -f "$c" ] && mkdir -p "$d/child/$(basename "$(dirname "$c")")" && cp "$c" "$d/child/$(basename "$(dirname "$c")")/"
  done
  [ -d "$run/ncu/sections" ] && cp -r "$run/ncu/sections" "$d/"
  for f in "$run"/child/checks-memo-*.json; do [ -f "$f" ] && cp "$f" "$d/child/"; done
  return 0
}
