"""The generated-workload cache: where it is, what it holds, and emptying it. Every `l2attr
ladder` and `sweep` shares it, whatever its --out; it lives in the user's cache dir (or
$L2ATTR_CACHE_DIR) and keeps under its cap ($L2ATTR_CACHE_MAX_GB, default 8) by dropping the
least recently used workloads.

examples:
  l2attr cache info
  l2attr cache clear
  l2attr cache info --cache-dir /scratch/l2attr-cache
"""

from __future__ import annotations

import argparse
from pathlib import Path

from l2attr.dlrm.workload import cache
from l2attr.vocab import CACHE_ACTIONS, Command


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=CACHE_ACTIONS,
                   help="info: the dir, its cap and its entries (least recently used first); "
                        "clear: delete every entry")
    p.add_argument("--cache-dir", type=Path, default=None,
                   help="the cache dir (default: the user's cache dir, or $L2ATTR_CACHE_DIR)")


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def run(args: argparse.Namespace) -> int:
    where = args.cache_dir or cache.default_cache_dir()
    if args.action == Command.CLEAR:
        gone = cache.clear(where)
        print(f"{where}: deleted {len(gone)} workload(s), {_mb(sum(e.bytes for e in gone))}")
        return 0
    listed = cache.entries(where)
    print(f"{where}: {len(listed)} workload(s), {_mb(sum(e.bytes for e in listed))} "
          f"(cap {_mb(cache.max_bytes())}, ${cache.ENV_MAX_GB})")
    for entry in listed:
        print(f"  {entry.stem}  {_mb(entry.bytes)}")
    return 0
