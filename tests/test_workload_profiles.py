"""Built-in reuse profiles: names, determinism, the vectorised repeat process, calibration."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

import l2attr.dlrm.workload.profiles as P
from l2attr.dlrm.config import WorkloadConfig
from l2attr.errors import UserError
from l2attr.dlrm.declare import PROFILES
from l2attr.dlrm.workload import build_workload
from l2attr.dlrm.workload.hotset import coverage, id_counts, top_k
from l2attr.dlrm.workload.traces import circular

ROWS = 500_000
SMALL = WorkloadConfig(tables=3, rows=20_000, batch_size=64, pooling=20, batches=2,
                       warmup_batches=1, hot_rows=500)


def _unique_and_coverage(ids: np.ndarray, rows: int, k: int) -> tuple[int, float]:
    counts = id_counts(ids, rows)
    return int(np.count_nonzero(counts)), coverage(counts, top_k(counts, k))


# --- names ---------------------------------------------------------------------------------

def test_every_ladder_profile_has_parameters() -> None:
    assert set(P.PARAMS) == set(PROFILES)


@pytest.mark.parametrize("alias, canonical", [
    ("high", "reuse_high"), ("medium", "reuse_medium"), ("low", "reuse_low"),
    ("reuse_high", "reuse_high"), ("reuse_medium", "reuse_medium"),
    ("reuse_low", "reuse_low"), ("random", "random"),
])
def test_aliases(alias: str, canonical: str) -> None:
    assert P.canonical_profile(alias) == canonical


def test_unknown_profile_lists_valid_names() -> None:
    with pytest.raises(UserError) as exc:
        P.generate("hot", 10, 100)
    message = str(exc.value)
    assert message.startswith("unknown profile 'hot'; valid: ")
    for name in (*PROFILES, "high", "medium", "low"):
        assert name in message


# --- the generator -------------------------------------------------------------------------

@pytest.mark.parametrize("name", PROFILES)
def test_ids_in_range_and_deterministic(name: str) -> None:
    a = P.generate(name, 50_000, 7_000, seed=3)
    assert a.dtype == np.int64 and a.shape == (50_000,)
    assert a.min() >= 0 and a.max() < 7_000
    assert np.array_equal(a, P.generate(name, 50_000, 7_000, seed=3))
    assert not np.array_equal(a, P.generate(name, 50_000, 7_000, seed=4))


# Changing these streams silently would make cached workloads stale: if this test fails on
# purpose, bump profiles.GENERATOR_VERSION (part of the cache key) and update the digests.
GOLDEN = {"reuse_high": "1d5971305697c7fa", "reuse_medium": "174b4490f7ce67ba",
          "reuse_low": "ea4a9aa0b1576b78", "random": "8b252c1e1763b87f"}


@pytest.mark.parametrize("name", PROFILES)
def test_streams_are_unchanged(name: str) -> None:
    ids = P.generate(name, 3000, 50_000, seed=11)
    assert hashlib.sha256(ids.tobytes()).hexdigest()[:16] == GOLDEN[name]
    assert P.GENERATOR_VERSION == 1


def test_profiles_with_one_seed_differ() -> None:
    assert not np.array_equal(P.generate("medium", 1000, ROWS), P.generate("high", 1000, ROWS))


@pytest.mark.parametrize("name", ["medium", "random"])
def test_stream_is_a_prefix_across_chunks(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(P, "_CHUNK", 997)     # many chunk boundaries, odd size
    long = P.generate(name, 10_000, ROWS, seed=5)
    assert np.array_equal(P.generate(name, 4_321, ROWS, seed=5), long[:4_321])


def _reference_chunks(name: str, n: int, rows: int, seed: int) -> np.ndarray:
    """The repeat process written as the plain loop it stands for, from the same random draws."""
    p = P.profile_params(name)
    hot, warm = P._set_sizes(p, rows)
    perm = P._rng(seed, p.name, 0).permutation(rows)[:warm]
    out = np.empty(n, dtype=np.int64)
    for c, start in enumerate(range(0, n, P._CHUNK)):
        m = min(P._CHUNK, n - start)
        fresh = P._fresh_ids(P._rng(seed, p.name, c + 1, 0).random(m), p, perm, hot, warm)
        w = P._rng(seed, p.name, c + 1, 1).random(m)
        for j in range(m):
            i = start + j
            if w[j] < p.repeat_prob:
                d = 1 + int(p.repeat_window * (w[j] / p.repeat_prob) ** (1.0 / p.repeat_shape))
                d = min(d, p.repeat_window)
                if i - d >= 0:
                    out[i] = out[i - d]
                    continue
            out[i] = fresh[j]
    return out


@pytest.mark.parametrize("name", ["high", "medium", "low"])
def test_vectorised_repeats_equal_the_sequential_process(name: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(P, "_CHUNK", 1500)    # chunks shorter than the repeat window
    expected = _reference_chunks(name, 6_000, 30_000, seed=2)
    assert np.array_equal(P.generate(name, 6_000, 30_000, seed=2), expected)


def test_zipf_ranks_are_in_range_and_skewed() -> None:
    v = np.random.default_rng(0).random(200_000)
    for s in (0.0, 0.7, 1.0, 1.4):
        ranks = P._zipf_ranks(v, 1000, s)
        assert ranks.min() >= 0 and ranks.max() <= 999
    counts = np.bincount(P._zipf_ranks(v, 1000, 1.0), minlength=1000)
    assert counts[0] > counts[10] > counts[100] > counts[900]
    flat = np.bincount(P._zipf_ranks(v, 1000, 0.0), minlength=1000)
    assert flat.max() < 2 * flat.min()


def test_random_is_uniform_over_rows() -> None:
    ids = P.generate("random", 1_000_000, 1_000, seed=0)
    counts = np.bincount(ids, minlength=1_000)
    # 1000 expected per id; a chi-square of 1000 +- 3 sigma (sigma ~ 45) for a fair draw
    chi2 = float(((counts - 1000.0) ** 2 / 1000.0).sum())
    assert 850 < chi2 < 1150
    assert P.period("random", ROWS) is None


def test_period_scales_with_rows() -> None:
    assert P.period("medium", 500_000) == 429_951
    assert P.period("low", 500_000) == 379_910
    assert P.period("medium", 100_000) == round(429_951 / 5)


def test_shape_is_kept_when_rows_scale() -> None:
    """Fractions of rows stay put: unique/rows and top-(12 % of rows) coverage at 1/5 the size."""
    big_u, big_c = _unique_and_coverage(P.generate("low", P.period("low", ROWS), ROWS), ROWS, 60_000)
    rows = 100_000
    small_u, small_c = _unique_and_coverage(P.generate("low", P.period("low", rows), rows), rows, 12_000)
    assert small_u / rows == pytest.approx(big_u / ROWS, rel=0.05)
    assert small_c == pytest.approx(big_c, abs=0.03)


# --- calibration against the artifact traces -----------------------------------------------
# Measured on the whole files with coreutils (tests/fixtures/traces/README.md; the repository
# keeps only their first 4,000 lines): lookups, unique ids, lookups of the top 60,000 ids.
ARTIFACT = {"medium": (429_951, 102_524, 377_038), "low": (379_910, 231_073, 185_179)}


@pytest.mark.parametrize("name", ["medium", "low"])
@pytest.mark.parametrize("seed", [0, 1])
def test_calibrated_to_the_artifact_trace(name: str, seed: int) -> None:
    lookups, unique, top_lookups = ARTIFACT[name]
    ours = P.generate(name, lookups, ROWS, seed=seed)
    our_u, our_c = _unique_and_coverage(ours, ROWS, 60_000)
    assert our_u == pytest.approx(unique, rel=0.05)
    assert our_c == pytest.approx(top_lookups / lookups, abs=0.01)
    assert P.period(name, ROWS) == lookups   # the workload replays a trace of the same length


def test_high_is_clearly_hotter_than_medium() -> None:
    n = P.period("high", ROWS)
    high_u, high_c = _unique_and_coverage(P.generate("high", n, ROWS), ROWS, 60_000)
    _, medium_c = _unique_and_coverage(P.generate("medium", n, ROWS), ROWS, 60_000)
    assert high_c >= 0.97
    assert high_c > medium_c + 0.05
    assert high_u > 60_000  # the top-60K is a real selection, not every id


def test_low_is_colder_than_medium() -> None:
    _, low_c = _unique_and_coverage(P.generate("low", 400_000, ROWS), ROWS, 60_000)
    _, medium_c = _unique_and_coverage(P.generate("medium", 400_000, ROWS), ROWS, 60_000)
    assert low_c < medium_c - 0.2


# --- workloads from a profile --------------------------------------------------------------

def test_profile_workload_replays_one_period() -> None:
    w = build_workload(SMALL, profile="medium")
    per = P.period("medium", SMALL.rows)
    expected = circular(P.generate("medium", per, SMALL.rows, SMALL.seed), w.indices.size)
    assert w.indices.shape == (3, 3, 64 * 20)
    assert np.array_equal(w.indices.reshape(-1), expected)
    counts = id_counts(P.generate("medium", per, SMALL.rows, SMALL.seed), SMALL.rows)
    assert np.array_equal(w.hot, top_k(counts, SMALL.hot_rows))
    assert w.name == "reuse_medium"
    assert w.source["profile"] == "reuse_medium" and w.source["seed"] == 0
    assert 0.0 < w.source["hot_coverage"] <= 1.0


def test_random_workload_is_the_raw_stream_and_hot_is_its_top_k() -> None:
    w = build_workload(SMALL, profile="random")
    flat = w.indices.reshape(-1)
    assert np.array_equal(flat, P.generate("random", flat.size, SMALL.rows, SMALL.seed))
    assert np.array_equal(w.hot, top_k(id_counts(flat, SMALL.rows), SMALL.hot_rows))


def test_profile_workload_seed_changes_the_stream() -> None:
    a = build_workload(SMALL, profile="low")
    b = build_workload(SMALL.replace(seed=1), profile="low")
    assert not np.array_equal(a.indices, b.indices)


def test_profile_cache_is_reused_without_regenerating(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    first = build_workload(SMALL, profile="high", cache_dir=tmp_path)
    assert first.source["cache"]["hit"] is False

    def boom(*args: object, **kwargs: object) -> np.ndarray:
        raise AssertionError("regenerated despite a cache hit")

    monkeypatch.setattr(P, "generate", boom)
    again = build_workload(SMALL, profile="reuse_high", cache_dir=tmp_path)
    assert again.source["cache"]["hit"] is True
    assert np.array_equal(first.indices, again.indices) and np.array_equal(first.hot, again.hot)
    assert not list(tmp_path.glob(".*.tmp"))
    with pytest.raises(AssertionError, match="regenerated"):
        build_workload(SMALL.replace(seed=9), profile="high", cache_dir=tmp_path)


def test_corrupt_cache_is_rebuilt(tmp_path: Path) -> None:
    first = build_workload(SMALL, profile="low", cache_dir=tmp_path)
    (indices_file,) = tmp_path.glob("*.indices.npy")
    indices_file.write_bytes(b"not an npy file")
    again = build_workload(SMALL, profile="low", cache_dir=tmp_path)
    assert again.source["cache"]["hit"] is False
    assert np.array_equal(first.indices, again.indices)


def test_hot_file_for_a_profile(tmp_path: Path) -> None:
    hot = tmp_path / "hot.txt"
    hot.write_text("".join(f"{i}\n" for i in range(SMALL.hot_rows)))
    w = build_workload(SMALL, profile="medium", hot=hot)
    assert w.hot.tolist() == list(range(SMALL.hot_rows))
    hot.write_text("".join(f"{i}\n" for i in range(SMALL.hot_rows - 1)) + f"{SMALL.rows}\n")
    with pytest.raises(UserError, match=f"id {SMALL.rows} is out of range for {SMALL.rows} rows"):
        build_workload(SMALL, profile="medium", hot=hot)
