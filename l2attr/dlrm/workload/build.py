"""The workload the GPU code runs: index tensor + hot set + provenance, built once and cached.

Why one function: every measurement (ladder cell, profiler pass) must read exactly the same
indices for the same inputs, and the profiler reruns the program once per replay pass, so the
arrays are keyed by a hash of everything that determines them and saved as .npy on first use.

Layout (as the artifact's loader reads its trace): one circular cursor runs over the id stream
in call order -- for each batch (warm-up batches first), for each table, one bag block of
batch_size * pooling ids. Bags are fixed-size (pooling), so offsets are implicit.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from l2attr.atomic import write_json
from l2attr.dlrm.config import WorkloadConfig
from l2attr.errors import UserError
from l2attr.vocab import WorkloadSource
from l2attr.dlrm.workload import cache, profiles
from l2attr.dlrm.workload.hotset import coverage, hot_from_bytes, id_counts, top_k
from l2attr.dlrm.workload.traces import (atomic_write, circular, read_bytes, sha256_hex,
                                    trace_from_bytes)

CACHE_VERSION = 1  # bump when the cached layout or the meaning of a key changes


@dataclass(frozen=True)
class Workload:
    name: str              # canonical profile name (e.g. "reuse_medium") or trace file stem
    indices: np.ndarray    # int64 (warmup_batches + batches, tables, batch_size * pooling)
    hot: np.ndarray        # int64 (hot_rows,), unique ids in [0, rows), hottest first
    source: dict[str, Any]  # provenance for the run manifest (JSON-serialisable)


def workload_shape(cfg: WorkloadConfig) -> tuple[int, int, int]:
    return (cfg.warmup_batches + cfg.batches, cfg.tables, cfg.batch_size * cfg.pooling)


@dataclass(frozen=True)
class _Input:
    """A file the workload depends on: read once, hashed for the key, parsed only on a miss."""

    path: Path
    data: bytes
    sha256: str


def _read_input(path: Path | None, what: str) -> _Input | None:
    if path is None:
        return None
    data = read_bytes(Path(path), what)
    return _Input(Path(path), data, sha256_hex(data))


def _cache_key(cfg: WorkloadConfig, profile: str | None, trace: _Input | None,
               hot: _Input | None, drop_out_of_range: bool) -> str:
    """Hash of everything that determines indices and hot (dim/dtype do not)."""
    material: dict[str, Any] = {
        "cache_version": CACHE_VERSION, "shape": workload_shape(cfg), "rows": cfg.rows,
        "hot_rows": cfg.hot_rows, "hot_sha256": hot.sha256 if hot else None,
    }
    if profile is not None:
        material.update(profile=profiles.profile_params(profile).to_dict(), seed=cfg.seed,
                        generator_version=profiles.GENERATOR_VERSION)
    else:
        material.update(trace_sha256=trace.sha256, drop_out_of_range=drop_out_of_range)
    blob = json.dumps(material, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:20]


def _cache_stem(name: str, key: str) -> str:
    return f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)[:60]}-{key}"


def _cache_paths(cache_dir: Path, name: str, key: str) -> tuple[Path, Path, Path]:
    stem = _cache_stem(name, key)
    return (cache_dir / f"{stem}.indices.npy", cache_dir / f"{stem}.hot.npy",
            cache_dir / f"{stem}.json")


def _save_npy(path: Path, array: np.ndarray) -> None:
    """np.save through a temp file + os.replace, so readers never see half an array."""
    atomic_write(path, lambda fh: np.save(fh, array, allow_pickle=False))


def _load_cached(paths: tuple[Path, Path, Path], cfg: WorkloadConfig) -> Workload | None:
    """The cached workload, or None when absent or unusable (then it is rebuilt and rewritten)."""
    indices_path, hot_path, meta_path = paths
    try:
        meta = json.loads(meta_path.read_text())   # written last: its presence means complete
        indices = np.load(indices_path, allow_pickle=False)
        hot = np.load(hot_path, allow_pickle=False)
        name, source = meta["name"], dict(meta["source"])
    except (OSError, ValueError, EOFError, KeyError, TypeError):
        return None
    if (indices.dtype != np.int64 or indices.shape != workload_shape(cfg)
            or hot.dtype != np.int64 or hot.shape != (cfg.hot_rows,)):
        return None
    source["cache"] = {**(source.get("cache") or {}), "hit": True}
    return Workload(name, indices, hot, source)


def _save_cached(paths: tuple[Path, Path, Path], workload: Workload) -> None:
    indices_path, hot_path, meta_path = paths
    try:
        meta_path.parent.mkdir(parents=True, exist_ok=True)
        _save_npy(indices_path, workload.indices)
        _save_npy(hot_path, workload.hot)
        write_json(meta_path, {"name": workload.name, "source": workload.source})
    except OSError as exc:
        raise UserError(f"workload cache {meta_path.parent}: cannot write "
                        f"({exc.strerror or exc})") from None


def _fill_from_profile(cfg: WorkloadConfig, name: str, flat: np.ndarray) -> tuple[np.ndarray, dict]:
    """Fill `flat` with the profile's stream; return the ids the hot set is ranked on."""
    period = profiles.period(name, cfg.rows)
    if period is None:
        profiles.generate(name, flat.size, cfg.rows, cfg.seed, out=flat)
        ranked_on, over = flat, "stream"
    else:
        ranked_on = profiles.generate(name, period, cfg.rows, cfg.seed)
        circular(ranked_on, flat.size, out=flat)
        over = "one period of the profile"
    info = {"kind": WorkloadSource.PROFILE.value, "profile": name, "seed": cfg.seed, "period": period,
            "profile_params": profiles.profile_params(name).to_dict(),
            "generator_version": profiles.GENERATOR_VERSION}
    return ranked_on, {**info, "_ranked_over": over}


