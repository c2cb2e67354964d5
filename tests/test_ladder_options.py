"""The ladder's one options model (dlrm/measure/options.py LadderOptions): its manifest section is
written from the model and read back as the same model, a damaged field is one line naming it and
its rule (a bad flag too: tests/test_cli_ladder.py), a resumed run is rebuilt from the model, and the
command's flags are the model's fields."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from helpers_rundirs import write_ladder_run
from l2attr.ladders import command as ladder_cmd
from l2attr.dlrm.declare import RUNG_BY_NAME
from l2attr.dlrm.measure.options import LadderOptions
from l2attr.errors import Damage, UserError
from l2attr.integrity.manifest import check_manifest
from l2attr.typed import dests, flat_fields
from l2attr.vocab import Family, Pin, TimerKind

EVERY_KIND = LadderOptions(
    rungs=[RUNG_BY_NAME["optmt"], RUNG_BY_NAME["l2p_optmt"], RUNG_BY_NAME["torch"]], profiles=["random"],
    families=[Family.TUNED], trace=Path("t/reuse.txt"), hot=Path("h.txt"), drop_out_of_range=True,
    l2_state="natural,flush", repeats=4, target_rel=0.01, min_repeats=2, max_repeats=9, max_seconds=2.5,
    pin_granularity=Pin.LINE, nvtx_calls=True, spin_us=0.0, timer=TimerKind.SPIN, host_repeat=False,
    cache_dir=Path("/c"), checks_memo=Path("m.json"), bandwidth=False, extra_cells=["tuned:l2p_optmt:random:flush"])


def test_the_section_is_written_from_the_model_and_read_back_as_it() -> None:
    written = json.loads(json.dumps(EVERY_KIND.manifest()))      # what manifest.json holds
    back = LadderOptions.from_manifest(written)
    assert back == EVERY_KIND and back.manifest() == written and back.model_extra == {}
    assert written["variants"] == [["tuned", "optmt", "none"], ["tuned", "l2p_optmt", "line"],
                                   ["reference", "torch", "none"]]
    assert written["rungs"] == ["optmt", "l2p_optmt", "torch"] and written["shape"]["block"] == [32, 8]


def test_the_committed_ladder_runs_read_as_the_model() -> None:
    from tests.conftest import EXAMPLES

    runs = [p for p in sorted(EXAMPLES.rglob("manifest.json"))
            if json.loads(p.read_text()).get("kind") == "ladder"]
    assert len(runs) >= 10
    for p in runs:
        measure = json.loads(p.read_text())["measure"]
        opts = LadderOptions.from_manifest(measure)
        assert opts.model_extra == {}, p
        again = opts.manifest()
        assert {k: again[k] for k in measure if k != "shape"} == {k: v for k, v in measure.items() if k != "shape"}, p


@pytest.mark.parametrize("field, value, line", [
    ("repeats", "3", "measure.repeats must be a whole number >= 1 and <= 1000000000 (found '3')"),
    ("repeats", 3.0, "measure.repeats must be a whole number"),
    ("spin_us", float("nan"), "measure.spin_us must be a finite number >= 0 and <= 1e+06 (found nan)"),
    ("max_seconds", float("inf"), "measure.max_seconds must be a finite number > 0"),
    ("nvtx_last", -1, "measure.nvtx_last must be a whole number >= 0"),
    ("repeats", 10 ** 12, "measure.repeats must be a whole number >= 1 and <= 1000000000 (found 1000000000000)"),
    ("families", ["turbo"], "measure.families must be a non-empty list of distinct words"),
    ("families", [], "measure.families must be a non-empty list"),
    ("timer", "slow", "measure.timer must be one of blocking, spin or null (found 'slow')"),
    ("l2_state", "", "measure.l2_state must be one or more of natural"),
    ("shape", {"block": [64, 64]}, "measure.shape.block must be positive x, y with x*y <= 1024 (found [64, 64])"),
    ("shape", {"fast_unroll": True}, "measure.shape.fast_unroll must be a whole number >= 1 and <= 16"),
    ("variants", [1.5], "measure.variants must be a list of lists of strings"),
    ("warp_speed", True, "measure.warp_speed must be a setting of the ladder's options (rungs, profiles,"),
])
def test_a_damaged_field_is_one_line_naming_it_and_its_rule(tmp_path: Path, field, value, line) -> None:
    m = json.loads((write_ladder_run(tmp_path) / "manifest.json").read_text())
    m["measure"][field] = value
    damage = Damage(allow_partial=True)
    check_manifest(m, tmp_path, damage)
    assert len(damage.messages) == 1 and line in damage.messages[0], damage.messages
    assert damage.messages[0].startswith(f"{tmp_path}/manifest.json: ")


def test_a_missing_section_is_one_line_and_a_missing_field_reads_as_its_default(tmp_path: Path) -> None:
    m = json.loads((write_ladder_run(tmp_path) / "manifest.json").read_text())
    del m["measure"]["extra_cells"], m["measure"]["nvtx_calls"]      # runs older than those fields
    check_manifest(m, tmp_path)
    assert LadderOptions.from_manifest(m["measure"]).extra_cells == []
    del m["measure"]
    with pytest.raises(UserError, match="measure is missing; every ladder run's writer records it"):
        check_manifest(m, tmp_path)


def test_a_resumed_run_is_rebuilt_from_the_model(tmp_path: Path) -> None:
    run = write_ladder_run(tmp_path)
    m = json.loads((run / "manifest.json").read_text())
    _, cfg, opts = ladder_cmd._resume(run)
    assert isinstance(opts, LadderOptions) and opts == LadderOptions.from_manifest(m["measure"])
    assert opts.manifest() == m["measure"] and cfg.to_dict() == m["config"]
    m["measure"]["warp_speed"] = True                       # kept by the model, never used: refused
    (run / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(UserError, match="measure.warp_speed must be a setting of the ladder's options"):
        ladder_cmd._resume(run)


def test_every_field_is_a_flag_and_every_flag_reaches_its_field(tmp_path: Path) -> None:
    p = argparse.ArgumentParser()
    ladder_cmd.add_arguments(p)
    flags = {a.dest: a for a in p._actions}
    for path, info in flat_fields(LadderOptions):
        cli = (info.json_schema_extra or {}).get("cli", True)
        assert (path[-1] in flags) == cli, path
        if cli:
            assert flags[path[-1]].default is argparse.SUPPRESS and flags[path[-1]].help
    assert set(vars(p.parse_args([]))) & dests(LadderOptions) == set()     # left out: the model's default
    args = p.parse_args(["--family", "tuned", "--rungs", "optmt,torch", "--no-bandwidth", "--grid", "512",
                         "--extra-cell", "tuned:optmt:random:flush", "--timer", "spin", "--repeats", "2"])
    opts = ladder_cmd.options_from_args(args)
    assert (opts.families, opts.bandwidth, opts.shape.grid, opts.extra_cells, opts.timer, opts.rule) == (
        [Family.TUNED], False, 512, ["tuned:optmt:random:flush"], TimerKind.SPIN, None)


def test_a_profiled_childs_options_are_checked_by_the_model_before_ncu(capsys: pytest.CaptureFixture[str]) -> None:
    from l2attr.cli import main

    assert main(["profile", "--dry-run", "--ladder-arg=--rpf-depth=0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["l2attr profile: error: --rpf-depth must be a whole number >= 1 and <= 64 (got 0)"]
