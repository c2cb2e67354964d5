"""The workload cache (l2attr/dlrm/workload/cache.py): in the user's cache dir (or
L2ATTR_CACHE_DIR), shared by every --out, named in the manifest, capped by LRU eviction, and
`l2attr cache info|clear`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from l2attr.cli import build_parser, main
from l2attr.ladders import command as ladder_cmd
from l2attr.sweep import command as sweep_cmd
from l2attr.dlrm.config import WorkloadConfig
from l2attr.dlrm.workload import cache
from l2attr.dlrm.workload.build import build_workload

SMALL = WorkloadConfig(tables=2, rows=10_000, batch_size=32, pooling=10, batches=2,
                       warmup_batches=1, hot_rows=200)


def test_the_default_dir_is_the_env_var_else_the_users_cache_dir(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "mine"))
    assert cache.default_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv(cache.ENV_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.default_cache_dir() == tmp_path / "xdg" / "l2attr" / "workloads"


def test_ladder_and_sweep_default_to_it_whatever_the_out(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "shared"))
    parser = build_parser()
    for out in ("a", "b"):
        lad = ladder_cmd.options_from_args(parser.parse_args(["ladder", "--out", str(tmp_path / out)]))
        assert lad.cache_dir == tmp_path / "shared"
        _, swp = sweep_cmd.options_from_args(parser.parse_args(["sweep", "amortisation", "--out", str(tmp_path / out)]))
        assert Path(swp.cache_dir) == tmp_path / "shared"


def test_a_second_build_is_a_hit_naming_its_entry(tmp_path: Path) -> None:
    first = build_workload(SMALL, profile="reuse_high", cache_dir=tmp_path)
    again = build_workload(SMALL, profile="reuse_high", cache_dir=tmp_path)
    assert first.source["cache"]["hit"] is False and again.source["cache"]["hit"] is True
    entry = again.source["cache"]["entry"]
    assert entry == first.source["cache"]["entry"] and entry.endswith(first.source["cache"]["key"])
    assert [e.stem for e in cache.entries(tmp_path)] == [entry]
    assert (tmp_path / f"{entry}.json").is_file() and (again.indices == first.indices).all()


def _three(tmp_path: Path) -> list[str]:
    """Three entries, used at t = 100, 200, 300 (oldest first)."""
    stems = []
    for i, seed in enumerate((1, 2, 3)):
        w = build_workload(SMALL.replace(seed=seed), profile="random", cache_dir=tmp_path)
        stems.append(w.source["cache"]["entry"])
        os.utime(tmp_path / f"{stems[-1]}.json", (100 * (i + 1), 100 * (i + 1)))
    return stems


def test_eviction_drops_the_least_recently_used_never_the_one_in_use(tmp_path: Path) -> None:
    stems = _three(tmp_path)
    one = cache.entries(tmp_path)[0].bytes
    assert [e.stem for e in cache.entries(tmp_path)] == stems
    gone = cache.evict(tmp_path, cap=2 * one, keep=stems[0])   # the oldest is in use: the next goes
    assert [e.stem for e in gone] == [stems[1]]
    assert [e.stem for e in cache.entries(tmp_path)] == [stems[0], stems[2]]
    assert not list(tmp_path.glob(f"{stems[1]}*"))              # all its files, not only the .json
    assert cache.evict(tmp_path, cap=0, keep=stems[2]) and [e.stem for e in cache.entries(tmp_path)] == [stems[2]]


def test_a_hit_refreshes_its_place_and_a_build_keeps_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stems = _three(tmp_path)
    one = cache.entries(tmp_path)[0].bytes
    build_workload(SMALL.replace(seed=1), profile="random", cache_dir=tmp_path)       # a hit: now newest
    assert cache.entries(tmp_path)[-1].stem == stems[0]
    monkeypatch.setenv(cache.ENV_MAX_GB, str(3.5 * one / 1e9))
    w = build_workload(SMALL.replace(seed=4), profile="random", cache_dir=tmp_path)   # a 4th: over the cap
    left = [e.stem for e in cache.entries(tmp_path)]
    assert stems[1] not in left and left[-1] == w.source["cache"]["entry"] and len(left) == 3


@pytest.mark.parametrize("value", ["0", "-1", "abc", "inf"])
def test_a_bad_cap_is_one_line(value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(cache.ENV_MAX_GB, value)
    assert main(["cache", "info"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("l2attr cache: error: L2ATTR_CACHE_MAX_GB=") and "\n" not in err


def test_info_lists_and_clear_empties(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stems = _three(tmp_path)
    assert main(["cache", "info", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{tmp_path}: 3 workload(s)") and [line.split()[0] for line in out.splitlines()[1:]] == stems
    assert main(["cache", "clear", "--cache-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith(f"{tmp_path}: deleted 3 workload(s)")
    assert cache.entries(tmp_path) == [] and not any(tmp_path.iterdir())


def test_without_platformdirs_it_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from l2attr.errors import UserError

    monkeypatch.delenv(cache.ENV_DIR)
    monkeypatch.setitem(sys.modules, "platformdirs", None)      # import platformdirs -> ImportError
    with pytest.raises(UserError, match="L2ATTR_CACHE_DIR"):
        cache.default_cache_dir()
