"""The tuning table's readers: `l2attr tuning FILE` and `l2attr ladder --tuning FILE`, both through
the table's contract, so a cut or damaged copy is refused instead of choosing another point."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pandas as pd
import pytest

from l2attr.ladders.tuning.table import choose
from l2attr.cli import main
from l2attr.ladders import command as ladder_cmd
from l2attr.ladders.tuning.table import tuned_flags
from l2attr.errors import UserError
from l2attr.ladders.tuning.table import read_tuning

from tests.conftest import EXAMPLES

TABLE = EXAMPLES / "tuning" / "fast_tuning.csv"
KNOB_FLAGS = ("fast_warps_per_bag", "fast_bags_per_block", "fast_unroll", "fast_load", "fast_maxrregcount")


def _row(profile: str, w: int, us: float, spread: float = 1.0, u: int = 4) -> dict:
    return {"profile": profile, "warps_per_bag": w, "bags_per_block": 2, "unroll": u, "load": 0,
            "maxrregcount": 0, "median_us": us, "spread_pct": spread}


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """Known by hand: w=1 geomean sqrt(40*10)=20, w=2 sqrt(30*20)=24.5 (22 % slower: outside the
    1 % spreads), w=4 sqrt(41*10)=20.2 (1.2 % slower, within its 2 % spread). Best on random: w=2
    (30 us); best on reuse: w=1 and w=4 tie at 10 us (the first listed, w=1, is shown)."""
    path = tmp_path / "small_tuning.csv"
    pd.DataFrame([_row("random", 1, 40.0), _row("reuse", 1, 10.0), _row("random", 2, 30.0), _row("reuse", 2, 20.0),
                  _row("random", 4, 41.0, spread=2.0), _row("reuse", 4, 10.0)]).to_csv(path, index=False)
    return path


def _out_lines(capsys) -> tuple[list[str], list[str]]:
    out, err = capsys.readouterr()
    return [ln for ln in out.splitlines() if ln.strip()], [ln for ln in err.splitlines() if ln.strip()]


def test_tuning_prints_the_choice_made_by_hand(small, capsys):
    assert main(["tuning", str(small)]) == 0
    out, err = _out_lines(capsys)
    assert err == []
    assert out[0] == f"{small}: 3 launch points x 2 profiles (random, reuse)"
    assert out[1].endswith("warps_per_bag 1, bags_per_block 2, unroll 4, load 0, maxrregcount 0")
    assert "geometric mean 20.00 us" in out[2]
    assert out[3] == "  random: median 40.00 us, per-repeat spread 1.0 %"
    assert any(ln.startswith("  random: warps_per_bag 2,") and "median 30.00 us" in ln for ln in out)
    assert any(ln.startswith("1 other points are slower") for ln in out)
    assert any("warps_per_bag 4" in ln and "(+1.2 %)" in ln for ln in out)
    assert out[-1].endswith("--fast-warps-per-bag 1 --fast-bags-per-block 2 --fast-unroll 4 --fast-load 0 "
                            "--fast-maxrregcount 0)")


def test_tuning_on_the_committed_table_names_its_choice(capsys):
    assert main(["tuning", str(TABLE)]) == 0
    out, _ = _out_lines(capsys)
    best = choose(read_tuning(TABLE))
    assert out[1].endswith(", ".join(f"{k} {v}" for k, v in best.items()))
    assert any(ln.startswith("l2attr's defaults (") for ln in out)


def _cut(tmp_path: Path, n: int = 150) -> Path:
    path = Path(shutil.copy(TABLE, tmp_path / "fast_tuning.csv"))
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-n]))
    return path


def test_a_cut_copy_is_refused_in_one_line(tmp_path, capsys):
    """choose() on the raw cut copy returns another launch point; the command refuses it."""
    cut = _cut(tmp_path)
    assert choose(pd.read_csv(cut)) != choose(pd.read_csv(TABLE))     # the damage this guards against
    assert main(["tuning", str(cut)]) == 2
    out, err = _out_lines(capsys)
    assert out == [] and len(err) == 1 and str(cut) in err[0] and "launch points per profile differ" in err[0]


def test_a_damaged_row_is_refused_or_with_allow_partial_named_first(tmp_path, capsys):
    path = Path(shutil.copy(TABLE, tmp_path / "fast_tuning.csv"))
    df = pd.read_csv(path)
    df.loc[7, "median_us"] = -1.0
    df.to_csv(path, index=False)
    assert main(["tuning", str(path)]) == 2
    _, err = _out_lines(capsys)
    assert len(err) == 1 and f"{path}:9: column median_us must be > 0" in err[0]
    # partial: the bad row goes, and with it its point on the other profile is one short, also named
    assert main(["tuning", str(path), "--allow-partial"]) == 0
    out, _ = _out_lines(capsys)
    assert out[0].startswith("PARTIAL (--allow-partial): ") and "median_us must be > 0" in out[0]


@pytest.mark.parametrize("argv, want", [
    (["tuning", "/nonexistent/t.csv"], "no such file"),
    (["tuning", str(TABLE), "--top", "-1"], "--top must be >= 0"),
])
def test_bad_arguments_are_one_line(argv, want, capsys):
    assert main(argv) == 2
    _, err = _out_lines(capsys)
    assert len(err) == 1 and want in err[0]


# -- ladder --tuning -------------------------------------------------------------------------------

def _ladder_args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    ladder_cmd.add_arguments(p)
    return p.parse_args(list(argv))


def _given(args: argparse.Namespace) -> dict:
    """The LadderOptions flags given (the rest are left out of the namespace)."""
    from l2attr.dlrm.measure.options import LadderOptions
    from l2attr.typed import dests

    return {k: v for k, v in vars(args).items() if k in dests(LadderOptions)}


def test_ladder_tuning_sets_the_fast_launch_point_to_the_tables_choice(small):
    flags = tuned_flags(small, {})
    assert [flags[k] for k in KNOB_FLAGS] == [1, 2, 4, 0, 0]
    shape = ladder_cmd.options_from_args(_ladder_args("--tuning", str(small))).shape
    assert (shape.fast_warps_per_bag, shape.fast_bags_per_block, shape.fast_unroll) == (1, 2, 4)


def test_ladder_without_tuning_keeps_its_defaults():
    assert tuned_flags(None, _given(_ladder_args())) == {}
    shape = ladder_cmd.options_from_args(_ladder_args()).shape
    assert shape.fast_unroll == 6


@pytest.mark.parametrize("extra, want", [
    (["--fast-unroll", "8"], "drop --fast-unroll"),
    (["--family", "artifact"], "does not run the fast family"),
])
def test_ladder_tuning_conflicts_are_refused(small, extra, want):
    args = _ladder_args("--tuning", str(small), *extra)
    with pytest.raises(UserError, match=want):
        tuned_flags(small, _given(args))


def test_ladder_tuning_with_a_cut_table_stops_before_the_gpu(tmp_path, capsys):
    cut = _cut(tmp_path)
    assert main(["ladder", "--tuning", str(cut), "--out", str(tmp_path / "runs")]) == 2
    _, err = _out_lines(capsys)
    assert len(err) == 1 and "launch points per profile differ" in err[0]
    assert not (tmp_path / "runs").exists()
