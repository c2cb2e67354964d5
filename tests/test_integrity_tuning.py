"""The committed tuning table read through its contract: whole, and refused when damaged (issue 20)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from l2attr.ladders.tuning.table import choose
from l2attr.errors import Damage, UserError
from l2attr.ladders.tuning.table import read_tuning

from tests.conftest import EXAMPLES

TABLE = EXAMPLES / "tuning" / "fast_tuning.csv"


def test_the_committed_table_is_whole_and_its_choice_unchanged() -> None:
    assert choose(read_tuning(TABLE)) == choose(pd.read_csv(TABLE))


def _copy(tmp_path: Path) -> Path:
    return Path(shutil.copy(TABLE, tmp_path / "fast_tuning.csv"))


def _edit(path: Path, edit) -> None:
    edit(pd.read_csv(path)).to_csv(path, index=False)


def test_a_cut_at_a_row_boundary_is_refused_not_a_new_choice(tmp_path: Path) -> None:
    """The issue's case: choose() on a cut copy returned another launch point."""
    path = _copy(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-100]))
    with pytest.raises(UserError, match="launch points per profile differ"):
        read_tuning(path)


@pytest.mark.parametrize("edit, want", [
    (lambda df: pd.concat([df, df.iloc[[3]]]), "a repeated row"),
    (lambda df: df.assign(median_us=df["median_us"].where(df.index != 4, -1.0)), ":6: column median_us must be > 0"),
    (lambda df: df.assign(median_us=df["median_us"].where(df.index != 4, 1e300)), "is above 1e+07"),
    (lambda df: df.assign(unroll=df["unroll"].astype(float).where(df.index != 2, 4.5)), ":4: column unroll must be a whole"),
    (lambda df: df.assign(spread_pct=df["spread_pct"].where(df.index != 2, -3.0)), "spread_pct must be >= 0"),
    (lambda df: df.drop(columns=["median_us"]), "missing columns: median_us"),
])
def test_damaged_rows_are_one_line(tmp_path: Path, edit, want: str) -> None:
    path = _copy(tmp_path)
    _edit(path, edit)
    with pytest.raises(UserError) as err:
        read_tuning(path)
    assert want in str(err.value) and str(path) in str(err.value)


def test_allow_partial_drops_the_bad_row_and_says_so(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    _edit(path, lambda df: pd.concat([df, df.iloc[[3]]]))
    damage = Damage(allow_partial=True)
    assert len(read_tuning(path, damage)) == len(pd.read_csv(TABLE))
    assert len(damage.messages) == 1
