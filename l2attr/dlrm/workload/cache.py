"""Where generated workloads are cached: the user's cache dir, shared by every `--out`, capped.

Why not under the runs folder: a workload is a few hundred MB of .npy per profile, rebuilt by
every new `--out` and shipped by anyone who shares `runs/`. The cache lives in the platform's
user cache dir (platformdirs: `~/.cache/l2attr/workloads` on Linux, honouring XDG_CACHE_HOME),
or in `L2ATTR_CACHE_DIR` when set (tests, CI, a scratch disk). Entries are keyed as build.py keys
them (a hash of every input that determines the arrays); one entry is its `.json` (written last:
its presence means complete) and its `.npy` files. The cap (`L2ATTR_CACHE_MAX_GB`, default 8)
is kept by evicting the least recently used entries (by the `.json`'s mtime, which a hit
refreshes), never the entry just used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from l2attr.errors import UserError

ENV_DIR = "L2ATTR_CACHE_DIR"
ENV_MAX_GB = "L2ATTR_CACHE_MAX_GB"
DEFAULT_MAX_GB = 8.0
META = ".json"


def default_cache_dir() -> Path:
    """L2ATTR_CACHE_DIR, else the user's cache dir for l2attr (its `workloads` folder)."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR]).expanduser()
    try:
        import platformdirs
    except ImportError:     # a checkout on PYTHONPATH without l2attr's dependencies installed
        raise UserError(f"the workload cache needs platformdirs (pip install platformdirs), or set "
                        f"{ENV_DIR} to a folder, or give --cache-dir") from None
    return platformdirs.user_cache_path("l2attr") / "workloads"


def max_bytes() -> int:
    """The cap in bytes: L2ATTR_CACHE_MAX_GB (GB of 10^9 bytes, > 0), else DEFAULT_MAX_GB."""
    text = os.environ.get(ENV_MAX_GB)
    if not text:
        return int(DEFAULT_MAX_GB * 1e9)
    try:
        gb = float(text)
    except ValueError:
        gb = -1.0
    if not gb > 0 or gb == float("inf"):
        raise UserError(f"{ENV_MAX_GB}={text!r}: give a size in GB greater than 0")
    return int(gb * 1e9)


@dataclass(frozen=True)
class Entry:
    stem: str            # <name>-<key>: what build.py's _cache_paths names the files after
    files: tuple[Path, ...]
    bytes: int
    used: float          # mtime of the .json: written on a miss, refreshed on every hit


def entries(cache_dir: Path) -> list[Entry]:
    """The cache's entries, least recently used first (an entry's files share its stem)."""
    if not cache_dir.is_dir():
        return []
    groups: dict[str, list[Path]] = {}
    for path in cache_dir.iterdir():
        if path.is_file() and not path.name.startswith("."):
            groups.setdefault(_stem(path.name), []).append(path)
    out = []
    for stem, files in groups.items():
        try:
            size = sum(p.stat().st_size for p in files)
            meta = cache_dir / f"{stem}{META}"
            used = meta.stat().st_mtime if meta.exists() else min(p.stat().st_mtime for p in files)
        except FileNotFoundError:      # another process evicted it meanwhile
            continue
        out.append(Entry(stem, tuple(sorted(files)), size, used))
    return sorted(out, key=lambda e: (e.used, e.stem))


def _stem(filename: str) -> str:
    for suffix in (".indices.npy", ".hot.npy", META):
        if filename.endswith(suffix):
            return filename[: -len(suffix)]
    return filename


def touch(cache_dir: Path, stem: str) -> None:
    """Mark an entry used now (a hit), so eviction takes older ones first."""
    try:
        os.utime(cache_dir / f"{stem}{META}")
    except OSError:
        pass      # a read-only cache still serves hits; it only cannot keep its order


def evict(cache_dir: Path, cap: int, keep: str) -> list[Entry]:
    """Delete least recently used entries until the cache holds at most `cap` bytes; never `keep`
    (the entry this run uses, even when it alone is over the cap). Returns what was deleted."""
    listed = entries(cache_dir)
    total = sum(e.bytes for e in listed)
    gone = []
    for entry in listed:
        if total <= cap:
            break
        if entry.stem == keep:
            continue
        _delete(entry)
        total -= entry.bytes
        gone.append(entry)
    return gone


def clear(cache_dir: Path) -> list[Entry]:
    """Delete every entry; returns them."""
    listed = entries(cache_dir)
    for entry in listed:
        _delete(entry)
    return listed


def _delete(entry: Entry) -> None:
    # the .json first: without it the entry reads as absent (build.py rebuilds it), never as half
    for path in sorted(entry.files, key=lambda p: not p.name.endswith(META)):
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise UserError(f"workload cache {path}: cannot delete ({exc.strerror or exc})") from None