def _fill_from_trace(cfg: WorkloadConfig, trace: _Input, drop_out_of_range: bool,
                     flat: np.ndarray) -> tuple[np.ndarray, dict]:
    parsed = trace_from_bytes(trace.path, trace.data, cfg.rows, drop_out_of_range)
    circular(parsed.ids, flat.size, out=flat)
    info = {"kind": WorkloadSource.TRACE.value, "trace": str(trace.path.resolve()), "trace_sha256": trace.sha256,
            "trace_lookups": parsed.lines, "drop_out_of_range": drop_out_of_range,
            "dropped_out_of_range": parsed.dropped}
    return parsed.ids, {**info, "_ranked_over": "the trace file"}


def _hot_set(cfg: WorkloadConfig, hot: _Input | None, ranked_on: np.ndarray,
             name: str, over: str) -> tuple[np.ndarray, dict]:
    if hot is not None:
        ids = hot_from_bytes(hot.path, hot.data, cfg.rows, cfg.hot_rows)
        return ids, {"kind": WorkloadSource.FILE.value, "path": str(hot.path.resolve()), "sha256": hot.sha256,
                     "k": cfg.hot_rows}
    ids = top_k(id_counts(ranked_on, cfg.rows), cfg.hot_rows, what=f"{name} ({over})")
    return ids, {"kind": WorkloadSource.TOP_K.value, "k": cfg.hot_rows, "ranked_over": over,
                 "tie_break": "higher count first, then smaller id"}


def build_workload(cfg: WorkloadConfig, profile: str | None = None, trace: Path | None = None,
                   hot: Path | None = None, drop_out_of_range: bool = False,
                   cache_dir: Path | None = None) -> Workload:
    """Indices and hot set for `cfg` from a built-in profile or an artifact-format trace file.

    Exactly one of `profile` / `trace`. The hot set comes from `hot` (an artifact hot-index file
    with exactly cfg.hot_rows unique ids) or else is the top cfg.hot_rows ids of the source (the
    trace file, or one period of the profile). With `cache_dir`, the result is loaded from / saved
    to .npy files keyed by a hash of every input that determines it (cache.py: the default dir,
    its size cap and LRU eviction); source["cache"] names the entry for the run manifest.
    """
    if (profile is None) == (trace is None):
        raise UserError("give exactly one of a profile or a trace file")
    name = profiles.canonical_profile(profile) if profile is not None else Path(trace).stem
    trace_in = _read_input(trace, "trace file")
    hot_in = _read_input(hot, "hot file")
    key = _cache_key(cfg, name if profile is not None else None, trace_in, hot_in,
                     drop_out_of_range)
    paths = _cache_paths(Path(cache_dir), name, key) if cache_dir is not None else None
    if paths is not None and (cached := _load_cached(paths, cfg)) is not None:
        cache.touch(Path(cache_dir), _cache_stem(name, key))
        cached.source["cache"].update(dir=str(Path(cache_dir).resolve()), key=key, entry=_cache_stem(name, key))
        return cached

    indices = np.empty(workload_shape(cfg), dtype=np.int64)
    flat = indices.reshape(-1)  # a view: the stream is written straight into the tensor
    if profile is not None:
        ranked_on, info = _fill_from_profile(cfg, name, flat)
    else:
        ranked_on, info = _fill_from_trace(cfg, trace_in, drop_out_of_range, flat)
    hot_ids, hot_info = _hot_set(cfg, hot_in, ranked_on, name, info.pop("_ranked_over"))
    counts = id_counts(flat, cfg.rows)
    source = {
        "name": name, **info, "rows": cfg.rows, "shape": list(indices.shape),
        "lookups": int(flat.size), "unique_ids": int(np.count_nonzero(counts)),
        "hot": hot_info, "hot_coverage": coverage(counts, hot_ids),
        "cache": {"dir": str(Path(cache_dir).resolve()), "key": key, "entry": _cache_stem(name, key),
                  "hit": False} if paths else None,
    }
    workload = Workload(name, indices, hot_ids, source)
    if paths is not None:
        _save_cached(paths, workload)
        cache.evict(Path(cache_dir), cache.max_bytes(), keep=_cache_stem(name, key))
    return workload
