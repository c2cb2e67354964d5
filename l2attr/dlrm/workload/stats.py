"""Trace statistics: how much reuse a trace offers a cache, in numbers a human can compare.

Reuse distance, as used here: for a lookup at position i whose id was last looked up at
position j < i, the distance is i - j, i.e. the number of lookups since the previous lookup of
the same id (an immediate repeat has distance 1). It is a *time* distance, counting all lookups
in between, not a *stack* distance (distinct ids in between, which is what an LRU cache sees);
time distance is an upper bound on stack distance and is computed without a loop. First
lookups of an id have no reuse distance and are left out of the median and p90.

Top-K coverage with K above the trace's unique ids is the coverage of all of them (100 %):
K is clamped to the unique ids and both numbers are kept, so a default K sized for the
artifact (60,000) still describes a small trace instead of failing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from l2attr.dlrm.workload.hotset import coverage, id_counts, top_k as top_k_ids

REUSE_DEFINITION = ("reuse distance = lookups since the previous lookup of the same id "
                    "(time distance, not stack distance; first lookups excluded)")


def reuse_distances(ids: np.ndarray) -> np.ndarray:
    """Reuse distance (see module docstring) of every lookup that repeats an id, any order."""
    ids = np.asarray(ids).ravel()
    order = np.argsort(ids, kind="stable")   # positions grouped by id, ascending within an id
    same = ids[order[1:]] == ids[order[:-1]]
    return np.diff(order)[same]


@dataclass(frozen=True)
class TraceStats:
    name: str
    lookups: int
    rows: int
    unique: int
    top_k: int                     # K used: the requested K, or the unique ids if fewer
    top_k_coverage: float
    hot_name: str | None
    hot_size: int | None
    hot_coverage: float | None
    reuses: int                    # lookups that repeat an earlier id (lookups - unique)
    reuse_median: float | None
    reuse_p90: float | None
    dropped: int = 0               # out-of-range ids dropped while reading
    top_k_requested: int | None = None  # K asked for (above top_k when clamped)
    reuse_definition: str = REUSE_DEFINITION

    def to_dict(self) -> dict:
        return asdict(self)


def trace_stats(ids: np.ndarray, rows: int, top_k: int, name: str = "trace",
                hot: np.ndarray | None = None, hot_name: str | None = None,
                dropped: int = 0) -> TraceStats:
    """Lookups, unique ids, top-K coverage, hot-set coverage and reuse distances of a trace."""
    counts = id_counts(ids, rows)
    unique = int(np.count_nonzero(counts))
    used = min(top_k, unique)
    top = top_k_ids(counts, used, what=name)
    dist = reuse_distances(ids)
    median, p90 = (float(np.median(dist)), float(np.percentile(dist, 90))) if dist.size else (None, None)
    return TraceStats(
        name=name, lookups=int(np.asarray(ids).size), rows=rows,
        unique=unique, top_k=used, top_k_coverage=coverage(counts, top),
        hot_name=hot_name, hot_size=None if hot is None else int(hot.size),
        hot_coverage=None if hot is None else coverage(counts, hot),
        reuses=int(dist.size), reuse_median=median, reuse_p90=p90, dropped=dropped,
        top_k_requested=top_k,
    )
