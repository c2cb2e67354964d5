"""Trace statistics: counts, top-K with its tie-break, coverage, reuse distance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import HOT_MEDIUM_CUT, LOW_CUT, MEDIUM_CUT

from l2attr.errors import UserError
from l2attr.dlrm.workload import read_hot_file, read_trace
from l2attr.dlrm.workload.hotset import coverage, id_counts, top_k
from l2attr.dlrm.workload.stats import reuse_distances, trace_stats


def test_reuse_distance_is_lookups_since_previous_lookup_of_the_id() -> None:
    #           pos: 0  1  2  3  4  5
    ids = np.array([5, 6, 5, 5, 7, 6])
    # 5@2 after 5@0 -> 2; 5@3 after 5@2 -> 1; 6@5 after 6@1 -> 4; first lookups have none
    assert sorted(reuse_distances(ids).tolist()) == [1, 2, 4]


def test_reuse_distance_counts_lookups_not_distinct_ids() -> None:
    # between the two 1s: three lookups of one id -> time distance 4 (stack distance would be 1)
    assert reuse_distances(np.array([1, 2, 2, 2, 1])).tolist().count(4) == 1


def test_top_k_ties_go_to_the_smaller_id() -> None:
    counts = id_counts(np.array([9, 9, 3, 3, 7, 7, 7, 1]), rows=10)
    assert top_k(counts, 3).tolist() == [7, 3, 9]
    assert top_k(counts, 4).tolist() == [7, 3, 9, 1]
    assert top_k(counts, 0).tolist() == []


def test_top_k_larger_than_unique_is_an_error() -> None:
    counts = id_counts(np.array([1, 2, 2]), rows=10)
    with pytest.raises(UserError, match="top-k 3 is larger than the 2 unique ids in the trace"):
        top_k(counts, 3)


def test_trace_stats_small() -> None:
    ids = np.array([4, 4, 4, 2, 2, 8, 4, 2, 1, 0])
    s = trace_stats(ids, rows=10, top_k=2, hot=np.array([8, 1]), hot_name="h.txt")
    assert (s.lookups, s.unique, s.top_k) == (10, 5, 2)
    assert s.top_k_coverage == pytest.approx(7 / 10)      # ids 4 (4x) and 2 (3x)
    assert s.hot_coverage == pytest.approx(2 / 10) and s.hot_size == 2
    assert s.reuses == 5
    assert s.reuse_median == pytest.approx(float(np.median(reuse_distances(ids))))
    assert "time distance" in s.reuse_definition
    assert s.to_dict()["unique"] == 5


def test_trace_without_repeats_has_no_reuse_distance() -> None:
    s = trace_stats(np.arange(5), rows=5, top_k=5)
    assert s.reuses == 0 and s.reuse_median is None and s.reuse_p90 is None
    assert s.top_k_coverage == 1.0


# The artifact's first 4,000 lookups; expected values from coreutils/awk (fixtures/traces/README.md)

def test_artifact_medium_cut() -> None:
    ids = read_trace(MEDIUM_CUT, rows=500_000).ids
    hot = read_hot_file(HOT_MEDIUM_CUT, rows=500_000)
    s = trace_stats(ids, rows=500_000, top_k=100, hot=hot, hot_name="hot60k_medium_head2000.txt")
    assert (s.lookups, s.unique, s.reuses) == (4_000, 1_297, 2_703)
    assert s.top_k_coverage == 1_575 / 4_000
    assert s.hot_coverage == 1_052 / 4_000 and s.hot_size == 2_000
    assert s.reuse_median == 62 and s.reuse_p90 == pytest.approx(337.8)


def test_artifact_low_cut() -> None:
    ids = read_trace(LOW_CUT, rows=500_000).ids
    s = trace_stats(ids, rows=500_000, top_k=3_000)
    assert (s.lookups, s.unique, s.reuses) == (4_000, 3_842, 158)
    assert s.top_k_coverage == 3_158 / 4_000
    assert s.reuse_median == 551.5 and s.reuse_p90 == pytest.approx(1649.0)


def test_top_k_ranking_of_the_low_cut_matches_sort_uniq() -> None:
    # `sort -n F | uniq -c | sort -k1,1nr -k2,2n | head -12`: count down, ties to the smaller id
    counts = id_counts(read_trace(LOW_CUT, rows=500_000).ids, 500_000)
    assert top_k(counts, 12).tolist() == [196638, 281985, 191717, 236735, 113718, 2751, 58296, 67796,
                                          706, 158804, 182739, 200768]
    assert counts[[196638, 281985, 706]].tolist() == [7, 7, 3]


def test_coverage_is_a_share_of_lookups() -> None:
    counts = id_counts(np.array([0, 0, 1, 2]), rows=3)
    assert coverage(counts, np.array([0])) == 0.5
    assert coverage(counts, np.array([], dtype=np.int64)) == 0.0
