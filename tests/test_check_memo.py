"""The check verdicts kept for an ncu job's later replay passes (measure/check.py CheckMemo), on
the run loop's fake GPU: the first process checks and keeps, a second with the same key takes
the verdicts without checking, anything else checks again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from l2attr.dlrm.measure import check as checkmod
from l2attr.dlrm.measure.check import CheckMemo, memo_key
from l2attr.ladders.measure.run import run_ladder
from l2attr.dlrm.profile.plan import child_command
from l2attr.errors import UserError
from l2attr.rundir import RunDir
from test_measure_run import CFG, _opts, fake  # noqa: F401  (the fixture)


def _manifest(opts, uuid: str = "GPU-1", digest: str | None = "d1") -> dict:
    return {"kind": "ladder", "versions": {"source_digest": digest}, "gpu": {"uuid": uuid},
            "config": CFG.to_dict(), "measure": opts.manifest()}


def _counting(monkeypatch) -> dict[str, int]:
    """check_variant and check_real_data replaced by counters (the fake GPU's stand-ins)."""
    calls = {"variant": 0, "real": 0}

    def variant(*a, **k):
        calls["variant"] += 1
        return {"sum": 1e-9}

    def real(*a, **k):
        calls["real"] += 1
        return 2e-9

    monkeypatch.setattr(checkmod, "check_variant", variant)
    monkeypatch.setattr(checkmod, "check_real_data", real)
    return calls


def _run(tmp_path: Path, name: str, opts, **manifest) -> RunDir:
    run = RunDir.create(tmp_path / "runs", name, _manifest(opts, **manifest))
    run_ladder(CFG, opts, run, log=lambda s: None)
    return run


def test_a_second_pass_takes_the_first_ones_verdicts_without_checking(tmp_path, fake, monkeypatch) -> None:
    calls = _counting(monkeypatch)
    opts = _opts(checks_memo=tmp_path / "memo.json", repeats=1)
    first = _run(tmp_path, "pass1", opts)
    n_variant, n_real = calls["variant"], calls["real"]
    assert n_variant == len([v for v in opts.all_variants if not v.is_reference]) == 4   # torch's row is no kernel
    assert n_real == len(opts.all_variants) == 5          # one real-workload call per variant of the profile
    kept = json.loads((tmp_path / "memo.json").read_text())
    assert set(kept["checks"]) == set(first.manifest()["checks"])
    assert first.manifest()["checks_memo"]["taken_from"] == {}
    second = _run(tmp_path, "pass2", opts)
    assert (calls["variant"], calls["real"]) == (n_variant, n_real)     # nothing checked again
    m = second.manifest()
    assert m["checks"] == first.manifest()["checks"]
    assert m["real_data_checks"] == first.manifest()["real_data_checks"]
    assert m["checks_memo"]["taken_from"] == {"checks": first.path.name, "real_data_checks": first.path.name}


@pytest.mark.parametrize("change", [{"uuid": "GPU-2"}, {"digest": "d2"}])
def test_another_gpu_or_other_sources_check_again(tmp_path, fake, monkeypatch, change) -> None:
    calls = _counting(monkeypatch)
    opts = _opts(checks_memo=tmp_path / "memo.json", repeats=1)
    _run(tmp_path, "pass1", opts)
    before = dict(calls)
    other = _run(tmp_path, "other", opts, **change)
    assert calls["variant"] == 2 * before["variant"] and calls["real"] == 2 * before["real"]
    assert other.manifest()["checks_memo"]["taken_from"] == {}


def test_other_options_make_another_key() -> None:
    a, b = _opts(checks_memo=Path("m.json")), _opts(checks_memo=Path("m.json"), rpf_depth=4)
    assert memo_key(_manifest(a)) != memo_key(_manifest(b))
    assert memo_key(_manifest(a)) == memo_key(_manifest(_opts(checks_memo=Path("m.json"))))


def test_a_damaged_file_checks_again_and_is_written_whole(tmp_path, fake, monkeypatch) -> None:
    calls = _counting(monkeypatch)
    memo = tmp_path / "memo.json"
    memo.write_text('{"key": "')
    _run(tmp_path, "pass1", _opts(checks_memo=memo, repeats=1))
    assert calls["variant"] > 0 and calls["real"] > 0
    assert json.loads(memo.read_text())["checks"]


def test_without_a_source_digest_nothing_is_kept(tmp_path, fake, monkeypatch) -> None:
    _counting(monkeypatch)
    memo = tmp_path / "memo.json"
    run = _run(tmp_path, "pass1", _opts(checks_memo=memo, repeats=1), digest=None)
    assert not memo.exists() and run.manifest()["checks_memo"]["key"] is None


def test_a_verdict_of_other_variants_is_not_taken(tmp_path) -> None:
    opts = _opts(checks_memo=tmp_path / "m.json")
    memo = CheckMemo.open(tmp_path / "m.json", _manifest(opts), "pass1")
    memo.keep("checks", {"artifact/baseline/element": {"sum": 0.0}})
    memo.keep("real_data_checks", {"artifact/baseline/element:random": 0.0})
    later = CheckMemo.open(tmp_path / "m.json", _manifest(opts), "pass2")
    assert later.checks(["artifact/baseline/element", "tuned/baseline/line"]) is None
    assert later.real(["artifact/baseline/element:random", "tuned/baseline/line:random"]) is None
    assert later.checks(["artifact/baseline/element"]) == {"artifact/baseline/element": {"sum": 0.0}}
    assert later.record()["taken_from"] == {"checks": "pass1"}


def test_a_failed_real_check_keeps_nothing_for_its_profile(tmp_path, fake, monkeypatch) -> None:
    _counting(monkeypatch)
    monkeypatch.setattr(checkmod, "check_real_data", lambda *a, **k: 0.5)
    memo = tmp_path / "memo.json"
    with pytest.raises(UserError, match="wrong on the random workload"):
        _run(tmp_path, "pass1", _opts(checks_memo=memo, repeats=1))
    assert "real_data_checks" not in json.loads(memo.read_text())


def test_each_ncu_job_of_a_profile_has_its_own_memo_file(tmp_path) -> None:
    argv = child_command(CFG, ["baseline"], ["random"], "natural", 2, tmp_path / "child", "sweep")
    assert argv[argv.index("--checks-memo") + 1] == str(tmp_path / "child" / "checks-memo-sweep.json")


def test_the_ladder_flag_reaches_the_options(tmp_path) -> None:
    from l2attr.cli import build_parser
    from l2attr.ladders.command import options_from_args

    args = build_parser().parse_args(["ladder", "--checks-memo", str(tmp_path / "m.json")])
    assert options_from_args(args).checks_memo == tmp_path / "m.json"
    assert options_from_args(build_parser().parse_args(["ladder"])).checks_memo is None


def _special(tmp_path: Path, what: str) -> Path:
    """A memo path that is deeply nested JSON, /dev/zero (through a link), or a FIFO."""
    path = tmp_path / "memo.json"
    if what == "deep":
        path.write_text("[" * 200_000 + "]" * 200_000)
    elif what == "zero":
        path.symlink_to("/dev/zero")
    else:
        import os
        os.mkfifo(path)
    return path


@pytest.mark.parametrize("what", ["deep", "zero", "fifo"])
def test_a_memo_that_is_deep_a_device_or_a_fifo_is_nothing_kept(tmp_path, what) -> None:
    """Issue 52: RecursionError on deep JSON, MemoryError on /dev/zero, a FIFO blocked the run."""
    path = _special(tmp_path, what)
    memo = CheckMemo.open(path, _manifest(_opts(checks_memo=path)), "pass1")
    assert memo.held == {} and memo.checks(["artifact/baseline/element"]) is None
    memo.keep("checks", {"artifact/baseline/element": {"sum": 0.0}})   # a special file is never written over
    assert path.is_symlink() or not path.is_file() or what == "deep"


@pytest.mark.parametrize("what", ["deep", "zero", "fifo"])
def test_a_special_memo_file_lets_the_checks_run(tmp_path, fake, monkeypatch, what) -> None:
    calls = _counting(monkeypatch)
    path = _special(tmp_path, what)
    run = _run(tmp_path, "pass1", _opts(checks_memo=path, repeats=1))
    assert calls["variant"] > 0 and calls["real"] > 0
    assert run.manifest()["checks_memo"]["taken_from"] == {}
