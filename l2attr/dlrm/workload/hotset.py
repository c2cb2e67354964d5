"""Hot sets: the ids the pin kernel keeps in L2, from a trace's counts or an artifact hot file.

Order matters to nobody but humans and the tie-break matters for reproducibility: ids are ranked
by count (higher first), ties broken by the smaller id, so the same trace always gives the same
hot set on every machine. Hot files must list each id once: a duplicate is an error (naming
both lines) rather than silently deduplicated, because it would shrink the pinned set below
what the file's length promises.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from l2attr.errors import UserError
from l2attr.dlrm.workload.traces import check_range, parse_ids, read_bytes


def id_counts(ids: np.ndarray, rows: int) -> np.ndarray:
    """Lookups per id, indexed by id (length rows); ids must already be in [0, rows)."""
    return np.bincount(np.asarray(ids).ravel(), minlength=rows)


def top_k(counts: np.ndarray, k: int, what: str = "the trace") -> np.ndarray:
    """The k most frequent ids (int64), hottest first; ties go to the smaller id."""
    if k < 0:
        raise UserError(f"top-k must be >= 0, got {k}")
    unique = int(np.count_nonzero(counts))
    if k > unique:
        raise UserError(f"top-k {k:,} is larger than the {unique:,} unique ids in {what}")
    # a stable sort on -count keeps equal counts in id order: the documented tie-break
    return np.argsort(-counts, kind="stable")[:k].astype(np.int64)


def coverage(counts: np.ndarray, ids: np.ndarray) -> float:
    """Share of all lookups that hit one of `ids` (ids must be unique)."""
    total = int(counts.sum())
    return float(counts[ids].sum()) / total if total else 0.0


def _check_unique(ids: np.ndarray, label: str) -> None:
    """Raise naming the first line that repeats an earlier id."""
    order = np.argsort(ids, kind="stable")
    ranked = ids[order]
    dup = ranked[1:] == ranked[:-1]
    if dup.any():
        later = int(order[1:][dup].min())
        first = int(np.argmax(ids == ids[later]))
        raise UserError(f"{label}:{later + 1}: id {int(ids[later])} repeats line {first + 1} "
                        f"(a hot file must list each id once)")


def read_hot_file(path: Path, rows: int, k: int | None = None) -> np.ndarray:
    """Ids of an artifact hot-index file (one per line), checked: in range, unique, k of them."""
    return hot_from_bytes(Path(path), read_bytes(Path(path), "hot file"), rows, k)


def hot_from_bytes(path: Path, data: bytes, rows: int, k: int | None = None) -> np.ndarray:
    """Like read_hot_file, for bytes already read (and hashed) by the caller."""
    ids = parse_ids(data, str(path))
    check_range(ids, rows, str(path), hint="")
    _check_unique(ids, str(path))
    if k is not None and ids.size != k:
        raise UserError(f"hot file {path} has {ids.size:,} ids but the workload pins "
                        f"hot_rows={k:,}; pass --hot-rows {ids.size} or another hot file")
    return ids
